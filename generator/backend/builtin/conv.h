// The builtin backend's convolution family: ONE conv{1,2,3}d or conv_transpose{1,2,3}d over
// contiguous N C (D) (H) W tensors (strided, padded incl. 'same'/'valid', dilated, grouped,
// depthwise, with or without bias) → [element-wise epilogue] (templates/conv/). Structures:
//   igemm      implicit GEMM on tensor cores (WMMA): M = N*OD*OH*OW output pixels, N =
//   C_out/groups,
//              K = C_in/groups*KD*KH*KW; fp16/bf16 with fp32 accumulation, fp32 as TF32 (PyTorch's
//              default for convolutions: torch.backends.cudnn.allow_tf32) or as 3xTF32 (split
//              precision, fp32-accurate); zero padding and every tile edge by bounds checks
//   direct     exact fp32 CUDA-core kernel: a thread computes CO output channels x OPT outputs
//   along
//              W (depthwise and small channel counts)
//   tiled      exact fp32 CUDA-core kernel through shared memory for a short reduction (C_in/groups
//              x window <= kTiledMaxK): a block's weights and each output row's input rows in
//              shared memory, a warp per CO output channels x 32*OPT outputs along W, ROWS rows
//              per block; the output written once (memory-bound where a library call plus a pass
//              writes it twice)
//   transpose  conv_transpose as a direct gather kernel (exact fp32 accumulation)
//   cudnn      cuDNN's convolution through its graph API (forward, or backward-data for
//              conv_transpose; an engine configuration its heuristics rank, TF32 allowed for fp32
//              as under PyTorch's defaults) into the output, then
//              one in-place element-wise pass for bias and epilogue; symmetric padding only
// Bias and the epilogue run on the fp32 accumulator before the one rounding to the output dtype.
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
#include "backend/builtin/pool.h"
#include "backend/builtin/reduction_ops.h"
#include "render/template.h"

