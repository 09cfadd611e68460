// The builtin backend's pool family: [element-wise prologue] → ONE max_pool{1,2,3}d or
// avg_pool{1,2,3}d over a contiguous N C (D) (H) W tensor → [element-wise epilogue], one thread per
// output element (or a few along W), the window loop unrolled (templates/pool/).
//
// Semantics follow ATen: max pooling pads with -inf and propagates NaN; average pooling divides by
// divisor_override, else by the window clipped to the padded input (count_include_pad) or to the
// input; output sizes from pooling_output_shape (ceil_mode: the last window starts inside the input
// or the left padding). Accumulation in fp32.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "backend/backend.h"
#include "backend/builtin/family.h"
#include "backend/builtin/op_table.h"
#include "backend/builtin/planned_family.h"
#include "render/template.h"

namespace egg::backend::builtin {

// ATen's pooling_output_shape: output length of one pooled dim (may be < 1 for a bad config).
std::int64_t pool_output_size(std::int64_t in, std::int64_t kernel, std::int64_t pad,
                              std::int64_t stride, std::int64_t dilation, bool ceil_mode);

// What the graph is, in the terms of the pool template. Spatial arrays are (D, H, W); a 1D or 2D
// pool has size-1 leading spatial dims with kernel 1, stride 1, padding 0.
struct PoolPlan {
  const spec::Node* anchor = nullptr;
  bool max = true;                  // max pool, else average pool
  int dims = 2;                     // 1, 2 or 3 spatial dims
  std::string input;                // the value the pool reads (leaf or prologue node)
  spec::Shape in_shape, out_shape;  // the pool's input and output shapes
  std::int64_t planes = 1;          // product of the non-spatial leading dims (N*C)
  std::array<std::int64_t, 3> in{1, 1, 1}, out{1, 1, 1};
  std::array<std::int64_t, 3> kernel{1, 1, 1}, stride{1, 1, 1}, pad{0, 0, 0}, dilation{1, 1, 1};
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::int64_t divisor = 0;                 // divisor_override, 0 when none
  std::vector<const spec::Node*> prologue;  // element-wise ops computing the pool's input
  std::vector<const spec::Node*> epilogue;  // element-wise ops after the pool
  std::int64_t window() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// Input columns one thread's `opt` windows span along W.
inline std::int64_t pool_span(const PoolPlan& plan, int opt) {
  return (opt - 1) * plan.stride[2] + (plan.kernel[2] - 1) * plan.dilation[2] + 1;
}

// The output tile of the tiled structure (PoolParams::tile): `h` x `w` outputs of one plane
// (2-d: w a multiple of 32 up to 128, h up to 32; 1-d: h 1, w up to 1024), sized so that its
// input tile and the tile reduced along W fit `bytes` of static shared memory; nullopt for a plan
// it does not take (3-d; 2-d windows that do not overlap along H, where every input row is read
// for one output row anyway; 1-d windows that do not overlap).
struct PoolTile {
  std::int64_t h = 0, w = 0, bytes = 0;
};
std::optional<PoolTile> pool_tile(const PoolPlan& plan);

// The plan of a spec, or why the pool family cannot implement it (naming op and line).
std::variant<PoolPlan, UserError> plan_pool(const spec::Spec& spec, const OpTable& ops);

// Whether `op` is a pool op the pool family implements (max/avg, adaptive ones too).
bool is_pool_op(const std::string& op);
// The window of pool node `an` into `plan` (anchor, kind, input, shapes, options, geometry; no
// prologue or epilogue), or why the pool family cannot implement it (naming op and line). Adaptive
// pools where each output size divides its input size.
std::optional<UserError> plan_pool_window(const spec::Spec& spec, const spec::Node& an,
                                          PoolPlan& plan);

// Tunable parameters of the pool template.
struct PoolParams {
  int block = 256;         // threads per block
  int opt = 1;             // consecutive outputs along W per thread
  bool unroll = true;      // unroll the window loops fully (small windows)
  bool vectorized = true;  // 16-byte stores of a thread's outputs when opt*elem == 16 bytes
  // opt > 1: each window row's input span along W read once into registers for the opt windows
  bool reuse = false;
  // 2-d windows overlapping along H: a block per tile of outputs, its input tile read once into
  // shared memory and reduced separably (along W, then H); opt 1, no reuse (pool_tile says how big)
  bool tile = false;
  nlohmann::json to_json() const;
  static PoolParams from_json(const nlohmann::json& j);
};

// The pool family.
class PoolFamily : public PlannedFamily<PoolPlan, PoolParams> {
 public:
  explicit PoolFamily(const std::filesystem::path& data_dir);

  std::string name() const override { return "pool"; }
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;
  std::variant<PoolPlan, UserError> analyze(const spec::Spec& spec) const override;
  Candidate render(const spec::Spec& spec, const contract::Contract& contract, const PoolPlan& plan,
                   const PoolParams& params) const override;

 protected:
  std::vector<PoolParams> structure_params(const spec::Spec& spec,
                                           const contract::Contract& contract,
                                           const PoolPlan& plan) const override;
  std::vector<PoolParams> tuning_params(const spec::Spec& spec, const contract::Contract& contract,
                                        const PoolPlan& plan, const PoolParams& incumbent,
                                        const std::string& bottleneck) const override;
  std::optional<PoolParams> fallback_params(const spec::Spec& spec,
                                            const contract::Contract& contract,
                                            const PoolPlan& plan,
                                            const PoolParams& failed) const override;

 private:
  OpTable ops_;
  render::Template kernel_, launch_;
};

// Stage-1 structures and stage-2 parameter sets for a plan (every set valid for it).
std::vector<PoolParams> pool_structures(const PoolPlan& plan, int out_elem_size);
std::vector<PoolParams> pool_tuning_space(const PoolPlan& plan, int out_elem_size,
                                          const PoolParams& incumbent,
                                          const std::string& bottleneck);

}  // namespace egg::backend::builtin
