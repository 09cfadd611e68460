// The builtin backend's GEMM family: linear / matmul / mm / bmm / addmm with a fused element-wise
// epilogue (templates/gemm/). Structures (stage 1):
//   lt_native   cuBLASLt with the epilogue it computes natively (alpha, bias, relu, gelu(tanh))
//   lt_epilogue cuBLASLt plain matmul into the output, then one fused in-place epilogue kernel
//   cublas      cuBLAS's GEMM entry point (cublasGemmEx), PyTorch's own route for mm/bmm, then
//               the same in-place epilogue kernel: the floor where cuBLAS's kernel choice beats
//               cuBLASLt's heuristic
//   tc          an own fp16/bf16 tensor-core GEMM (WMMA, cp.async multi-stage), epilogue in
//   registers
//   x3          an own fp32 GEMM in 3xTF32 split precision (mma.sync m16n8k8, cp.async
//               multi-stage), epilogue in registers; only with PRECISION fp32x3, proposed first
//   wgx3        the same split on Hopper's warpgroup instruction (wgmma m64nNk8 from shared
//               memory, sm_90a): in place of x3 where every target arch is sm_90a
//   wg          an own fp16/bf16 GEMM on wgmma (m64nNk16 from shared memory, sm_90a) for a B
//               stored [N][K] (nn.Linear's weight), proposed first where every arch is sm_90a
//   skinny      an own GEMV-like kernel for at most 16 rows (a recurrent step, decoding) and a B
//               stored [N][K]: it streams B once, split over columns and K, epilogue in registers;
//               proposed first for such shapes (cuBLASLt's library floor second)
// Stage 2 tunes the cuBLASLt heuristic algo index, or the own kernels' tiles and stages.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/builtin/family.h"
#include "backend/builtin/op_table.h"
#include "backend/builtin/planned_family.h"
#include "render/template.h"

namespace egg::backend::builtin {

// The GEMM of a spec in row-major terms: out[batch][M][N] = A[batch][M][K] · B (+ epilogue).
struct GemmProblem {
  const spec::Node* anchor = nullptr;
  std::string a;      // spec name of A (input or param)
  std::string b;      // spec name of B
  bool b_nk = false;  // B stored [N, K] (nn.Linear's weight, used transposed), else [K, N]
  bool a_km = false;  // A stored [K, M] (`A.T`, `a.transpose(-2, -1)`), else [M, K]
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  spec::DType dtype = spec::DType::float32;
  std::string bias;    // linear's bias or addmm's input (spec name), empty when none
  double alpha = 1.0;  // addmm: alpha * (A·B)
  double beta = 1.0;   // addmm: beta * input
  std::vector<const spec::Node*> epilogue;  // element-wise nodes after the anchor, in order
  spec::Shape out_shape;
};

// What cuBLASLt can compute itself: D = act(alpha * A·B + bias).
struct GemmNativeEpilogue {
  double alpha = 1.0;
  std::string bias;  // spec name of a [N] vector of the output dtype, or empty
  // Spec name of a tensor of the output's shape and dtype added before the activation (a
  // residual: cuBLASLt's C with beta 1, read in the GEMM's epilogue), or empty.
  std::string residual;
  std::string activation;  // "", "relu" or "gelu_tanh"
};

// Tunable parameters of the GEMM templates.
struct GemmParams {
  std::string structure =
      "lt_epilogue";  // lt_native | lt_epilogue | cublas | tc | x3 | wgx3 | wg | skinny
  int algo = 0;       // cuBLASLt: index into the heuristic's ranked algos
  int splitk =
      0;  // cuBLASLt: 0 = as the heuristic configured the algo, else K split this many ways
  int epilogue_block = 256;  // lt_epilogue, cublas: threads per block of the epilogue kernel
  bool wide = false;  // lt_epilogue of fp16/bf16: the GEMM's result in fp32 for the epilogue pass
  bool tf32 = false;  // fp32 on TF32 tensor cores (only with PRECISION tf32)
  // tc, x3, wgx3: block tile, warps, pipeline stages (wgx3: a warpgroup per 64 rows of bm, bk 32)
  int bm = 128, bn = 128, bk = 32, warps_m = 2, warps_n = 4, stages = 3;
  int min_blocks = 1;  // __launch_bounds__ minimum blocks per SM (2 caps registers at 128/thread)
  int fold = 1;        // x3: k-steps of 8 summed inside the tensor cores before a rounded add
  int inflight = 1;    // wgx3: wgmma groups in flight (2: the next tile's products queued)
  int kwarps = 1;      // skinny: warps splitting each column group's K (1, 2, 4 or 8)
  int cols = 2;        // skinny: columns a warp computes (the A values it loads serve them all)
  nlohmann::json to_json() const;
  static GemmParams from_json(const nlohmann::json& j);
};

// The GEMM problem of `spec` (gemm_plan.cpp): its one linear/matmul/bmm/addmm, the transposed
// leaves it reads as operands, its shape and bias, the element-wise epilogue of `ops` after it and
// its one output; or the UserError naming the op and its line.
std::variant<GemmProblem, UserError> plan_gemm(const spec::Spec& spec, const OpTable& ops);

class GemmFamily : public PlannedFamily<GemmProblem, GemmParams> {
 public:
  // `precision`: "default" (PyTorch's: fp32 without TF32), "tf32", "bf16" or "fp32x3" (opted in
  // with PRECISION); `wgmma`: every target arch has Hopper's wgmma (sm_90a).
  explicit GemmFamily(const std::filesystem::path& data_dir, std::string precision = "default",
                      bool wgmma = false);

