// The builtin backend's attention family: ONE F.scaled_dot_product_attention of fp16, bf16 or fp32
// query, key and value (templates/attention/): the flash-attention kernel, scores and softmax on
// chip, never the [L][S] weights in memory; on tensor cores for fp16/bf16 (flash.cuh.tmpl on
// mma.sync; where every target arch is sm_90a also flash_wg.cuh.tmpl on wgmma, head dims 64 and
// 128), on CUDA cores in exact fp32 for float32 (simt.cuh.tmpl, head dims up to 64). A bool or
// float mask broadcasting to [..., L, S], causality and a scale are applied to the scores; the
// output is written as it is or, for a 4-d attention whose result the graph transposes (1, 2) (the
// heads merged back), in that layout.
//
// The lowered math (lowering.h: matmul, softmax, matmul) is the other plan of the same graph: the
// backend proposes both and measurement decides (BuiltinBackend::plans).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "backend/builtin/planned_family.h"
#include "render/template.h"

namespace egg::backend::builtin {

// Query, key or value: a tensor the kernel reads, as it is or through a strided view of it.
struct AttentionOperand {
  std::string tensor;                 // an input of the sub-spec
  spec::Shape shape;                  // [batch..., rows, E]
  std::vector<std::int64_t> strides;  // elements per step along each dim (the last 1)
  std::int64_t offset = 0;            // the first element's
  // Where a reshape regrouped the leading dims (repeat_interleave of the heads): those dims as
  // (size, stride) digits, row-major, over the query's batch entries; else empty (the leading
  // dims' strides, aligned with the query's).
  std::vector<std::pair<std::int64_t, std::int64_t>> batch;
  std::int64_t group = 1;  // enable_gqa: query heads per key/value head (dim -3)
};

// What the graph is, in the terms of the flash template.
struct AttentionPlan {
  const spec::Node* anchor = nullptr;
  AttentionOperand q, k, v;
  std::string mask;  // the mask tensor, or empty
  spec::DType dtype = spec::DType::float16;
  spec::DType mask_dtype = spec::DType::boolean;
  std::vector<std::int64_t> batch_dims;  // q's dims before the last two
  std::int64_t l = 0, s = 0, e = 0;      // query rows, key rows, head dim
  bool causal = false;
  double scale = 1.0;
  std::int64_t out_heads = 0;  // > 0: the output is transpose(1, 2) of [B][H][L][E], H = out_heads
  std::int64_t mask_stride_l = 0,
               mask_stride_s = 0;                // the mask's strides along L and S (0: broadcast)
  std::vector<std::int64_t> mask_batch_strides;  // per batch dim (0: broadcast)
  std::int64_t batch() const;
  std::int64_t padded_e() const { return (e + 15) / 16 * 16; }
};

// The plan of a spec, or why the attention family cannot implement it (naming op and line).
std::variant<AttentionPlan, UserError> plan_attention(const spec::Spec& spec);

// Tunable parameters of the flash template.
struct AttentionParams {
  int mt = 1;       // m-tiles of 16 query rows per warp
  int warps = 4;    // warps per block (BQ = warps * mt * 16 query rows)
  int bk = 64;      // keys per tile
  bool qs = false;  // Q's fragments read from shared memory per key tile (FlashAttention-2's way)
  // fp32 on CUDA cores (simt.cuh.tmpl): `split` lanes per query row, each every split-th key,
  // BQ = warps * 32 / split (mt, qs unused)
  bool simt = false;
  int split = 1;
  // > 0: the wgmma kernel (flash_wg.cuh.tmpl, sm_90a), `wgs` warpgroups of 64 query rows a block
  // (mt, warps, qs unused)
  int wgs = 0;
  bool pipe = false;  // wgmma: tile j's scores beside tile j - 1's P V (FlashAttention-3's overlap)
  nlohmann::json to_json() const;
  static AttentionParams from_json(const nlohmann::json& j);
};

// The attention family.
class AttentionFamily : public PlannedFamily<AttentionPlan, AttentionParams> {
 public:
  // `wgmma`: every target arch is sm_90a, so the wgmma kernel is proposed too.
  explicit AttentionFamily(const std::filesystem::path& data_dir, bool wgmma = false);

  std::string name() const override { return "attention"; }
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;
  std::variant<AttentionPlan, UserError> analyze(const spec::Spec& spec) const override;
  Candidate render(const spec::Spec& spec, const contract::Contract& contract,
                   const AttentionPlan& plan, const AttentionParams& params) const override;

 protected:
  std::vector<AttentionParams> structure_params(const spec::Spec& spec,
                                                const contract::Contract& contract,
                                                const AttentionPlan& plan) const override;
  std::vector<AttentionParams> tuning_params(const spec::Spec& spec,
                                             const contract::Contract& contract,
                                             const AttentionPlan& plan,
                                             const AttentionParams& incumbent,
                                             const std::string& bottleneck) const override;
  std::optional<AttentionParams> fallback_params(const spec::Spec& spec,
                                                 const contract::Contract& contract,
                                                 const AttentionPlan& plan,
                                                 const AttentionParams& failed) const override;

 private:
  render::Template common_, kernel_, simt_, wg_, launch_;
  bool wgmma_;
};

}  // namespace egg::backend::builtin
