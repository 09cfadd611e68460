#include "backend/builtin/conv.h"
#include "backend/builtin/gpu_target.h"
#include "backend/builtin/plan_util.h"
#include "backend/builtin/window.h"

#include <algorithm>
#include <map>
#include <set>

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

bool fp32(const ConvPlan& p) { return p.dtype == spec::DType::float32; }

// True when `operand`, broadcast against the output `out` (N, C, spatial...), varies along the
// channels alone: every other dim (aligned from the right, missing ones 1) is 1.
bool per_channel(const spec::Shape& operand, const spec::Shape& out) {
  if (out.size() < 2 || operand.size() > out.size()) return false;
  const size_t lead = out.size() - operand.size();
  for (size_t d = 0; d < out.size(); ++d) {
    const std::int64_t size = d < lead ? 1 : operand[d - lead];
    if (size != (d == 1 ? out[1] : 1)) return false;
  }
  return true;
}

// True when the direct kernels suit the plan better than the implicit GEMM (the expert prior):
// depthwise and other thin groups leave the tensor-core tile mostly empty.
bool prefer_direct(const ConvPlan& p) { return p.gemm_n() < 16 || p.gemm_k() < 32; }

// Whether the implicit GEMM (TF32) is measured right after cuDNN's channels-last call, where a
// pass follows cuDNN: fp32 with channel-rich groups (docs/PERFORMANCE.md, 2026-12-07 sixteenth
// session).
bool igemm_after_channels_last(const ConvPlan& p) {
  return fp32(p) && p.cin_per_group() >= 16 && p.gemm_n() >= 32;
}

// Removes the TF32 implicit GEMM from `out` and returns it, or nullopt when `out` has none.
std::optional<ConvParams> take_igemm_tf32(std::vector<ConvParams>& out) {
  const auto ig = std::find_if(out.begin(), out.end(), [](const ConvParams& q) {
    return q.structure == "igemm" && q.math == "tf32";
  });
  if (ig == out.end()) return std::nullopt;
  const ConvParams q = *ig;
  out.erase(ig);
  return q;
}

// What a fused reduction reduces, for summaries and comments.
std::string over(const ConvReduction& r) {
  return r.spatial() ? " over the spatial dims" : " over the output channels";
}

// The implicit GEMM's default tile for a plan: the N tile follows the channels of a group.
ConvParams igemm_default(const ConvPlan& p, const std::string& math) {
  ConvParams q;
  q.structure = "igemm";
  q.math = fp32(p) ? math : "native";
  if (p.gemm_n() <= 16) {
    q.bm = 128, q.bn = 16, q.warps_m = 4, q.warps_n = 1;
  } else if (p.gemm_n() <= 32) {
    q.bm = 128, q.bn = 32, q.warps_m = 4, q.warps_n = 1;
  } else if (p.gemm_n() <= 64 || !p.reduction) {
    // Also past 64 channels: with two register-staged stages, 128x64 ran level2/31 (64 → 128
    // channels) in 3.30 ms and 128x128 on 2x4 warps in 3.51 on the H100; 128x128 with 3 cp.async
    // stages took 3.39 in the microbenchmark (docs/PERFORMANCE.md, 2026-12-07 sixteenth session),
    // all before the shared tiles' quad order. Stage 2 tries the other tiles.
    q.bm = 128, q.bn = 64, q.warps_m = 4, q.warps_n = 2;
  } else {  // a channel reduction: one N tile holds every output channel
    q.bm = 128, q.bn = 128, q.warps_m = 2, q.warps_n = 4;
  }
  q.bk = 32;
  // fp32: the tile's loads by cp.async, 3 stages in flight (no register staging; on the H100 3
  // stages beat 2 and 4 on level2/2: 3.06 against 3.17 and 3.36 ms, docs/PERFORMANCE.md,
  // 2026-12-07 sixteenth session). fp16/bf16 widen through registers: 2 stages.
  q.stages = fp32(p) ? 3 : 2;
  return q;
}

// The tiled structure's output channels per block: its warps times each warp's channels.
std::int64_t tiled_channels(const ConvParams& q) { return std::int64_t(q.block / 32) * q.co; }

// The tiled structure's shared memory per block: the tile's weights and the input rows of one
// output row, as floats.
std::int64_t tiled_smem_bytes(const ConvPlan& p, const ConvParams& q) {
  const std::int64_t tco = tiled_channels(q);
  // Consecutive outputs a lane: each lane reads its OPT + KW - 1 inputs as float4s.
  const std::int64_t xw =
      q.consec ? 31 * q.opt + 4 * ceil_div(q.opt + p.kernel[2] - 1, 4)
               : (32 * q.opt - 1) * p.stride[2] + (p.kernel[2] - 1) * p.dilation[2] + 1;
  return 4 * (tco * p.gemm_k() + p.cin_per_group() * p.kernel[0] * p.kernel[1] * xw);
}

// The tiled structure's blocks: batch x groups x channel tiles x output planes x row tiles x W
// tiles.
std::int64_t tiled_blocks(const ConvPlan& p, const ConvParams& q) {
  return p.batch * p.groups * ceil_div(p.cout_per_group(), tiled_channels(q)) * p.out[0] *
         ceil_div(p.out[1], q.rows) * ceil_div(p.out[2], 32 * std::int64_t(q.opt));
}

std::optional<std::string> tiled_unsupported(const ConvPlan& p, const ConvParams& q) {
  if (p.transposed) return std::string("the tiled structure computes forward convolutions only");
  if (p.gemm_k() > kTiledMaxK)
    return "a reduction of " + std::to_string(p.gemm_k()) + " (input channels x window) is over " +
           std::to_string(kTiledMaxK) + ": compute-bound, for tensor cores";
  if (q.block != 128 && q.block != 256) return std::string("block of 128 or 256 threads");
  if (q.co != 4 && q.co != 8) return std::string("4 or 8 output channels per thread");
  if (q.opt != 1 && q.opt != 2 && q.opt != 4) return std::string("opt must be 1, 2 or 4");
  if (q.rows != 1 && q.rows != 2 && q.rows != 4 && q.rows != 8)
    return std::string("rows must be 1, 2, 4 or 8");
  if (q.consec && (p.stride[2] != 1 || p.dilation[2] != 1 || q.opt != 4))
    return std::string("consecutive outputs a lane take stride and dilation 1 along W and opt 4");
  if (2 * p.cout_per_group() < tiled_channels(q))
    return std::string("more than half of the tile's output channels would idle");
  if (tiled_smem_bytes(p, q) > 48 * 1024)
    return "the tile's weights and input rows need " + std::to_string(tiled_smem_bytes(p, q)) +
           " bytes of shared memory (at most 48 KiB)";
  if (tiled_blocks(p, q) >= (std::int64_t(1) << 31)) return std::string("grid too large");
  return std::nullopt;
}

// The tiled structure's default: the smallest tile of 16, 32 or 64 channels that holds a group's
// output channels (4 warps of 4, 8 warps of 4 or of 8; 4 a warp where the weights of 8 would not
// fit), OPT as the output row needs, 4 rows per block where the grid still fills the GPU many
// times over.
ConvParams tiled_default(const ConvPlan& p) {
  ConvParams q;
  q.structure = "tiled";
  q.block = p.cout_per_group() <= 16 ? 128 : 256;
  q.co = p.cout_per_group() <= 32 ? 4 : 8;
  q.opt = p.out[2] >= 96 ? 4 : p.out[2] >= 48 ? 2 : 1;
  if (tiled_smem_bytes(p, q) > 48 * 1024) q.co = 4;
  q.rows = 4;
  if (tiled_blocks(p, q) < 1024) q.rows = 1;
  return q;
}

// The largest of {4, 2, 1} output channels per thread that divides a group's channels.
int default_co(const ConvPlan& p) {
  for (int co : {4, 2})
    if (p.cout_per_group() % co == 0) return co;
  return 1;
}

// "a, b, c" of a list of ints.
std::string int_list(const std::vector<std::int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out;
}

// Packed (row-major) strides of dims.
std::vector<std::int64_t> packed_strides(const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> st(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) st[i - 1] = st[i] * dims[i];
  return st;
}

// Channels-last strides of N, C, spatial... dims (stored N, spatial..., C).
std::vector<std::int64_t> channels_last_strides(const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> st(dims.size(), 1);
  std::int64_t step = dims[1];  // C is innermost
  for (size_t i = dims.size(); i-- > 2;) {
    st[i] = step;
    step *= dims[i];
  }
  st[0] = step;
  return st;
}

// The product of dims[from..].
std::int64_t tail_product(const std::vector<std::int64_t>& dims, size_t from) {
  std::int64_t p = 1;
  for (size_t i = from; i < dims.size(); ++i) p *= dims[i];
  return p;
}