  std::string name() const override { return "gemm"; }
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;
  // The problem, or the reason it is not one this family takes (names op and line).
  std::variant<GemmProblem, UserError> analyze(const spec::Spec& spec) const override;
  Candidate render(const spec::Spec& spec, const contract::Contract& contract,
                   const GemmProblem& problem, const GemmParams& params) const override;

  // The epilogue as cuBLASLt computes it natively, or nullopt when it cannot.
  static std::optional<GemmNativeEpilogue> native_epilogue(const spec::Spec& spec,
                                                           const GemmProblem& p);
  // Why the own tensor-core kernel cannot run this problem with these parameters, or nullopt.
  static std::optional<std::string> tc_unsupported(const GemmProblem& p, const GemmParams& params);
  // Why the own 3xTF32 kernel cannot run this problem with these parameters, or nullopt.
  static std::optional<std::string> x3_unsupported(const GemmProblem& p, const GemmParams& params);
  // Why the own fp16/bf16 wgmma kernel cannot run this problem with these parameters, or nullopt.
  static std::optional<std::string> wg_unsupported(const GemmProblem& p, const GemmParams& params);
  // Why the own 3xTF32 wgmma kernel cannot run this problem with these parameters, or nullopt.
  static std::optional<std::string> wgx3_unsupported(const GemmProblem& p,
                                                     const GemmParams& params);
  // Why the own skinny (few-row) kernel cannot run this problem with these parameters, or nullopt.
  static std::optional<std::string> skinny_unsupported(const GemmProblem& p,
                                                       const GemmParams& params);

 protected:
  std::vector<GemmParams> structure_params(const spec::Spec& spec,
                                           const contract::Contract& contract,
                                           const GemmProblem& problem) const override;
  std::vector<GemmParams> tuning_params(const spec::Spec& spec, const contract::Contract& contract,
                                        const GemmProblem& problem, const GemmParams& incumbent,
                                        const std::string& bottleneck) const override;
  std::optional<GemmParams> fallback_params(const spec::Spec& spec,
                                            const contract::Contract& contract,
                                            const GemmProblem& problem,
                                            const GemmParams& failed) const override;

 private:
  // The split-precision structure this family proposes under PRECISION fp32x3 (wgx3 where every
  // arch is sm_90a, else x3), its default and its tuning space; nullopt when it cannot run `p`.
  std::optional<GemmParams> split_default(const GemmProblem& p) const;
  std::vector<GemmParams> split_tuning_space(const GemmProblem& p) const;

  std::string precision_;
  bool wgmma_;
  OpTable ops_;
  render::Template lt_;
  render::Template lt_launch_;
  render::Template cublas_;
  render::Template epilogue_pass_;
  render::Template tc_;
  render::Template tc_launch_;
  render::Template x3_;
  render::Template wgx3_;
  render::Template wg_;
  render::Template skinny_;
  render::Template epilogue_;
  render::Template keep_pool_;  // the stream-ordered memory kept between calls (templates/common/)
};

// Stage-2 tile configurations of the own tensor-core kernel, best prior first.
std::vector<GemmParams> gemm_tc_tuning_space(const GemmProblem& p);
// The own 3xTF32 kernel's stage-1 configuration and its stage-2 tile configurations, best prior
// first.
GemmParams gemm_x3_default();
std::vector<GemmParams> gemm_x3_tuning_space(const GemmProblem& p);
// The stage-1 configuration and stage-2 tiles of the own fp16/bf16 wgmma kernel.
GemmParams gemm_wg_default();
std::vector<GemmParams> gemm_wg_tuning_space(const GemmProblem& p);
// The same for the wgmma (sm_90a) 3xTF32 kernel.
GemmParams gemm_wgx3_default();
std::vector<GemmParams> gemm_wgx3_tuning_space(const GemmProblem& p);
// The skinny kernel's rows limit, its stage-1 configuration for `p` (the first in the measured
// order whose grid gives every SM a block, gpu_target.h; nullopt where it cannot run `p`) and its
// other configurations for stage 2, in that order.
inline constexpr std::int64_t kSkinnyMaxRows = 16;
std::optional<GemmParams> gemm_skinny_default(const GemmProblem& p);
std::vector<GemmParams> gemm_skinny_tuning_space(const GemmProblem& p);
// The K slices of a wgx3 kernel of bm x bn tiles for `p` (1: one running sum per block).
int wgx3_splits(const GemmProblem& p, int bm, int bn);

// cuBLASLt's ranked algos the template asks the heuristic for, and how many of them stage 1 and 2
// measure between them (index 0 in stage 1, the rest in stage 2).
inline constexpr int kLtAlgoRequest = 16;
inline constexpr int kLtAlgoTuned = 8;
// Stage 2's cuBLASLt candidates after `incumbent`: the heuristic's next ranked algos, and K split
// several ways where the output tiles alone do not fill the GPU.
std::vector<GemmParams> gemm_lt_tuning_space(const GemmProblem& p, const GemmParams& incumbent);

}  // namespace egg::backend::builtin