namespace egg::backend::builtin {

// True for conv1d/2d/3d and conv_transpose1d/2d/3d (the family's anchors).
bool is_convolution(const std::string& op);

// Output length of one convolved dim (ATen's formula; `pad_total` is both sides together).
std::int64_t conv_output_size(std::int64_t in, std::int64_t kernel, std::int64_t pad_total,
                              std::int64_t stride, std::int64_t dilation);
// Output length of one dim of a transposed convolution.
std::int64_t conv_transpose_output_size(std::int64_t in, std::int64_t kernel, std::int64_t pad,
                                        std::int64_t stride, std::int64_t dilation,
                                        std::int64_t output_padding);

// What a reduction fused after a convolution reduces: its output channels (dim 1), or every
// spatial dim (dims 2.., a global pooling) for each batch entry and channel.
enum class ConvReductionAxis { channels, spatial };

// A reduction that the convolution's kernels compute from its result (cross-anchor fusion: the
// full-size result is never written in NC(D)HW). Over the channels, the implicit GEMM's block
// tile holds every channel of its pixels, and cuDNN's channels-last result holds them as one
// contiguous row per pixel; over the spatial dims, cuDNN's channels-last result is read along
// the channels, a column per channel. Its reducer and expressions are the reduction family's table
// (templates/reduction/anchors.json) with R = the reduced length.
struct ConvReduction {
  const spec::Node* node = nullptr;  // the reduction (its values; never its indices)
  ConvReductionAxis axis = ConvReductionAxis::channels;
  bool normalize = false;  // softmax/log_softmax (channels only): every element from the state
  std::string reducer, in_expr, row_expr, element_expr;
  // its value's shape: [N, 1, spatial...] or [N, spatial...] over the channels, [N, C, 1...] or
  // [N, C] over the spatial dims; normalize: the output's
  spec::Shape shape;
  std::vector<const spec::Node*> post;   // element-wise ops after it, on `shape`
  std::vector<std::string> value_names;  // the reduction's value and getitem(.., 0) of it
  bool spatial() const { return axis == ConvReductionAxis::spatial; }
};

// A pool that runs on the convolution's result (cross-anchor fusion: cuDNN's channels-last result
// read a row of channels per window element, the full-size result never transposed back nor
// written): its window (pool.h; no prologue or epilogue there), then element-wise ops on its
// value.
struct ConvPool {
  PoolPlan window;
  std::vector<const spec::Node*> post;   // element-wise ops after it, on window.out_shape
  std::vector<std::string> value_names;  // the pool's value
};

// A group, instance or batch norm on the convolution's result (cross-anchor fusion after cuDNN).
// With batch statistics, after cuDNN's channels-last result: a pass reads that result along the
// channels into (count, mean, M2) per batch entry, channel and span of positions, a second merges
// them into each statistic's mean and rstd, and the one pass that transposes the result back to
// NC(D)HW normalizes it on the way, so the result is transposed back once and the norm reads no
// NC(D)HW copy. A statistic covers `group_c` consecutive channels of one batch entry (instance
// norm: 1, group norm: C / groups), or one channel of every batch entry (`across`: batch norm).
// With running statistics (eval mode: `running_mean` set), a per-channel affine map that cuDNN's
// element-wise pass applies in either layout (conv, BN, ReLU as one library call and one pass).
// A layer or RMS norm over trailing spatial dims (`row_len` positions: a row per batch entry,
// channel and leading position) from one slab of cuDNN's channels-last result per block (those
// positions x every channel, contiguous), normalized in shared memory and written back to
// NC(D)HW: the result read once and written once; its affine tensors are indexed by position.
struct ConvNorm {
  const spec::Node* node = nullptr;
  std::int64_t group_c = 1;
  bool across = false;
  double eps = 1e-5;
  std::string weight, bias;               // affine tensors of C elements (spec names; empty: none)
  std::string running_mean, running_var;  // eval mode's statistics (empty: batch statistics)
  std::int64_t row_len = 0;               // a layer/RMS norm's row (0: a group/instance/batch norm)
  bool center = true;                     // subtract the mean (false for an RMS norm)
  bool running() const { return !running_mean.empty(); }
  bool rows() const { return row_len > 0; }
  std::vector<const spec::Node*> post;   // element-wise ops after it, on the output's shape
  std::vector<std::string> value_names;  // the norm's value
  // Statistics per batch entry (0 when one statistic spans the batch).
  std::int64_t keys_per_entry(std::int64_t c_out) const { return across ? 0 : c_out / group_c; }
};

// What the graph is, in the terms of the conv templates. Spatial arrays are (D, H, W); a 1D or 2D
// convolution has size-1 leading spatial dims with kernel 1, stride 1, padding 0, dilation 1.
struct ConvPlan {
  const spec::Node* anchor = nullptr;
  bool transposed = false;
  int dims = 2;                              // 1, 2 or 3 spatial dims
  std::string input, weight, bias;           // spec names (bias empty when none)
  spec::DType dtype = spec::DType::float32;  // of input, weight, bias and the conv's result
  spec::Shape in_shape, weight_shape, out_shape;
  std::int64_t batch = 1, c_in = 1, c_out = 1, groups = 1;
  std::array<std::int64_t, 3> in{1, 1, 1}, out{1, 1, 1};
  std::array<std::int64_t, 3> kernel{1, 1, 1}, stride{1, 1, 1}, dilation{1, 1, 1};
  std::array<std::int64_t, 3> pad{0, 0, 0};  // left (leading) padding; the right side is implied
  std::vector<const spec::Node*> epilogue;   // element-wise ops after the conv
  std::optional<ConvReduction> reduction;    // then a reduction (fusing family only)
  std::optional<ConvPool> pool;              // or a pool (fusing family only)
  std::optional<ConvNorm> norm;              // or a norm (fusing family only)
  std::int64_t cin_per_group() const { return c_in / groups; }
  std::int64_t cout_per_group() const { return c_out / groups; }
  std::int64_t window() const { return kernel[0] * kernel[1] * kernel[2]; }
  bool depthwise() const { return groups > 1 && cin_per_group() == 1; }
  // The implicit GEMM's sizes (forward convolution).
  std::int64_t gemm_m() const { return batch * out[0] * out[1] * out[2]; }
  std::int64_t gemm_n() const { return cout_per_group(); }
  std::int64_t gemm_k() const { return cin_per_group() * window(); }
};

// The plan of a spec, or why the conv family cannot implement it (naming op and line). With
// `fuse` (the reduction family's table), the spec must be a convolution, element-wise ops, one
// reduction over the output channels or the spatial dims, one pool or one norm, and element-wise
// ops after it (plan_conv_fused); `channels_last_library` says cuDNN's channels-last result can
// feed it.
std::variant<ConvPlan, UserError> plan_conv(const spec::Spec& spec, const OpTable& ops,
                                            const ReductionOps* fuse = nullptr,
                                            bool channels_last_library = false);

// Most floats of a layer/RMS norm's block in its 48 KiB of static shared memory: the slab (rows x
// (channels + 1), padded against bank conflicts) and each row's mean and rstd (2 x channels).
inline constexpr std::int64_t kMaxNormSlab = 12 * 1024;

// The epilogue of `plan`'s convolution that ends in a reduction over its output channels or over
// its spatial dims, a pool or a norm: fills plan.epilogue and plan.reduction, plan.pool or
// plan.norm, or says why the graph is not one (naming op and line). Over the channels, the
// implicit GEMM takes an ungrouped forward convolution of at most one tile's channels; with
// `channels_last_library` (cuDNN at hand) any batched one, transposed and grouped too, the
// spatial dims, pools and group, instance and batch norms with batch statistics as well.
std::optional<UserError> plan_conv_fused(const spec::Spec& spec, const OpTable& ops,
                                         const ReductionOps& table, ConvPlan& plan,
                                         bool channels_last_library = false);

// Tunable parameters of the conv templates.
struct ConvParams {
  std::string structure = "igemm";  // igemm | tiled | direct | transpose | cudnn
  std::string math = "tf32";        // igemm on fp32: tf32 | 3xtf32 (ignored for fp16/bf16)
  // igemm: block tile and warps (threads = warps_m * warps_n * 32)
  int bm = 128, bn = 64, bk = 32, warps_m = 4, warps_n = 2;
  int min_blocks = 1;  // __launch_bounds__ minimum blocks per SM (2 caps registers for occupancy)
  // 2: two shared stages filled from registers; 3-4 (fp32 only): that many stages filled by
  // cp.async, the global loads of later tiles in flight during the current tile's MMAs
  int stages = 2;
  // direct / transpose / tiled: threads per block, outputs along W and output channels per thread
  int block = 256, opt = 1, co = 1;
  // tiled: consecutive output rows per block (its weights loaded into shared memory once), and
  // whether lane l takes outputs l*OPT.. along W (its inputs read as float4s once per row; stride
  // and dilation 1, OPT 4) instead of l, l+32, ..
  int rows = 1;
  bool consec = false;
  // cudnn: rank in cuDNN's heuristic list of the engines that fit (modes A, B, then the fallback),
  // and whether cuDNN computes channels-last (the input, weight and result transposed in the call)
  int algo = 0;
  bool nhwc = false;
  // cudnn channels-last with an epilogue pass: the output positions a block of the pass writes
  // per channel (32, 64, 128 or 256: a longer contiguous run per channel, fewer blocks' row ends)
  int span = 32;
  // ... and whether it reads the result 16 bytes at a time along the channels (a full tile of 32
  // channels; fewer load instructions than a lane a channel)
  bool vload = false;
  // ... and its channels a block: 32, or 16 with the positions the grid's fastest index (the tile
  // torch.compile's own transposing pass takes, 16 x 256 on 8 warps)
  int tile_c = 32;
  nlohmann::json to_json() const;
  static ConvParams from_json(const nlohmann::json& j);
};

// The tiled structure's longest reduction (a group's input channels x window): beyond it the
// convolution is compute-bound on CUDA cores and tensor cores win (on the H100 the tiled kernel
// ran 25-30 TFLOP/s: level1/63's 144-long reduction took 20.4 ms against cuDNN's 7.1).
inline constexpr std::int64_t kTiledMaxK = 96;

// The channel reduction over cuDNN's channels-last result. A softmax over the channels (a
// normalize reduction) whose block tile of every channel x 32 pixels fits kDnnRowsTileBytes
// takes its pixels 8 lanes a pixel, its values from the merged state into the tile and out along
// the pixels: the result read once and written coalesced (level2/91's pass, a warp per 32 pixels
// folding each pixel's 128 channels in one lane with 4 tiles a warp kept, took 2.01 ms against
// Inductor's 0.98 on the H100, docs/PERFORMANCE.md, 2026-12-06 twelfth session). Other channel
// reductions, and softmaxes over more channels, go a warp per 32 pixels through 32x32 tiles (a
// softmax's staged twice).
inline constexpr std::int64_t kDnnRowsTileBytes = 48 * 1024;
bool dnn_reduce_rows(const ConvPlan& p);
// The softmax's tile spans 32, 64 or 128 pixels of every channel (ConvParams::span), in dynamic
// shared memory of at most kDnnRowsSpanBytes: a channel's run of stores is `span` positions long,
// so an output plane of odd length splits a 32-byte sector once per run (the transposing pass
// went from 2.284 to 1.604 ms on level2/5 with 256-position runs instead of 32).
inline constexpr std::int64_t kDnnRowsSpanBytes = 100 * 1024;
// The widest span whose tile fits (stage 1's), and whether `span` fits.
int dnn_rows_widest_span(const ConvPlan& p);
bool dnn_rows_span_fits(const ConvPlan& p, std::int64_t span);
// The channel reduction's blocks over `pixels`: `span` pixels a block (rows) or 256, at most 8
// blocks an SM (the grid strides over the rest).
std::int64_t dnn_reduce_grid(std::int64_t pixels, bool rows, std::int64_t span = 32);

// Ranks of cuDNN's heuristic list that stage 1 and 2 measure between them (rank 0 in stage 1).
inline constexpr int kCudnnRanksTuned = 8;

// The conv family.
class ConvFamily : public PlannedFamily<ConvPlan, ConvParams> {
 public:
  // fp32 convolutions run on TF32 tensor cores under every PRECISION (PyTorch's default for
  // convolutions), with the fp32-accurate 3xTF32 and direct structures as alternatives.
  // `cudnn`: cuDNN's headers and library are at hand (the toolchain found them), so the cuDNN
  // structure is offered beside EGG's own kernels and measurement picks.
  // `fuse_reduction`: this instance takes only a convolution whose epilogue ends in a reduction
  // over its output channels or spatial dims (the planner's fused alternative to two kernels).
  explicit ConvFamily(const std::filesystem::path& data_dir, Cudnn cudnn = Cudnn::absent,
                      bool fuse_reduction = false);