// Whether a channels-last cuDNN result with a pass after it goes through the transposing epilogue
// pass (`{{fn}}_dnn_epilogue_nhwc`): not where a reduction, a pool or a norm over rows reads it.
bool transposing_pass(const ConvPlan& p) {
  return !(p.reduction || p.pool || (p.norm && p.norm->rows()));
}

// Whether cuDNN's result needs the element-wise pass: a bias, epilogue ops, or outputs other than
// the one tensor cuDNN writes (the convolution's value itself, in its dtype).
bool cudnn_needs_pass(const spec::Spec& s, const contract::Contract& c, const ConvPlan& p) {
  const auto scratch = cudnn_scratch(s, c, p);
  if (!p.bias.empty() || !p.epilogue.empty() || s.outputs.size() != 1 || !scratch) return true;
  return s.outputs[0].node != p.anchor->name;
}

// The batch entries per cuDNN call: all of them, or (as PyTorch splits a batch whose tensors
// reach 2^31 elements: cuDNN's engines index with int) the largest divisor of the batch whose
// input and output stay below 2^31 elements; 0 when one batch entry alone is too large.
std::int64_t cudnn_batch_chunk(const ConvPlan& p) {
  const std::int64_t limit = std::int64_t(1) << 31;
  const std::int64_t per = std::max(spec::numel(p.in_shape), spec::numel(p.out_shape)) /
                           std::max<std::int64_t>(1, p.batch);
  for (std::int64_t chunk = p.batch; chunk >= 1; --chunk)
    if (p.batch % chunk == 0 && chunk * per < limit) return chunk;
  return 0;
}

// The cuDNN structure's template values (the batch chunk, the workspace cap): 4-D descriptors (N,
// C, H, W; a 1D convolution has H = 1) or 5-D for 3D; the data type and math; the tensor that takes
// the convolution's result and whether an element-wise pass must follow (bias, epilogue ops, other
// outputs).
void add_cudnn_context(json& ctx, const spec::Spec& s, const contract::Contract& c,
                       const ConvPlan& p, bool nhwc, int span) {
  const int nb = p.dims == 3 ? 5 : 4;
  const int first = p.dims == 3 ? 0 : 1;  // the spatial dims (D, H, W) that go into the descriptors
  std::vector<std::int64_t> in = {p.batch, p.c_in}, out = {p.batch, p.c_out},
                            w = {p.weight_shape.at(0), p.weight_shape.at(1)}, pad, stride, dil;
  for (int d = first; d < 3; ++d) {
    in.push_back(p.in[d]);
    out.push_back(p.out[d]);
    w.push_back(p.kernel[d]);
    pad.push_back(p.pad[d]);
    stride.push_back(p.stride[d]);
    dil.push_back(p.dilation[d]);
  }
  const std::string scratch = cudnn_scratch(s, c, p).value_or("");
  const bool needs_epilogue = cudnn_needs_pass(s, c, p);
  const std::int64_t total = spec::numel(p.out_shape);
  // The descriptors describe one chunk of the batch (cudnn_batch_chunk); strides are per entry.
  const std::int64_t chunk = cudnn_batch_chunk(p);
  in[0] = out[0] = chunk;
  const std::int64_t x_step = spec::numel(p.in_shape) / p.batch * chunk,
                     y_step = spec::numel(p.out_shape) / p.batch * chunk;
  // The workspace a plan may ask for: max(1 GiB, 2x the tensors' bytes), at most 16 GiB.
  const std::int64_t bytes =
      (spec::numel(p.in_shape) + spec::numel(p.out_shape) + spec::numel(p.weight_shape)) *
      (fp32(p) ? 4 : 2);
  const std::int64_t max_ws =
      std::min(std::int64_t(16) << 30, std::max(std::int64_t(1) << 30, 2 * bytes));
  ctx.update(
      {{"cudnn_transposed", p.transposed},
       {"dnn_max_workspace", std::to_string(max_ws) + "ull"},
       {"dnn_max_workspace_text", std::to_string(max_ws >> 20) + " MiB"},
       {"cudnn_op", p.transposed ? "a backward-data convolution" : "a forward convolution"},
       {"cudnn_dims", nb},
       {"cudnn_type", p.dtype == spec::DType::float16    ? "CUDNN_DATA_HALF"
                      : p.dtype == spec::DType::bfloat16 ? "CUDNN_DATA_BFLOAT16"
                                                         : "CUDNN_DATA_FLOAT"},
       // PyTorch's defaults: tensor-core engines for fp16/bf16, and for fp32 too (TF32:
       // torch.backends.cudnn.allow_tf32 is on by default); float accumulation.
       {"cudnn_math",
        fp32(p) ? "fp32 data, TF32 tensor cores allowed" : "tensor cores, fp32 accumulation"},
       {"x_role", p.transposed ? "x is dy" : "x"},
       {"y_role", p.transposed ? "y is dx" : "y"},
       {"cudnn_in_dims", int_list(in)},
       {"cudnn_in_strides", int_list(nhwc ? channels_last_strides(in) : packed_strides(in))},
       {"cudnn_out_dims", int_list(out)},
       {"cudnn_out_strides", int_list(nhwc ? channels_last_strides(out) : packed_strides(out))},
       {"cudnn_layout", nhwc ? "channels-last N(D)HWC" : "packed NC(D)HW"},
       {"nhwc", nhwc},
       {"dnn_chunk", chunk},
       {"dnn_chunks", p.batch / chunk},
       {"dnn_x_step", x_step},
       {"dnn_y_step", y_step},
       {"dnn_x", nhwc ? "xt" : "a." + ctx.value("x_var", std::string()) + " + x_off"},
       {"dnn_w", nhwc ? "wt" : "a." + ctx.value("w_var", std::string())},
       {"dnn_y", nhwc ? "yt" : "a." + scratch + " + y_off"},
       {"nhwc_x_elems", x_step},
       {"nhwc_w_elems", spec::numel(p.weight_shape)},
       {"nhwc_y_elems", y_step},
       // batch, rows, cols of each [batch][rows][cols] → [batch][cols][rows] swap
       {"nhwc_x_swap", std::to_string(in[0]) + ", " + std::to_string(in[1]) + ", " +
                           std::to_string(tail_product(in, 2))},
       {"nhwc_w_swap", std::to_string(w[0]) + ", " + std::to_string(w[1]) + ", " +
                           std::to_string(tail_product(w, 2))},
       {"nhwc_y_swap", std::to_string(out[0]) + ", " + std::to_string(tail_product(out, 2)) + ", " +
                           std::to_string(out[1])},
       {"cudnn_w_dims", int_list(w)},
       {"cudnn_w_strides", int_list(nhwc ? channels_last_strides(w) : packed_strides(w))},
       {"cudnn_pad", int_list(pad)},
       {"cudnn_stride", int_list(stride)},
       {"cudnn_dilation", int_list(dil)},
       {"scratch", scratch},
       {"needs_epilogue", needs_epilogue},
       // the channel reduction over a chunk's channels-last result: a warp per 32 pixels, its
       // rows read 16 bytes a lane where every row starts 16-byte aligned
       {"dnn_vec4", fp32(p) && p.c_out % 4 == 0},
       {"dnn_rows", dnn_reduce_rows(p)},
       {"dnn_reduce_grid", dnn_reduce_grid(y_step / p.c_out, dnn_reduce_rows(p), span)},
       {"dnn_rows_span", span},
       {"epilogue_grid",
        std::max<std::int64_t>(1, std::min<std::int64_t>(ceil_div(total, 256), kSms * 16))}});
  if ((p.reduction && p.reduction->spatial()) ||
      (p.norm && !p.norm->running() && !p.norm->rows())) {
    // The reduction over the spatial dims (a norm's statistics too): lanes along up to 32 channels
    // (a power of two that covers fewer), the positions split into spans until a call's grid fills
    // the H200's 132 SMs about eight 256-thread blocks deep, each warp keeping 16 or more rows of
    // its span.
    std::int64_t cb = 1;
    while (cb < 32 && cb < p.c_out) cb *= 2;
    const std::int64_t osp = p.out[0] * p.out[1] * p.out[2];
    const std::int64_t blocks = ceil_div(p.c_out, cb) * chunk;
    const std::int64_t most = std::max<std::int64_t>(1, osp / (8 * (32 / cb) * 16));
    ctx["dnn_sp_cb"] = cb;
    ctx["dnn_sp_splits"] = std::clamp<std::int64_t>(ceil_div(kSms * 8, blocks), 1,
                                                    std::min<std::int64_t>(most, 65535));
  }
}

}  // namespace

bool dnn_reduce_rows(const ConvPlan& p) {
  return p.reduction && p.reduction->normalize && p.c_out * 33 * 4 <= kDnnRowsTileBytes;
}

bool dnn_rows_span_fits(const ConvPlan& p, std::int64_t span) {
  return (span == 32 || span == 64 || span == 128) &&
         p.c_out * (span + 1) * 4 <= (span == 32 ? kDnnRowsTileBytes : kDnnRowsSpanBytes);
}

int dnn_rows_widest_span(const ConvPlan& p) {
  for (const int span : {128, 64})
    if (dnn_rows_span_fits(p, span)) return span;
  return 32;
}

std::int64_t dnn_reduce_grid(std::int64_t pixels, bool rows, std::int64_t span) {
  return std::max<std::int64_t>(
      1, std::min<std::int64_t>(ceil_div(pixels, rows ? span : 256), kSms * 8));
}

std::optional<std::string> cudnn_scratch(const spec::Spec& s, const contract::Contract& c,
                                         const ConvPlan& p) {
  for (const auto& o : s.outputs)
    for (const auto& a : c.args)
      if (a.role == contract::Role::output && a.tensor_name == o.name)
        if (a.dtype == p.dtype && spec::numel(o.shape) == spec::numel(p.out_shape)) return a.var;
  return std::nullopt;
}

json ConvParams::to_json() const {
  json j = {{"structure", structure}};
  if (structure == "igemm") {
    j.update({{"math", math},
              {"bm", bm},
              {"bn", bn},
              {"bk", bk},
              {"warps_m", warps_m},
              {"warps_n", warps_n},
              {"min_blocks", min_blocks}});
    if (stages != 2) j["stages"] = stages;
  } else if (structure == "cudnn") {
    j["algo"] = algo;
    j["layout"] = nhwc ? "nhwc" : "nchw";
    if (span != 32) j["span"] = span;
    if (vload) j["vload"] = true;
    if (tile_c != 32) j["tile_c"] = tile_c;
    j["link"] = json::array({"cudnn"});  // as the GEMM family records cuBLASLt
  } else {
    j.update({{"block", block}, {"co", co}});
    if (structure == "direct" || structure == "tiled") j["opt"] = opt;
    if (structure == "tiled") j["rows"] = rows;
    if (structure == "tiled" && consec) j["map"] = "consecutive";
  }
  return j;
}

ConvParams ConvParams::from_json(const json& j) {
  ConvParams p;
  p.structure = j.value("structure", p.structure);
  p.math = j.value("math", p.math);
  p.bm = j.value("bm", p.bm);
  p.bn = j.value("bn", p.bn);
  p.bk = j.value("bk", p.bk);
  p.warps_m = j.value("warps_m", p.warps_m);
  p.warps_n = j.value("warps_n", p.warps_n);
  p.min_blocks = j.value("min_blocks", p.min_blocks);
  p.stages = j.value("stages", p.stages);
  p.block = j.value("block", p.block);
  p.opt = j.value("opt", p.opt);
  p.co = j.value("co", p.co);
  p.rows = j.value("rows", p.rows);
  p.consec = j.value("map", std::string()) == "consecutive";
  p.algo = j.value("algo", p.algo);
  p.nhwc = j.value("layout", std::string("nchw")) == "nhwc";
  p.span = j.value("span", p.span);
  p.vload = j.value("vload", p.vload);
  p.tile_c = j.value("tile_c", p.tile_c);
  return p;
}