  std::string name() const override { return fuse_ ? "conv_reduce" : "conv"; }
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;
  std::variant<ConvPlan, UserError> analyze(const spec::Spec& spec) const override;
  // Renders a candidate with these parameters (valid for the plan: see conv_params_unsupported).
  Candidate render(const spec::Spec& spec, const contract::Contract& contract, const ConvPlan& plan,
                   const ConvParams& params) const override;

 protected:
  std::vector<ConvParams> structure_params(const spec::Spec& spec,
                                           const contract::Contract& contract,
                                           const ConvPlan& plan) const override;
  std::vector<ConvParams> tuning_params(const spec::Spec& spec, const contract::Contract& contract,
                                        const ConvPlan& plan, const ConvParams& incumbent,
                                        const std::string& bottleneck) const override;
  std::optional<ConvParams> fallback_params(const spec::Spec& spec,
                                            const contract::Contract& contract,
                                            const ConvPlan& plan,
                                            const ConvParams& failed) const override;

 private:
  // structure_params before the channels-last pass's tile is set (see there).
  std::vector<ConvParams> structure_order(const spec::Spec& spec,
                                          const contract::Contract& contract,
                                          const ConvPlan& plan) const;

  OpTable ops_;
  ReductionOps reductions_;
  render::Template common_, igemm_, tiled_, direct_, transpose_, cudnn_, launch_, reducers_,
      keep_pool_;  // common/keep_pool.cuh: the implicit GEMM's weight copy, stream-ordered
  Cudnn cudnn_use_ = Cudnn::absent;
  bool fuse_ = false;
};

// The output var the cuDNN structure writes the convolution into (the first output of the
// convolution's dtype), or nullopt when the op has none.
std::optional<std::string> cudnn_scratch(const spec::Spec& spec, const contract::Contract& contract,
                                         const ConvPlan& plan);

// Why these parameters cannot run this plan (tile shapes, structure), or nullopt.
std::optional<std::string> conv_params_unsupported(const ConvPlan& plan, const ConvParams& params);

// Stage-1 structures, best expert prior first, and stage-2 variants of an incumbent (every set
// valid for the plan); `epilogue_pass`: a cuDNN incumbent's channels-last result goes through
// the transposing epilogue pass (its span is tuned too).
std::vector<ConvParams> conv_structures(const ConvPlan& plan);
std::vector<ConvParams> conv_tuning_space(const ConvPlan& plan, const ConvParams& incumbent,
                                          const std::string& bottleneck,
                                          bool epilogue_pass = false);

}  // namespace egg::backend::builtin