namespace {

// The epilogues fused after the convolution (a reduction, a pool, a norm): the structures that
// can compute them.
std::optional<std::string> fused_epilogue_unsupported(const ConvPlan& p, const ConvParams& q) {
  if (p.reduction && p.reduction->spatial() && !(q.structure == "cudnn" && q.nhwc))
    return std::string("a reduction over the spatial dims reads cuDNN's channels-last result");
  if (p.pool && !(q.structure == "cudnn" && q.nhwc))
    return std::string("a pool reads cuDNN's channels-last result");
  if (p.norm && p.norm->running() && q.structure != "cudnn")
    return std::string("a norm with running statistics runs in the pass after cuDNN");
  if (p.norm && !p.norm->running() && !(q.structure == "cudnn" && q.nhwc))
    return std::string("a norm's statistics read cuDNN's channels-last result");
  if (p.norm && !p.norm->running() && p.norm->across && cudnn_batch_chunk(p) != p.batch)
    return std::string(
        "a batch norm's statistics span every batch entry, and cuDNN takes this batch in chunks");
  if (p.pool &&
      ceil_div(p.pool->window.out[0] * p.pool->window.out[1] * p.pool->window.out[2], 32) > 65535)
    return std::string("the pool has more than 2^21 output positions per plane (the grid's y)");
  if (p.reduction && !(q.structure == "igemm" && p.groups == 1 && q.bn >= p.cout_per_group()) &&
      !(q.structure == "cudnn" && q.nhwc))
    return std::string(
        "a channel reduction fuses into the implicit GEMM whose N tile holds every output channel, "
        "or reads cuDNN's channels-last result");
  return std::nullopt;
}

// The cuDNN structure: padding, sizes cuDNN's int dims reach, the channels-last passes' grids
// and the epilogue pass's span, loads and tile.
std::optional<std::string> cudnn_unsupported(const ConvPlan& p, const ConvParams& q) {
  // The cuDNN structure pads both sides alike (one padding per dim) and keeps every tensor
  // below 2^31 elements (cuDNN's engines index with int).
  for (int d = 0; d < 3; ++d) {
    const std::int64_t lo = p.transposed ? p.out[d] : p.in[d],
                       hi = p.transposed ? p.in[d] : p.out[d];
    if (conv_output_size(lo, p.kernel[d], 2 * p.pad[d], p.stride[d], p.dilation[d]) != hi)
      return std::string("cuDNN pads both sides alike; this convolution's padding is asymmetric");
  }
  // Below 2^31 elements per call (cuDNN's engines index with int): the batch is split into
  // chunks that are (cudnn_batch_chunk), but not one batch entry or the weight.
  if (cudnn_batch_chunk(p) == 0 || spec::numel(p.weight_shape) >= (std::int64_t(1) << 31))
    return std::string(
        "one batch entry or the weight has 2^31 or more elements (cuDNN's dims are int)");
  // Channels-last: the transposes' grids (a block per 32x32 tile, z per batch entry).
  if (q.nhwc && (p.batch > 65535 || p.weight_shape.at(0) > 65535 ||
                 ceil_div(p.out[0] * p.out[1] * p.out[2], 32) > 65535))
    return std::string("too large for the channels-last transposes' grid");
  if (q.span != 32 && (!q.nhwc || (q.span != 64 && q.span != 128 && q.span != 256)))
    return "an epilogue pass's span of " + std::to_string(q.span) +
           " positions (32, 64, 128 or 256, channels-last only)";
  if (q.nhwc && dnn_reduce_rows(p) && !dnn_rows_span_fits(p, q.span))
    return "a channel softmax's tile of " + std::to_string(p.c_out) + " channels x " +
           std::to_string(q.span) + " pixels (32, 64 or 128, at most " +
           std::to_string(kDnnRowsSpanBytes >> 10) + " KiB of shared memory)";
  // 16-byte loads: 32 / vec lanes a position, 8 * vec positions a sweep of the block.
  const std::int64_t vec = 16 / spec::dtype_size(p.dtype);
  if (q.vload && (!q.nhwc || p.c_out % vec != 0 || q.span % (8 * vec) != 0))
    return "16-byte loads in the epilogue pass need channels-last, channels in multiples of " +
           std::to_string(vec) + " and a span of " + std::to_string(8 * vec) + " or more";
  // 16 channels a tile: 16-byte loads, 16 / vec lanes a position, 16 * vec positions a sweep.
  if (q.tile_c != 32 &&
      (q.tile_c != 16 || !q.vload || q.span % (16 * vec) != 0 || ceil_div(p.c_out, 16) > 65535))
    return "an epilogue pass tile of " + std::to_string(q.tile_c) +
           " channels (32, or 16 with 16-byte loads and a span of " + std::to_string(16 * vec) +
           " or more)";
  return std::nullopt;
}

// The implicit GEMM: its math, tile, threads, accumulators, stages, shared memory and grid.
std::optional<std::string> igemm_unsupported(const ConvPlan& p, const ConvParams& q) {
  if (fp32(p) ? (q.math != "tf32" && q.math != "3xtf32") : q.math != "native")
    return "math '" + q.math + "' does not fit " + spec::dtype_name(p.dtype) +
           " (fp32: tf32 or 3xtf32; fp16/bf16: native)";
  const int threads = q.warps_m * q.warps_n * 32;
  if (q.bm < 16 || q.bn < 16 || q.bk < 16 || q.bm % (q.warps_m * 16) != 0 ||
      q.bn % (q.warps_n * 16) != 0 || q.bk % 16 != 0)
    return "tile " + std::to_string(q.bm) + "x" + std::to_string(q.bn) + "x" +
           std::to_string(q.bk) + " does not split into 16x16 warp fragments over the warps";
  if (threads > 1024 || threads % q.bm != 0 || q.bk % (threads / q.bm) != 0)
    return "the block's threads do not map onto the tile loads (threads must be a multiple of "
           "BM, and BK a multiple of threads / BM)";
  // Accumulators: 8 floats a thread per 16x16 of the warp's tile, twice the fragments in 3xTF32.
  const std::int64_t frags =
      std::int64_t(q.bm / q.warps_m / 16) * (q.bn / q.warps_n / 16) * (q.math == "3xtf32" ? 2 : 1);
  if (frags > 16) return "more than 16 accumulator fragments per warp (register spills)";
  if (q.stages < 2 || q.stages > 4 || (q.stages > 2 && !fp32(p)))
    return std::to_string(q.stages) +
           " stages: 2 filled from registers, or 3-4 filled by cp.async (fp32: 4-byte copies)";
  // Shared memory: fp32 stages of A [BK / 2][2 BM + 8] and B [BK / 2][2 BN + 8], or the
  // accumulators staged for a channel reduction [BN][BM + 4].
  const std::int64_t pipe = std::int64_t(q.stages) * q.bk * (q.bm + q.bn + 8) * 4;
  const std::int64_t staging = std::int64_t(q.bn) * (q.bm + 4) * 4;
  if (q.min_blocks < 1 || q.min_blocks > 4 ||
      std::int64_t(q.min_blocks) * std::max(pipe, staging) > 227 * 1024 ||
      std::int64_t(q.min_blocks) * threads > 2048)
    return "min_blocks " + std::to_string(q.min_blocks) + " does not fit one SM";
  if (ceil_div(p.gemm_m(), q.bm) >= (std::int64_t(1) << 31) || ceil_div(p.gemm_n(), q.bn) > 65535)
    return "grid too large";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> conv_params_unsupported(const ConvPlan& p, const ConvParams& q) {
  if (auto why = fused_epilogue_unsupported(p, q)) return why;
  if (q.structure == "cudnn") return cudnn_unsupported(p, q);
  if (q.structure == "transpose" && !p.transposed)
    return std::string("the transpose structure computes transposed convolutions only");
  if (p.transposed && q.structure != "transpose" && q.structure != "igemm")
    return std::string("a transposed convolution runs on the transpose or igemm structures");
  if (p.transposed && q.structure == "igemm" &&
      (p.dilation[0] != 1 || p.dilation[1] != 1 || p.dilation[2] != 1 || p.reduction))
    return std::string(
        "the implicit GEMM computes a transposed convolution without dilation or a fused "
        "reduction only");
  if (q.structure == "igemm") return igemm_unsupported(p, q);
  if (q.structure == "tiled") return tiled_unsupported(p, q);
  if (q.structure != "direct" && q.structure != "transpose")
    return "unknown structure '" + q.structure + "'";
  if (q.block < 32 || q.block > 1024 || q.block % 32 != 0)
    return "block of " + std::to_string(q.block) + " threads";
  if (q.co < 1 || q.co > 16 || p.cout_per_group() % q.co != 0)
    return std::to_string(q.co) + " output channels per thread do not divide the " +
           std::to_string(p.cout_per_group()) + " of a group";
  std::int64_t threads = p.batch * p.groups * (p.cout_per_group() / q.co) * p.out[0] * p.out[1];
  if (q.structure == "direct") {
    if (q.opt != 1 && q.opt != 2 && q.opt != 4 && q.opt != 8) return "opt must be 1, 2, 4 or 8";
    if (q.opt > p.out[2]) return "more outputs per thread than the output row has";
    if (q.co * q.opt > 32) return "more than 32 accumulators per thread";
    threads *= ceil_div(p.out[2], q.opt);
  } else {
    threads *= p.out[2];
  }
  if (ceil_div(threads, q.block) >= (std::int64_t(1) << 31)) return "grid too large";
  return std::nullopt;
}

ConvFamily::ConvFamily(const std::filesystem::path& data_dir, Cudnn cudnn, bool fuse_reduction)
    : ops_(data_dir),
      reductions_(data_dir),
      common_(render::load_template(data_dir, "conv/common.cuh.tmpl")),
      igemm_(render::load_template(data_dir, "conv/igemm.cuh.tmpl")),
      tiled_(render::load_template(data_dir, "conv/tiled.cuh.tmpl")),
      direct_(render::load_template(data_dir, "conv/direct.cuh.tmpl")),
      transpose_(render::load_template(data_dir, "conv/transpose.cuh.tmpl")),
      cudnn_(render::load_template(data_dir, "conv/cudnn.cuh.tmpl")),
      launch_(render::load_template(data_dir, "conv/launch.tmpl")),
      reducers_(render::load_template(data_dir, "reduction/reducers.cuh")),
      keep_pool_(render::load_template(data_dir, "common/keep_pool.cuh")),
      cudnn_use_(cudnn),
      fuse_(fuse_reduction) {}

std::vector<std::pair<std::string, std::string>> ConvFamily::key_inputs() const {
  auto inputs = ops_.key_inputs();
  for (const auto* t :
       {&common_, &igemm_, &tiled_, &direct_, &transpose_, &cudnn_, &launch_, &keep_pool_})
    inputs.push_back({t->name, t->text});
  if (fuse_) {  // the fused reduction's table and reducers
    inputs.push_back(reductions_.key_input());
    inputs.push_back({reducers_.name, reducers_.text});
  }
  // Whether the cuDNN structure is on offer changes what generation may pick.
  inputs.push_back({"conv.cudnn", cudnn_use_ == Cudnn::absent       ? "absent"
                                  : cudnn_use_ == Cudnn::any_engine ? "any engine"
                                                                    : "deterministic engines"});
  return inputs;
}

std::variant<ConvPlan, UserError> ConvFamily::analyze(const spec::Spec& s) const {
  auto planned = plan_conv(s, ops_, fuse_ ? &reductions_ : nullptr, cudnn_use_ != Cudnn::absent);
  const auto* plan = std::get_if<ConvPlan>(&planned);
  ConvParams channels_last;
  channels_last.structure = "cudnn";
  channels_last.nhwc = true;
  if (plan && plan->pool &&
      (cudnn_use_ == Cudnn::absent || conv_params_unsupported(*plan, channels_last)))
    return UserError(plan->anchor->where,
                     quote(*plan->anchor) + " fuses with " + quote(*plan->pool->window.anchor) +
                         " only after cuDNN's channels-last result, and cuDNN does not take "
                         "this convolution or pool: " +
                         conv_params_unsupported(*plan, channels_last).value_or("not at hand"));
  ConvParams channels_first = channels_last;
  channels_first.nhwc = false;
  if (plan && plan->norm &&
      (cudnn_use_ == Cudnn::absent ||
       (conv_params_unsupported(*plan, channels_last) &&
        (!plan->norm->running() || conv_params_unsupported(*plan, channels_first)))))
    return UserError(plan->anchor->where,
                     quote(*plan->anchor) + " fuses with " + quote(*plan->norm->node) +
                         " only after cuDNN (batch statistics from its channels-last result), and "
                         "cuDNN does not take this convolution: " +
                         conv_params_unsupported(*plan, channels_last).value_or("not at hand"));
  if (plan && plan->reduction && conv_structures(*plan).empty() &&
      (cudnn_use_ == Cudnn::absent || conv_params_unsupported(*plan, channels_last)))
    return UserError(plan->anchor->where,
                     quote(*plan->anchor) + " fuses with the reduction over its " +
                         (plan->reduction->spatial() ? "spatial dims" : "channels") +
                         " neither in the implicit GEMM's epilogue (an ungrouped forward "
                         "convolution of at most 128 output channels, a channel reduction) nor "
                         "after cuDNN (it does not take this convolution)");
  return planned;
}

Candidate ConvFamily::render(const spec::Spec& s, const contract::Contract& c, const ConvPlan& plan,
                             const ConvParams& q) const {
  if (auto why = conv_params_unsupported(plan, q))
    throw InternalError("conv family: parameters " + q.to_json().dump() +
                        " do not fit the plan: " + *why);
  const spec::Node& an = *plan.anchor;
  const std::string fn = "egg_" + c.name;

  // Operands once each in launch() order: input, weight, bias and the epilogue's leaves.
  std::set<std::string> epi_leaves, post_leaves;
  add_tensor_leaves(s, plan.epilogue, epi_leaves);
  if (plan.reduction) add_tensor_leaves(s, plan.reduction->post, post_leaves);
  if (plan.pool) add_tensor_leaves(s, plan.pool->post, post_leaves);
  std::set<std::string> norm_leaves;  // a norm's affine weight and bias, read per channel
  if (plan.norm) {
    add_tensor_leaves(s, plan.norm->post, post_leaves);
    for (const std::string* t :
         {&plan.norm->weight, &plan.norm->bias, &plan.norm->running_mean, &plan.norm->running_var})
      if (!t->empty()) norm_leaves.insert(*t);
  }
  std::map<std::string, std::string> var_of;
  json ins = json::array(), outs = json::array(), results = json::array();
  for (const auto& a : c.args) {
    if (a.role == contract::Role::output) continue;
    if (a.source == plan.input || a.source == plan.weight || a.source == plan.bias ||
        epi_leaves.count(a.source) || post_leaves.count(a.source) || norm_leaves.count(a.source)) {
      ins.push_back({{"ptr", a.var}, {"ctype", contract::c_type(a.dtype)}});
      var_of[a.source] = a.var;
    }
  }
  for (const std::string& name : {plan.input, plan.weight})
    if (!var_of.count(name))
      throw InternalError("conv family: operand " + name + " is not in the contract");
  json epi_loads = json::array(), epi_steps = json::array();
  std::map<std::string, std::string> epi_value;
  for (const auto& leaf : epi_leaves) {
    const spec::Tensor* t = s.find_tensor(leaf);
    const std::string v = "egg_b" + std::to_string(epi_loads.size());
    // A tensor that varies along the output channels alone (a [C, 1, 1] bias) is read at the
    // channel the epilogue is given, not at an index divided out of the element's.
    const std::string off = spec::numel(t->shape) == spec::numel(plan.out_shape) ? "egg_o"
                            : per_channel(t->shape, plan.out_shape)
                                ? "egg_co"
                                : broadcast_offset(t->shape, plan.out_shape, "egg_o");
    epi_loads.push_back(
        {{"value", v}, {"load", "egg_ldg(a." + var_of.at(leaf) + " + " + off + ")"}});
    epi_value[leaf] = v;
  }
  epi_value[an.name] = "egg_r";
  std::string epilogue_text = plan.bias.empty() ? "" : "bias";
  for (const auto* n : plan.epilogue) {
    const std::string v = "egg_e" + std::to_string(epi_steps.size());
    epi_steps.push_back({{"value", v}, {"expr", ops_.expression(s, *n, epi_value)}});
    epi_value[n->name] = v;
    epilogue_text += (epilogue_text.empty() ? "" : ", ") + n->op;
  }
  if (epilogue_text.empty()) epilogue_text = "none";
  // A fused reduction or pool: its value per output pixel (per batch entry and channel, over the
  // spatial dims; per pooled element), then the ops after it at `egg_ro`, the value's index in
  // its `shape`.
  json red = json::object();
  auto add_post = [&](const std::vector<const spec::Node*>& post,
                      const std::vector<std::string>& value_names, const spec::Shape& shape) {
    json post_loads = json::array(), post_steps = json::array();
    for (const auto& leaf : post_leaves) {
      const spec::Tensor* t = s.find_tensor(leaf);
      const std::string v = "egg_p" + std::to_string(post_loads.size());
      const std::string off = spec::numel(t->shape) == spec::numel(shape)
                                  ? "egg_ro"
                                  : broadcast_offset(t->shape, shape, "egg_ro");
      post_loads.push_back(
          {{"value", v}, {"load", "egg_ldg(a." + var_of.at(leaf) + " + " + off + ")"}});
      epi_value[leaf] = v;
    }
    for (const auto& name : value_names) epi_value[name] = "egg_v";
    for (const auto* n : post) {
      const std::string v = "egg_q" + std::to_string(post_steps.size());
      post_steps.push_back({{"value", v}, {"expr", ops_.expression(s, *n, epi_value)}});
      epi_value[n->name] = v;
    }
    red["post_loads"] = post_loads;
    red["post_steps"] = post_steps;
    red["red_shape"] = spec::shape_string(shape);
  };
  if (plan.reduction) {
    const ConvReduction& r = *plan.reduction;
    red = {{"reducer", r.reducer},          {"red_in", r.in_expr},
           {"red_row", r.row_expr},         {"normalize", r.normalize},
           {"red_element", r.element_expr}, {"red_value", epi_value.at(r.node->args[0].node)},
           {"red_op", r.node->op}};
    add_post(r.post, r.value_names, r.shape);
    epilogue_text +=
        ", then " + r.node->op + over(r) +
        (r.post.empty() ? "" : " and " + std::to_string(r.post.size()) + " ops after it");
  }
  if (plan.pool) {
    const ConvPool& pl = *plan.pool;
    const PoolPlan& w = pl.window;
    red = {{"red_op", w.anchor->op},
           {"red_over", ""},
           {"red_value", epi_value.at(w.input)},
           {"pool_max", w.max},
           {"pool_divisor", w.divisor != 0 ? std::to_string(w.divisor) : ""},
           {"pool_count_include_pad", w.count_include_pad},
           {"pool_unroll", w.window() <= 64 ? "" : "1"},
           {"pool_grid_y", ceil_div(w.out[0] * w.out[1] * w.out[2], 32)}};
    const char* axes[3] = {"d", "h", "w"};
    for (int k = 0; k < 3; ++k) {
      const std::string x = axes[k];
      red["pool_o" + x] = w.out[k];
      red["pool_k" + x] = w.kernel[k];
      red["pool_s" + x] = w.stride[k];
      red["pool_p" + x] = w.pad[k];
      red["pool_d" + x] = w.dilation[k];
    }
    add_post(pl.post, pl.value_names, w.out_shape);
    epilogue_text +=
        ", then " + w.anchor->op +
        (pl.post.empty() ? "" : " and " + std::to_string(pl.post.size()) + " ops after it");
  }
  if (plan.norm) {
    // Batch statistics as a (count, mean, M2) reduction over the spatial dims of each batch entry
    // and channel, then merged per statistic; running statistics read per channel; a layer/RMS
    // norm's rows in a pass of their own, each slab's statistics in shared memory. Its value the
    // normalized, affine element.
    const ConvNorm& nm = *plan.norm;
    const spec::Node& node = *nm.node;
    red = {{"reducer", "EggRedWelford"},
           {"red_in", "egg_x"},
           {"red_row", "egg_st.mean"},
           {"normalize", false},
           {"red_element", ""},
           {"red_value", epi_value.at(node.args[0].node)},
           {"red_op", node.op},
           {"red_over", nm.running() ? "" : "'s statistics"},
           {"norm_group_c", nm.group_c},
           {"norm_across", nm.across},
           {"norm_keys_per_entry", nm.keys_per_entry(plan.c_out)},
           {"norm_keys", nm.across ? plan.c_out : plan.batch * nm.keys_per_entry(plan.c_out)},
           {"norm_eps", float_literal(nm.eps)},
           {"norm_weight", nm.weight.empty() ? "" : var_of.at(nm.weight)},
           {"norm_bias", nm.bias.empty() ? "" : var_of.at(nm.bias)},
           {"norm_mean", nm.running() ? var_of.at(nm.running_mean) : ""},
           {"norm_var", nm.running() ? var_of.at(nm.running_var) : ""},
           {"norm_row_len", nm.row_len},
           {"norm_center", nm.center},
           {"norm_rows_grid",
            nm.rows() ? spec::numel(plan.out_shape) / plan.batch / plan.c_out / nm.row_len : 0}};
    add_post(nm.post, nm.value_names, plan.out_shape);
    epilogue_text +=
        ", then " + node.op +
        (nm.running() ? " (running statistics)"
         : nm.rows()  ? " (rows of " + std::to_string(nm.row_len) + " trailing positions)"
                      : " (statistics from the channels-last result)") +
        (nm.post.empty() ? "" : " and " + std::to_string(nm.post.size()) + " ops after it");
  }
  for (const auto& o : s.outputs) {
    const contract::LaunchArg* arg = nullptr;
    for (const auto& a : c.args)
      if (a.role == contract::Role::output && a.tensor_name == o.name) arg = &a;
    if (!arg) throw InternalError("conv family: output " + o.name + " is not in the contract");
    outs.push_back({{"ptr", arg->var}, {"ctype", contract::c_type(arg->dtype)}});
    results.push_back({{"ptr", arg->var},
                       {"ctype", contract::c_type(arg->dtype)},
                       {"value", epi_value.at(o.node)}});
  }

  const std::int64_t biggest = std::max({spec::numel(plan.in_shape), spec::numel(plan.out_shape),
                                         spec::numel(plan.weight_shape), plan.gemm_m() + 256});
  const bool small = biggest + 1024 < (std::int64_t(1) << 31);
  const bool is_fp32 = fp32(plan);
  const std::string kind =
      (plan.transposed ? "conv_transpose" : "conv") + std::to_string(plan.dims) + "d";
  std::string structure;
  std::string id;
  if (q.structure == "igemm") {
    const std::string math = !is_fp32           ? spec::dtype_name(plan.dtype)
                             : q.math == "tf32" ? "TF32 (PyTorch's default for convolutions)"
                                                : "3xTF32 split precision (fp32-accurate)";
    structure = "implicit GEMM on tensor cores (mma.sync, tap-major K), " + math +
                ", fp32 accumulation, tile " + std::to_string(q.bm) + "x" + std::to_string(q.bn) +
                "x" + std::to_string(q.bk) + " on " + std::to_string(q.warps_m) + "x" +
                std::to_string(q.warps_n) + " warps";
    id = "conv.igemm." + (is_fp32 ? q.math : spec::dtype_name(plan.dtype)) + ":" +
         std::to_string(q.bm) + "x" + std::to_string(q.bn) + "x" + std::to_string(q.bk) + ":w" +
         std::to_string(q.warps_m) + "x" + std::to_string(q.warps_n) +
         (q.min_blocks > 1 ? ":m" + std::to_string(q.min_blocks) : "") +
         (q.stages > 2 ? ":s" + std::to_string(q.stages) : "");
    if (q.stages > 2) structure += ", " + std::to_string(q.stages) + "-stage cp.async pipeline";
  } else if (q.structure == "tiled") {
    structure = "through shared memory on CUDA cores, " + std::to_string(q.block / 32) +
                " warps of " + std::to_string(q.co) + " output channel(s) x " +
                std::to_string(32 * q.opt) + " outputs along W, " + std::to_string(q.rows) +
                " output row(s) per block" +
                (q.consec ? ", consecutive outputs a lane (inputs read as float4s)" : "") +
                ", exact fp32 accumulation";
    id = "conv.tiled:b" + std::to_string(q.block) + ":o" + std::to_string(q.opt) + ":c" +
         std::to_string(q.co) + ":r" + std::to_string(q.rows) + (q.consec ? ":q" : "");
  } else if (q.structure == "direct") {
    structure = "direct on CUDA cores, a thread per " + std::to_string(q.co) +
                " output channel(s) x " + std::to_string(q.opt) +
                " output(s) along W, exact fp32 accumulation";
    id = "conv.direct:b" + std::to_string(q.block) + ":o" + std::to_string(q.opt) + ":c" +
         std::to_string(q.co);
  } else if (q.structure == "cudnn") {
    const bool pass = cudnn_needs_pass(s, c, plan);
    structure =
        std::string("cuDNN ") +
        (plan.transposed ? "backward-data (the transposed convolution)" : "forward convolution") +
        ", " +
        (is_fp32 ? "fp32 with TF32 allowed (PyTorch's default for convolutions)"
                 : spec::dtype_name(plan.dtype) + " with fp32 accumulation") +
        ", engine configuration #" + std::to_string(q.algo) +
        " of cuDNN's heuristics (modes A, B, fallback; " +
        (cudnn_use_ == Cudnn::deterministic_engines
             ? std::string("deterministic engines only, as OPTIONS deterministic=on asks)")
             : std::string("nondeterministic engines too, as PyTorch's default)")) +
        (!q.nhwc          ? ""
         : plan.reduction ? ", channels-last (input and weight transposed in the call; the "
                            "reduction reads the channels-last result)"
         : plan.pool ? ", channels-last (input and weight transposed in the call; the pool reads "
                       "the channels-last result)"
         : plan.norm && !plan.norm->running()
             ? ", channels-last (input and weight transposed in the call; the norm's statistics "
               "read the channels-last result, its pass transposes it back)"
             : ", channels-last (input, weight and result transposed in the call)") +
        (pass && !plan.reduction && !plan.pool
             ? ", then an in-place element-wise pass for bias and epilogue"
             : "");
    id = std::string("conv.cudnn.") + (plan.transposed ? "bwd_data" : "fwd") +
         (q.nhwc ? ".nhwc" : "") + ":a" + std::to_string(q.algo) +
         (q.span != 32 ? ":p" + std::to_string(q.span) : "") + (q.vload ? ":v" : "") +
         (q.tile_c != 32 ? ":c" + std::to_string(q.tile_c) : "");
    if (q.span != 32)
      structure += " (" + std::to_string(q.span) + " positions per channel a block of the pass)";
    if (q.vload) structure += " (the pass reads 16 bytes of channels a load)";
    if (q.tile_c != 32)
      structure += " (" + std::to_string(q.tile_c) +
                   " channels a block of the pass, the positions its grid's fastest index)";
  } else {
    structure = "transposed convolution as a gather on CUDA cores, a thread per " +
                std::to_string(q.co) + " output channel(s), exact fp32 accumulation";
    id = "conv.transpose:b" + std::to_string(q.block) + ":c" + std::to_string(q.co);
  }
  std::int64_t threads = plan.batch * plan.groups * (plan.cout_per_group() / q.co) * plan.out[0] *
                         plan.out[1] *
                         (q.structure == "direct" ? ceil_div(plan.out[2], q.opt) : plan.out[2]);
  const std::string summary =
      an.target + " (" + kind + ") → " + std::to_string(plan.epilogue.size()) + " epilogue ops" +
      (plan.reduction ? " → " + plan.reduction->node->target + over(*plan.reduction) : "") +
      (plan.pool ? " → " + plan.pool->window.anchor->target : "") +
      (plan.norm ? " → " + plan.norm->node->target : "") + ": " + structure;
  if (plan.reduction)
    id += ":" + plan.reduction->node->op + (plan.reduction->spatial() ? "_s" : "_c");
  if (plan.pool) id += ":" + plan.pool->window.anchor->op;
  if (plan.norm) id += ":" + plan.norm->node->op;
  json ctx = {{"fn", fn},
              {"summary", summary},
              {"structure", structure},
              {"conv_text", kind},
              {"helpers", ops_.helpers()},
              {"index_t", small ? "int" : "long long"},
              {"ctype", contract::c_type(plan.dtype)},
              {"in_shape", spec::shape_string(plan.in_shape)},
              {"weight_shape", spec::shape_string(plan.weight_shape)},
              {"out_shape", spec::shape_string(plan.out_shape)},
              {"batch", plan.batch},
              {"isp", plan.in[0] * plan.in[1] * plan.in[2]},
              {"osp", plan.out[0] * plan.out[1] * plan.out[2]},
              {"cin", plan.c_in},
              {"cout", plan.c_out},
              {"groups", plan.groups},
              {"cg", plan.cin_per_group()},
              {"cog", plan.cout_per_group()},
              {"x_var", var_of.at(plan.input)},
              {"w_var", var_of.at(plan.weight)},
              {"has_bias", !plan.bias.empty()},
              {"bias_var", plan.bias.empty() ? "" : var_of.at(plan.bias)},
              {"ins", ins},
              {"outs", outs},
              {"results", results},
              {"epi_loads", epi_loads},
              {"epi_steps", epi_steps},
              {"epilogue_text", epilogue_text},
              {"igemm", q.structure == "igemm"},
              {"direct", q.structure == "direct"},
              {"tiled", q.structure == "tiled"},
              {"tiled_warps", q.block / 32},
              {"tiled_rows", q.rows},
              {"tiled_consec", q.consec},
              {"tiled_max_k", kTiledMaxK},
              {"transpose", q.structure == "transpose"},
              {"block", q.block},
              {"opt", q.opt},
              {"co", q.co},
              {"grid", q.structure == "tiled" ? tiled_blocks(plan, q) : ceil_div(threads, q.block)},
              {"unroll", plan.window() <= 64 ? "" : "1"},
              {"bm", q.bm},
              {"bn", q.bn},
              {"bk", q.bk},
              {"warps_m", q.warps_m},
              {"warps_n", q.warps_n},
              {"min_blocks", q.min_blocks},
              {"stages", q.stages},
              {"async", q.stages > 2},
              {"gemm_m", plan.gemm_m()},
              {"gemm_k", plan.gemm_k()},
              {"mode", !is_fp32 ? 0 : (q.math == "tf32" ? 1 : 2)},
              {"tr", plan.transposed ? "true" : "false"},
              {"keep_pool", keep_pool_.text}};
  // A norm's statistics are the spatial reduction's kernel with the Welford state; its pass is the
  // epilogue pass, normalizing on the way.
  const bool norm_rows = plan.norm && plan.norm->rows();
  const bool norm_stats = plan.norm && !plan.norm->running() && !norm_rows;
  ctx["reduce"] = plan.reduction || norm_stats;
  ctx["spatial"] = (plan.reduction && plan.reduction->spatial()) || norm_stats;
  ctx["pool"] = plan.pool.has_value();
  ctx["norm"] = plan.norm && !norm_rows;  // normalized element by element in the epilogue pass
  ctx["norm_stats"] = norm_stats;
  ctx["norm_running"] = plan.norm && plan.norm->running();
  ctx["norm_rows"] = norm_rows;
  ctx["fused"] = plan.reduction || plan.pool || plan.norm;
  ctx["epilogue_pass"] = transposing_pass(plan);
  ctx["epi_span"] = q.span;
  ctx["epi_vec"] = q.vload ? 16 / spec::dtype_size(plan.dtype) : 1;
  ctx["epi_tile_c"] = q.tile_c;
  if (plan.reduction || plan.pool || plan.norm) {  // the outputs are written by {{fn}}_finish
    ctx.update(red);
    ctx["red_results"] = results;
    ctx["results"] = json::array();
  }
  if (plan.reduction) ctx["red_over"] = over(*plan.reduction);
  if (plan.reduction || norm_stats) ctx["reducers"] = reducers_.text;
  add_window_context(ctx, plan.in, plan.out, plan.kernel, plan.stride, plan.pad, plan.dilation);
  ctx["cudnn"] = q.structure == "cudnn";
  if (q.structure == "cudnn") {
    add_cudnn_context(ctx, s, c, plan, q.nhwc, q.span);
    ctx["deterministic"] = cudnn_use_ == Cudnn::deterministic_engines;
  }
  ctx["algo"] = q.algo;
  ctx["common"] = render::render(common_.text, ctx, common_.name);
  const render::Template& body = q.structure == "igemm"    ? igemm_
                                 : q.structure == "tiled"  ? tiled_
                                 : q.structure == "direct" ? direct_
                                 : q.structure == "cudnn"  ? cudnn_
                                                           : transpose_;
  Candidate cand;
  cand.id = id;
  cand.summary = summary;
  cand.params = q.to_json();
  cand.code.device_code = render::render(body.text, ctx, body.name);
  cand.code.launch_body = render::render(launch_.text, ctx, launch_.name);
  return cand;
}

// ---- stage 1 and stage 2 ------------------------------------------------------------------

std::vector<ConvParams> conv_structures(const ConvPlan& p) {
  std::vector<ConvParams> out;
  auto add = [&](const ConvParams& q) {
    if (conv_params_unsupported(p, q)) return;
    for (const auto& o : out)
      if (o.to_json() == q.to_json()) return;
    out.push_back(q);
  };
  ConvParams direct;
  direct.structure = p.transposed ? "transpose" : "direct";
  direct.co = default_co(p);
  if (p.transposed) {
    // The gather kernel, then (channel-rich groups) the implicit GEMM by output phase.
    add(direct);
    if (p.gemm_n() >= 16 && p.cin_per_group() >= 16) add(igemm_default(p, "tf32"));
    return out;
  }
  // Prior: tensor cores for channel-rich convolutions (TF32 first for fp32, as PyTorch computes
  // convolutions by default; 3xTF32 as the fp32-accurate alternative), the direct kernel first for
  // depthwise and thin groups.
  //
  // A short reduction (a group's C_in x window): the tiled kernel, one pass writing the output.
  // First where one block's tile holds every output channel of a group (the input read once) and
  // a bias or epilogue would cost the library route a pass of its own, the reduction is at most
  // 32, or the input has fewer than 4 channels (which cuDNN's tensor-core kernels pad); after the
  // implicit GEMM otherwise. Measured on the H100 (docs/PERFORMANCE.md, 2026-12-06 ninth session):
  // 64 output channels and 72-long reductions, 0.63-3.32 ms against 0.94-4.15 for cuDNN plus the
  // pass (level2/57, 71, 87); 3 input channels, 81 long, 1.49 against eager's 1.83 (level1/54);
  // 128 channels without a pass, 2.4x slower than cuDNN (level1/87).
  const bool tiled_first =
      p.gemm_n() >= 16 && p.gemm_n() <= 64 &&
      (!p.bias.empty() || !p.epilogue.empty() || p.gemm_k() <= 32 || p.c_in < 4);
  const ConvParams tiled = tiled_default(p);
  if (tiled_first) add(tiled);
  if (prefer_direct(p)) add(direct);
  add(igemm_default(p, "tf32"));
  if (!tiled_first && p.gemm_n() >= 16) add(tiled);
  if (fp32(p)) add(igemm_default(p, "3xtf32"));
  add(direct);
  return out;
}

std::vector<ConvParams> conv_tuning_space(const ConvPlan& p, const ConvParams& inc,
                                          const std::string& bottleneck, bool epilogue_pass) {
  std::vector<ConvParams> out;
  auto add = [&](const ConvParams& q) {
    if (conv_params_unsupported(p, q)) return;
    for (const auto& o : out)
      if (o.to_json() == q.to_json()) return;
    out.push_back(q);
  };
  // The incumbent with one field set to each of `values` in turn.
  auto vary = [&](int ConvParams::*field, const std::vector<int>& values) {
    for (const int v : values) {
      ConvParams q = inc;
      q.*field = v;
      add(q);
    }
  };
  if (inc.structure == "cudnn") {
    // The transposing epilogue pass first, whose structures start at 256 positions a channel
    // with 16-byte loads (structure_params): that tile where stage 1 took another, then
    // torch.compile's tile for the same pass (16 channels x 256 positions on 8 warps, the
    // positions the grid's fastest index; Inductor's Triton kernel ran level2/5's pass in 1.672
    // ms on the H100, this pass 1.604 in the product and 1.602 in the microbenchmark since its
    // full tiles store without a test, the 16-channel tile 2.005: docs/PERFORMANCE.md, 2026-12-07
    // eighteenth session), then 128 and 32 positions a lane a channel (32: the
    // 128-byte runs a channel, every run's ends inside a 32-byte sector where the plane is no
    // multiple of 8 positions long: 2.284 ms on level2/5).
    if (epilogue_pass && inc.nhwc) {
      ConvParams wide = inc;
      wide.span = 256;
      wide.vload = true;
      add(wide);
      ConvParams c16 = wide;
      c16.tile_c = 16;
      add(c16);
      ConvParams p128 = inc;
      p128.span = 128;
      p128.vload = false;
      p128.tile_c = 32;
      add(p128);
      ConvParams p32 = p128;
      p32.span = 32;
      add(p32);
    }
    // A channel softmax's tile: the other spans (stage 1 took the widest that fits).
    if (dnn_reduce_rows(p) && inc.nhwc) vary(&ConvParams::span, {64, 32, 128});
    // The library floor, measured: the heuristic's ranks after the incumbent's (stage 1 measured
    // rank 0, PyTorch's pick without cudnn.benchmark), as cudnn.benchmark would time them.
    for (int rank = 0; rank < kCudnnRanksTuned; ++rank) {
      ConvParams q = inc;
      q.algo = rank;
      if (rank != inc.algo) add(q);
    }
    if (epilogue_pass && inc.nhwc) vary(&ConvParams::span, {64});
    return out;
  }
  add(inc);
  if (inc.structure == "tiled") {
    // Consecutive outputs a lane first (a row's inputs read once as float4s instead of once per
    // window tap), then rows per block (the weights' reuse against the grid's size), outputs
    // along W, channels per warp, then the block's warps.
    ConvParams consec = inc;
    consec.consec = !inc.consec;
    add(consec);
    vary(&ConvParams::rows, {1, 2, 4, 8});
    vary(&ConvParams::opt, {1, 2, 4});
    vary(&ConvParams::co, {4, 8});
    vary(&ConvParams::block, {inc.block == 256 ? 128 : 256});
  } else if (inc.structure == "igemm") {
    // Tiles first: larger N tiles for channel-rich groups, smaller M tiles when the grid would not
    // fill the GPU. 64x64 warp tiles (fp32's cp.async stages only: register staging would spill)
    // read the fewest shared bytes and issue the fewest instructions an MMA.
    struct Tile {
      int bm, bn, bk, wm, wn;
    };
    const std::int64_t blocks = ceil_div(p.gemm_m(), 128) * ceil_div(p.gemm_n(), 64) * p.groups;
    // (Tiles whose A/B register staging spills on sm_90 are left out: 64x64x64, 128x64x64, 256x64.)
    std::vector<Tile> tiles = {{128, 64, 32, 4, 2}, {128, 128, 32, 2, 4}, {64, 64, 32, 2, 2},
                               {128, 32, 32, 4, 1}, {64, 32, 32, 2, 1},   {128, 16, 32, 4, 1}};
    if (blocks < 264) std::swap(tiles[1], tiles[2]);  // fewer than two blocks per SM: smaller tiles
    if (inc.stages > 2) tiles.insert(tiles.begin(), {{128, 128, 32, 2, 2}, {128, 64, 32, 2, 2}});
    for (const auto& t : tiles) {
      // An N tile twice a group's channels (or more) would leave half its MMAs on zero weights
      // (level2/2, 64 channels: 128x128 ran 2.1x 128x64's time on the H100).
      if (t.bn >= 2 * ceil_div(p.gemm_n(), 16) * 16) continue;
      ConvParams q = inc;
      q.bm = t.bm, q.bn = t.bn, q.bk = t.bk, q.warps_m = t.wm, q.warps_n = t.wn;
      add(q);
    }
    if (fp32(p)) vary(&ConvParams::stages, {4, 2});
    // Two blocks per SM: registers capped at 128 per thread for occupancy (may spill a little).
    vary(&ConvParams::min_blocks, {inc.min_blocks == 1 ? 2 : 1});
  } else {
    const bool latency = bottleneck == "latency" || bottleneck == "launch";
    vary(&ConvParams::block, latency ? std::vector<int>{128, 64} : std::vector<int>{128, 512});
    vary(&ConvParams::co, {1, 2, 4, 8});
    if (inc.structure == "direct") vary(&ConvParams::opt, {1, 2, 4});
  }
  if (out.size() > 10) out.resize(10);
  return out;
}

// The transposing pass after cuDNN's channels-last call takes 256 positions a channel and 16-byte
// loads from stage 1 on, where the convolution allows them: on the H100 that pass ran level2/5's
// in 1.604 ms against 2.284 for 32 positions (its stores, without a bounds test in a full tile,
// share a channel's epilogue loads), and ran faster than 32 positions on 5 of the 7 conv-led
// problems that measured both, within 0.3 % on the other two (docs/PERFORMANCE.md, 2026-12-07
// eighteenth session). Stage 2 tries 32 positions again. A softmax over the channels after
// cuDNN's channels-last call takes its widest tile the same way (dnn_rows_widest_span).
std::vector<ConvParams> ConvFamily::structure_params(const spec::Spec& s,
                                                     const contract::Contract& c,
                                                     const ConvPlan& pl) const {
  std::vector<ConvParams> out = structure_order(s, c, pl);
  if (dnn_reduce_rows(pl)) {
    for (auto& q : out)
      if (q.structure == "cudnn" && q.nhwc) q.span = dnn_rows_widest_span(pl);
    return out;
  }
  if (!cudnn_needs_pass(s, c, pl) || !transposing_pass(pl)) return out;
  for (auto& q : out) {
    if (q.structure != "cudnn" || !q.nhwc) continue;
    ConvParams wide = q;
    wide.span = 256;
    wide.vload = true;
    if (!conv_params_unsupported(pl, wide)) q = wide;
  }
  return out;
}

std::vector<ConvParams> ConvFamily::structure_order(const spec::Spec& s,
                                                    const contract::Contract& c,
                                                    const ConvPlan& pl) const {
  std::vector<ConvParams> out = conv_structures(pl);
  // cuDNN in both layouts, the layout change counted in the channels-last one: first for a
  // channel-rich forward convolution, where EGG's implicit GEMM won 3 of 52 KernelBench forward
  // convolutions against cuDNN on the H200 (docs/PERFORMANCE.md), so that a budget of two
  // measures the library's two layouts; second and third after EGG's own kernel for a transposed
  // convolution without a pass after cuDNN (its gather kernel won 7 of 42) and for depthwise and
  // thin groups (the direct kernel).
  ConvParams dnn;
  dnn.structure = "cudnn";
  if (pl.reduction || pl.pool || pl.norm) {
    // A fused reduction, pool or norm: cuDNN's channels-last result read by its pass first (the
    // library's convolution, its full-size result never transposed back), then the implicit GEMM
    // with the reduction in its epilogue (measured far slower on the H200: 12.5 against 4.0 ms on
    // a 64-channel 3x3 convolution at 128x16x256x256, docs/PERFORMANCE.md).
    dnn.nhwc = true;
    if (cudnn_use_ != Cudnn::absent && !conv_params_unsupported(pl, dnn))
      out.insert(out.begin(), dnn);
    // A norm with running statistics in the pass after cuDNN in either layout: channels-last
    // first (its pass transposes the result back itself), then NCHW (cuDNN's own transposes).
    ConvParams nchw = dnn;
    nchw.nhwc = false;
    if (cudnn_use_ != Cudnn::absent && pl.norm && !conv_params_unsupported(pl, nchw))
      out.insert(out.begin() + std::min<std::ptrdiff_t>(1, std::ssize(out)), nchw);
    return out;
  }
  if (cudnn_use_ != Cudnn::absent && !conv_params_unsupported(pl, dnn) && cudnn_scratch(s, c, pl)) {
    ConvParams last = dnn;
    last.nhwc = true;
    const bool last_ok = !conv_params_unsupported(pl, last);
    if (pl.transposed && last_ok && cudnn_needs_pass(s, c, pl)) {
      // A transposed convolution with a bias or epilogue: channels-last first, then the gather
      // kernel, then NCHW. cuDNN's backward-data engines compute in NHWC whatever the layout
      // (an NCHW call transposes in and back inside cuDNN), so with a pass to run anyway the
      // channels-last call saves a full pass over the output: the epilogue pass transposes back
      // itself. Measured on the H100 (docs/PERFORMANCE.md, 2026-12-06 ninth session): level2/2's
      // NCHW call ran cuDNN's nhwcToNchw kernel for 1.43 of its 5.34 ms, and torch.compile's
      // channels-last graph took 3.40 ms.
      out.insert(out.begin(), last);
      out.insert(out.begin() + std::min<std::ptrdiff_t>(2, std::ssize(out)), dnn);
      // fp32 with channel-rich groups: the implicit GEMM by output phase second (NCHW in and out,
      // the epilogue in its stores; the channels-last call's transposing pass took 2.27 of
      // level2/5's 4.26 ms on the H100), the gather kernel third. It won level2/2 (3.06 against
      // 3.39 ms) and lost level2/5 and 16 (docs/PERFORMANCE.md, 2026-12-07 sixteenth session).
      if (igemm_after_channels_last(pl))
        if (const auto q = take_igemm_tf32(out)) out.insert(out.begin() + 1, *q);
      return out;
    }
    // After EGG's own kernel where it is the prior (transposed, thin groups, a short reduction);
    // there, with a pass after cuDNN, channels-last before NCHW: it won all three such forward
    // convolutions of level 2 measured on the H100 (57, 71, 87: 0.94-4.15 against 1.12-4.70 ms,
    // docs/PERFORMANCE.md, 2026-12-06 ninth session).
    const bool own_first =
        !out.empty() && (pl.transposed || prefer_direct(pl) || out.front().structure == "tiled");
    const std::ptrdiff_t at = own_first ? 1 : 0;
    const bool last_first = own_first && !pl.transposed && last_ok && cudnn_needs_pass(s, c, pl);
    // An fp32 convolution with channel-rich groups and a pass after cuDNN: cuDNN's channels-last
    // call (input transposed, the convolution, the transposing epilogue pass; it won 42 of level
    // 2's convolutions), then the implicit GEMM, which reads and writes NC(D)HW with the epilogue
    // in its own stores (no layout change and no pass, which took 3.55 of the channels-last call's
    // 5.28 ms on level2/4, docs/PERFORMANCE.md, 2026-12-06 tenth session), then NCHW. Measured in
    // the sixteenth session it ran 1.1-1.75x cuDNN's time on the forward problems it met (within
    // 8 % on a ResNet block), at a quarter of cuDNN's throughput: measurement decides.
    if (!own_first && !pl.transposed && last_ok && cudnn_needs_pass(s, c, pl) &&
        igemm_after_channels_last(pl))
      if (const auto q = take_igemm_tf32(out)) {
        out.insert(out.begin(), {last, *q, dnn});
        return out;
      }
    out.insert(out.begin() + at, last_first ? last : dnn);
    if (last_first)
      out.insert(out.begin() + at + 1, dnn);
    else if (last_ok)
      out.insert(out.begin() + at + 1, last);
  }
  return out;
}

std::vector<ConvParams> ConvFamily::tuning_params(const spec::Spec& s, const contract::Contract& c,
                                                  const ConvPlan& pl, const ConvParams& incumbent,
                                                  const std::string& bottleneck) const {
  const bool epilogue_pass =
      incumbent.structure == "cudnn" && cudnn_needs_pass(s, c, pl) && transposing_pass(pl);
  return conv_tuning_space(pl, incumbent, bottleneck, epilogue_pass);
}

std::optional<ConvParams> ConvFamily::fallback_params(const spec::Spec&, const contract::Contract&,
                                                      const ConvPlan& pl,
                                                      const ConvParams& failed) const {
  // A rank cuDNN's heuristic does not reach for this convolution, or channels-last it does not
  // take: nothing to repair (rank 0 in NCHW was measured already).
  if (failed.structure == "cudnn" && (failed.algo > 0 || failed.nhwc)) return std::nullopt;
  // A fused pool reads cuDNN's result alone; a channel reduction: the implicit GEMM's default
  // tile, where it holds every channel.
  if (pl.pool || pl.norm) return std::nullopt;
  if (pl.reduction) {
    ConvParams q = igemm_default(pl, "tf32");
    if (conv_params_unsupported(pl, q)) return std::nullopt;
    return q;
  }
  // The simplest structure: the direct (or gather) kernel, a thread per output, 256 threads.
  ConvParams q;
  q.structure = pl.transposed ? "transpose" : "direct";
  return q;
}

}  // namespace egg::backend::builtin
