#include "backend/builtin/attention.h"
#include "backend/builtin/gpu_target.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "backend/builtin/plan_util.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

// The largest head dim the kernel keeps in registers (Q's fragments and the output accumulators
// of a warp's rows).
constexpr std::int64_t kMaxHeadDim = 128;
// Shared memory a block may opt into on sm_80 and later.
constexpr std::int64_t kMaxSmem = 227 * 1024;
// The largest head dim the fp32 kernel keeps in registers (a thread's query and output rows).
constexpr std::int64_t kMaxSimtHeadDim = 64;

// True when `n` swaps dims 1 and 2 of a 4-d value: transpose(1, 2) or permute(0, 2, 1, 3).
bool swaps_heads(const spec::Node& n) { return n.shape.size() == 4 && swaps_dims(n, 1, 2); }

// The wgmma kernel's parameters: `wgs` warpgroups of 64 query rows a block, key tiles of `bk`,
// pipelined or not.
AttentionParams wg_params(int wgs, int bk, bool pipe) {
  AttentionParams p{1, 4 * wgs, bk};
  p.wgs = wgs;
  p.pipe = pipe;
  return p;
}

// Shared memory of the wgmma kernel (flash_wg.cuh.tmpl's SMEM_BYTES) with `stages` key/value
// tiles: Q's rows, the tiles, and the 1024 bytes that align them for the swizzle.
std::int64_t wg_smem(const AttentionPlan& plan, const AttentionParams& p, int stages) {
  return (std::int64_t{64} * p.wgs + 2 * std::int64_t{stages} * p.bk) * plan.e * 2 + 1024;
}

// The wgmma kernel's key/value stages: three (two tiles ahead); pipelined, four where they fit
// (a tile's V is read one iteration later, so four keep two tiles ahead), else three (one ahead).
int wg_stages(const AttentionPlan& plan, const AttentionParams& p) {
  return p.pipe && wg_smem(plan, p, 4) <= kMaxSmem ? 4 : 3;
}

std::int64_t wg_smem(const AttentionPlan& plan, const AttentionParams& p) {
  return wg_smem(plan, p, wg_stages(plan, p));
}

// The blocks an SM keeps of the wgmma kernel (its __launch_bounds__ minimum): as many as the
// registers (bk/2 score and d/2 output accumulators, P's fragments: bk/8 registers, bk/4 when
// pipelined, as they live beside the next tile's scores, and about 48 for addresses, row
// statistics and the mask) and the shared memory allow, at most 4.
int wg_min_blocks(const AttentionPlan& plan, const AttentionParams& p) {
  const std::int64_t regs =
      (p.bk / 2 + plan.e / 2 + (p.pipe ? p.bk / 4 : p.bk / 8) + 48 + 7) / 8 * 8;
  const std::int64_t by_regs = 65536 / (std::int64_t{128} * p.wgs * regs);
  const std::int64_t by_smem = (kMaxSmem + 1024) / wg_smem(plan, p);
  return static_cast<int>(std::clamp<std::int64_t>(std::min(by_regs, by_smem), 1, 4));
}

// The fp32 kernel's parameters: `warps` x 32 lanes a block, `split` of them a query row, key
// tiles of `bk`.
AttentionParams simt_params(int warps, int bk, int split = 1) {
  AttentionParams p{1, warps, bk};
  p.simt = true;
  p.split = split;
  return p;
}

// Lanes per query row for the fp32 kernel: 1 where the rows alone give every SM four warps, else
// the power of two (at most 8) that comes closest to it: a thread per row of a small problem
// (a transformer block's 2 x 8 heads x 128 queries) leaves most SMs empty and each dependent
// multiply-add's latency exposed.
int simt_split(const AttentionPlan& plan) {
  const std::int64_t rows = plan.batch() * plan.l, wanted = kSms * 128;
  int split = 1;
  while (split < 8 && rows * split < wanted) split *= 2;
  return split;
}

// The fp32 kernel's keys per online-softmax step of a lane (simt.cuh.tmpl's CH): 16 for a thread
// a row, 8 for a lane of a split row.
int simt_keys_per_step(const AttentionParams& p) { return p.split == 1 ? 16 : 8; }

// The fp32 kernel's key/value tile row stride in floats (simt.cuh.tmpl's KS): the head dim padded
// to float4s, and 4 more for a split row, so its parts' rows fall in different banks.
std::int64_t simt_tile_stride(const AttentionPlan& plan, const AttentionParams& p) {
  const std::int64_t ep = (plan.e + 3) / 4 * 4;
  return p.split == 1 ? ep : ep + 4;
}

bool valid(const AttentionPlan& plan, const AttentionParams& p) {
  if (p.wgs > 0)  // wgmma: 16-bit operands, a head dim of one or two 128-byte panels
    return !p.simt && plan.dtype != spec::DType::float32 && (plan.e == 64 || plan.e == 128) &&
           p.wgs >= 1 && p.wgs <= 3 && (p.bk == 64 || p.bk == 128) && wg_smem(plan, p) <= kMaxSmem;
  if (p.simt || plan.dtype == spec::DType::float32) {
    // fp32 on CUDA cores: key and value tiles of BK rows in static shared memory.
    const int ch = simt_keys_per_step(p);
    const std::int64_t stride = simt_tile_stride(plan, p);
    return p.simt && plan.dtype == spec::DType::float32 && plan.e <= kMaxSimtHeadDim &&
           (p.warps == 1 || p.warps == 2 || p.warps == 4) && (p.bk == 32 || p.bk == 64) &&
           (p.split == 1 || p.split == 2 || p.split == 4 || p.split == 8) &&
           p.bk % (ch * p.split) == 0 && 2 * p.bk * stride * 4 <= 48 * 1024;
  }
  const std::int64_t d = plan.padded_e();
  const std::int64_t bq = std::int64_t{p.warps} * p.mt * 16;
  const std::int64_t smem = (bq + 4 * std::int64_t{p.bk}) * (d + 8) * 2;
  // Registers per thread and m-tile: d/2 output accumulators, bk/2 scores, and with Q in
  // registers d/4 Q fragments. Kept within ptxas's 255 without spills (checked with -Xptxas -v):
  // two m-tiles at d <= 64 (with 128-key tiles only when Q is read from shared memory), one at
  // d = 128 with at most 64-key tiles.
  const bool regs =
      p.mt == 1 ? (p.bk <= 64 || d <= 64) : (p.mt == 2 && d <= 64 && (p.bk <= 64 || p.qs));
  return regs && (p.warps == 4 || p.warps == 8) && (p.bk == 32 || p.bk == 64 || p.bk == 128) &&
         smem <= kMaxSmem;
}

}  // namespace

std::int64_t AttentionPlan::batch() const {
  std::int64_t b = 1;
  for (auto d : batch_dims) b *= d;
  return b;
}

namespace {

// The one attention node, or why there is none (no line: another family explains better) or a
// second.
std::variant<const spec::Node*, UserError> attention_anchor(const spec::Spec& s) {
  const spec::Node* anchor = nullptr;
  for (const auto& n : s.nodes) {
    if (n.op != "scaled_dot_product_attention") continue;
    if (anchor)
      return UserError(n.where, quote(n) + " is a second attention after `" + anchor->target + "`" +
                                    at_line(*anchor) +
                                    "; the builtin attention family runs one per kernel");
    anchor = &n;
  }
  if (!anchor)
    return UserError({s.op_file, 0, "output"},
                     "the graph has no scaled_dot_product_attention (the attention family's "
                     "anchor)");
  return anchor;
}

// The tensor argument k of `an`, or null.
const spec::Tensor* arg_tensor(const spec::Spec& s, const spec::Node& an, size_t k) {
  return k < an.args.size() && an.args[k].kind == spec::Arg::Kind::node
             ? s.find_tensor(an.args[k].node)
             : nullptr;
}

// Query, key and value as they are, or through the strided view fold_attention_views recorded (the
// node's `layouts`): their tensors, shapes, strides and offsets, one float dtype.
std::optional<UserError> attention_operands(const spec::Spec& s, AttentionPlan& plan) {
  const spec::Node& an = *plan.anchor;
  const json& layouts = an.attrs.value("layouts", json());
  auto operand = [&](size_t k, AttentionOperand& o) -> const spec::Tensor* {
    const spec::Tensor* t = arg_tensor(s, an, k);
    if (!t) return nullptr;
    o.tensor = t->name;
    if (layouts.is_array() && k < layouts.size() && layouts[k].is_object()) {
      o.shape = layouts[k].at("shape").get<spec::Shape>();
      o.strides = layouts[k].at("strides").get<std::vector<std::int64_t>>();
      o.offset = layouts[k].at("offset").get<std::int64_t>();
      if (layouts[k].contains("batch"))
        o.batch = layouts[k]["batch"].get<std::vector<std::pair<std::int64_t, std::int64_t>>>();
    } else {
      o.shape = t->shape;
      o.strides.assign(t->shape.size(), 1);
      for (size_t d = t->shape.size(); d-- > 1;) o.strides[d - 1] = o.strides[d] * t->shape[d];
    }
    return t;
  };
  const spec::Tensor *q = operand(0, plan.q), *k = operand(1, plan.k), *v = operand(2, plan.v);
  if (!q || !k || !v)
    return UserError(an.where, quote(an) +
                                   ": the attention kernel reads query, key and value as "
                                   "tensors (their producers run as kernels of their own)");
  for (const auto* t : {q, k, v})
    if (t->dtype != spec::DType::float16 && t->dtype != spec::DType::bfloat16 &&
        t->dtype != spec::DType::float32)
      return UserError(an.where,
                       quote(an) + " of " + spec::dtype_name(t->dtype) +
                           " tensors: the flash-attention kernels compute float16 and bfloat16 "
                           "on tensor cores and float32 on CUDA cores; other dtypes run as the "
                           "math (matmul, softmax, matmul)");
  if (k->dtype != q->dtype || v->dtype != q->dtype)
    return UserError(an.where, quote(an) + ": query, key and value differ in dtype");
  plan.dtype = q->dtype;
  return std::nullopt;
}

// The problem's shape: batch and head dims shared (key and value heads in groups under
// enable_gqa), one head dim, rows read with adjacent elements, within the kernels' limits.
std::optional<UserError> attention_shape(AttentionPlan& plan) {
  const spec::Node& an = *plan.anchor;
  const spec::Shape &qs = plan.q.shape, &ks = plan.k.shape, &vs = plan.v.shape;
  const size_t r = qs.size();
  // Grouped-query attention (enable_gqa): key and value hold fewer heads (dim -3), each shared by
  // a group of the query's.
  const bool gqa = an.attrs.value("enable_gqa", false) && r >= 3 && ks.size() == r &&
                   vs.size() == r && ks[r - 3] == vs[r - 3] && ks[r - 3] > 0 &&
                   qs[r - 3] % ks[r - 3] == 0;
  auto same_batch = [&](const spec::Shape& o) {
    for (size_t d = 0; d + 2 < r; ++d)
      if (o[d] != qs[d] && !(gqa && d + 3 == r)) return false;
    return true;
  };
  if (gqa) plan.k.group = plan.v.group = qs[r - 3] / ks[r - 3];
  if (r < 2 || ks.size() != r || vs.size() != r || !same_batch(ks) || !same_batch(vs))
    return UserError(an.where, quote(an) + ": query " + spec::shape_string(qs) + ", key " +
                                   spec::shape_string(ks) + " and value " + spec::shape_string(vs) +
                                   " must share their batch and head dims");
  plan.l = qs[r - 2];
  plan.e = qs[r - 1];
  plan.s = ks[r - 2];
  if (ks[r - 1] != plan.e || vs[r - 1] != plan.e || vs[r - 2] != plan.s)
    return UserError(an.where, quote(an) +
                                   ": the flash-attention kernel needs one head dim for "
                                   "query, key and value (" +
                                   spec::shape_string(qs) + ", " + spec::shape_string(ks) + ", " +
                                   spec::shape_string(vs) + ")");
  for (const auto* o : {&plan.q, &plan.k, &plan.v}) {
    std::int64_t entries = 1;
    for (const auto& digit : o->batch) entries *= digit.first;
    if (!o->batch.empty() && entries != spec::numel(spec::Shape(qs.begin(), qs.end() - 2)))
      return UserError(an.where, quote(an) +
                                     ": an operand's regrouped batch dims do not cover "
                                     "the query's batch entries");
  }
  for (const auto* o : {&plan.q, &plan.k, &plan.v}) {
    if (o->strides.back() != 1)
      return UserError(an.where, quote(an) +
                                     ": the flash-attention kernel reads rows whose "
                                     "elements are adjacent");
  }
  const bool fp32 = plan.dtype == spec::DType::float32;
  if (fp32 ? plan.e > kMaxSimtHeadDim : (plan.e % 8 != 0 || plan.e > kMaxHeadDim))
    return UserError(an.where,
                     quote(an) + " with head dim " + std::to_string(plan.e) +
                         (fp32 ? ": the fp32 attention kernel keeps a row in registers, up to " +
                                     std::to_string(kMaxSimtHeadDim)
                               : ": the flash-attention kernel takes multiples of 8 up to " +
                                     std::to_string(kMaxHeadDim)));
  if (plan.l >= (std::int64_t{1} << 30) || plan.s >= (std::int64_t{1} << 30))
    return UserError(an.where, quote(an) +
                                   ": the flash-attention kernel indexes queries and "
                                   "keys with 32-bit integers (fewer than 2^30 each)");
  if (plan.l == 0 || plan.s == 0 || plan.e == 0)
    return UserError(an.where, quote(an) + " of an empty tensor is not supported");
  plan.batch_dims.assign(qs.begin(), qs.end() - 2);
  return std::nullopt;
}

// Causality, the scale (1/sqrt(E) unless given; positive and finite) and no dropout.
std::optional<UserError> attention_options(AttentionPlan& plan) {
  const spec::Node& an = *plan.anchor;
  if (an.attrs.value("dropout_p", 0.0) != 0.0)
    return UserError(an.where, quote(an) +
                                   " with dropout draws random numbers; the "
                                   "flash-attention kernel runs dropout_p=0");
  plan.causal = an.attrs.value("is_causal", false);
  const auto scale = an.attrs.find("scale");
  plan.scale = scale == an.attrs.end() || scale->is_null()
                   ? 1.0 / std::sqrt(static_cast<double>(plan.e))
                   : scale->get<double>();
  if (!(plan.scale > 0.0) || !std::isfinite(plan.scale))
    return UserError(an.where, quote(an) + " with scale " + std::to_string(plan.scale) +
                                   ": the flash-attention kernel takes a positive finite scale");
  return std::nullopt;
}

// The mask (argument 3), where there is one: a bool or float tensor that broadcasts to the
// scores [batch..., L, S], read through its own strides (0 along broadcast dims).
std::optional<UserError> attention_mask(const spec::Spec& s, AttentionPlan& plan) {
  const spec::Node& an = *plan.anchor;
  if (an.args.size() <= 3 || an.args[3].kind != spec::Arg::Kind::node) return std::nullopt;
  const spec::Tensor* m = arg_tensor(s, an, 3);
  if (!m)
    return UserError(an.where, quote(an) +
                                   ": the attention kernel reads the mask as a tensor "
                                   "(its producer runs as a kernel of its own)");
  if (m->dtype != spec::DType::boolean && !float_storage(m->dtype))
    return UserError(an.where, quote(an) + ": a mask of " + spec::dtype_name(m->dtype) +
                                   " is neither bool nor a float");
  const size_t r = plan.q.shape.size();
  spec::Shape scores = plan.q.shape;
  scores[r - 1] = plan.s;
  if (m->shape.size() > r || !broadcasts_to(m->shape, scores))
    return UserError(an.where, quote(an) + ": the mask " + spec::shape_string(m->shape) +
                                   " does not broadcast to the scores " +
                                   spec::shape_string(scores));
  // Strides of the contiguous mask, right-aligned against [batch..., L, S]; 0 where broadcast.
  std::vector<std::int64_t> stride(r, 0);
  std::int64_t running = 1;
  for (size_t j = 0; j < m->shape.size(); ++j) {
    const size_t md = m->shape.size() - 1 - j, d = r - 1 - j;
    stride[d] = m->shape[md] == 1 ? 0 : running;
    running *= m->shape[md];
  }
  plan.mask = m->name;
  plan.mask_dtype = m->dtype;
  plan.mask_stride_l = stride[r - 2];
  plan.mask_stride_s = stride[r - 1];
  plan.mask_batch_strides.assign(stride.begin(), stride.end() - 2);
  return std::nullopt;
}

// The output: the attention itself or its transpose(1, 2), then copies and views that keep the
// order of its elements (the heads' reshape into one dim, export's clone of a returned view);
// nothing else.
std::optional<UserError> attention_output(const spec::Spec& s, AttentionPlan& plan) {
  static const std::set<std::string> same_bytes = {
      "clone", "contiguous", "reshape", "view", "flatten", "unsqueeze", "squeeze", "_unsafe_view"};
  const spec::Node& an = *plan.anchor;
  const spec::Node* written = &an;
  for (const auto& n : s.nodes) {
    if (&n == &an) continue;
    const bool reads_written = !n.args.empty() && n.args[0].kind == spec::Arg::Kind::node &&
                               n.args[0].node == written->name;
    const bool swap = written == &an && reads_written && swaps_heads(n);
    const bool same = reads_written && same_bytes.count(n.op) && n.dtype == an.dtype &&
                      spec::numel(n.shape) == spec::numel(an.shape);
    if (!swap && !same)
      return UserError(n.where, quote(n) +
                                    ": the attention kernel writes its output as it is or "
                                    "transposed (1, 2); other ops run as kernels of their own");
    if (swap) plan.out_heads = plan.q.shape[1];
    written = &n;
  }
  if (s.outputs.size() != 1 || s.outputs[0].node != written->name)
    return UserError(an.where, quote(an) +
                                   ": the attention kernel writes one output, its last "
                                   "value (" +
                                   written->name + ")");
  return std::nullopt;
}

}  // namespace

std::variant<AttentionPlan, UserError> plan_attention(const spec::Spec& s) {
  const auto anchor = attention_anchor(s);
  if (const auto* e = std::get_if<UserError>(&anchor)) return *e;
  AttentionPlan plan;
  plan.anchor = std::get<const spec::Node*>(anchor);
  if (auto e = attention_operands(s, plan)) return *e;
  if (auto e = attention_shape(plan)) return *e;
  if (auto e = attention_options(plan)) return *e;
  if (auto e = attention_mask(s, plan)) return *e;
  if (auto e = attention_output(s, plan)) return *e;
  return plan;
}

json AttentionParams::to_json() const {
  if (wgs > 0) return {{"wgs", wgs}, {"bk", bk}, {"pipe", pipe}};
  if (simt && split > 1) return {{"simt", true}, {"warps", warps}, {"bk", bk}, {"split", split}};
  if (simt) return {{"simt", true}, {"warps", warps}, {"bk", bk}};
  return {{"mt", mt}, {"warps", warps}, {"bk", bk}, {"qs", qs}};
}

AttentionParams AttentionParams::from_json(const json& j) {
  AttentionParams p;
  p.mt = j.value("mt", p.mt);
  p.warps = j.value("warps", p.warps);
  p.bk = j.value("bk", p.bk);
  p.qs = j.value("qs", p.qs);
  p.simt = j.value("simt", p.simt);
  p.split = j.value("split", p.split);
  p.wgs = j.value("wgs", p.wgs);
  p.pipe = j.value("pipe", p.pipe);
  if (p.wgs > 0) p.warps = 4 * p.wgs;
  return p;
}

AttentionFamily::AttentionFamily(const std::filesystem::path& data_dir, bool wgmma)
    : common_(render::load_template(data_dir, "attention/common.cuh.tmpl")),
      kernel_(render::load_template(data_dir, "attention/flash.cuh.tmpl")),
      simt_(render::load_template(data_dir, "attention/simt.cuh.tmpl")),
      wg_(render::load_template(data_dir, "attention/flash_wg.cuh.tmpl")),
      launch_(render::load_template(data_dir, "attention/launch.tmpl")),
      wgmma_(wgmma) {}

std::vector<std::pair<std::string, std::string>> AttentionFamily::key_inputs() const {
  return {{common_.name, common_.text},
          {kernel_.name, kernel_.text},
          {simt_.name, simt_.text},
          {wg_.name, wg_.text},
          {launch_.name, launch_.text}};
}

std::variant<AttentionPlan, UserError> AttentionFamily::analyze(const spec::Spec& s) const {
  return plan_attention(s);
}

Candidate AttentionFamily::render(const spec::Spec& s, const contract::Contract& c,
                                  const AttentionPlan& plan, const AttentionParams& p) const {
  (void)s;
  const std::string fn = "egg_" + c.name;
  auto var_of = [&](const std::string& source) -> std::string {
    for (const auto& a : c.args)
      if (a.role != contract::Role::output && a.source == source) return a.var;
    throw InternalError("attention family: " + source + " is not in the contract");
  };
  std::string out;
  for (const auto& a : c.args)
    if (a.role == contract::Role::output) out = a.var;
  if (out.empty()) throw InternalError("attention family: the output is not in the contract");
  json args = {var_of(plan.q.tensor), var_of(plan.k.tensor), var_of(plan.v.tensor)};
  // Per operand: each batch entry's first row (the digits of the entry's index over the batch
  // dims, times their strides) and the stride of its rows.
  json operands = json::array();
  const std::pair<const char*, const AttentionOperand*> named[] = {
      {"q", &plan.q}, {"k", &plan.k}, {"v", &plan.v}};
  for (const auto& [name, o] : named) {
    json dims = json::array();
    std::int64_t div = 1;
    if (!o->batch.empty()) {
      for (size_t d = o->batch.size(); d-- > 0;) {
        const auto [size, stride] = o->batch[d];
        if (stride != 0 && size > 1)
          dims.push_back({{"div", div}, {"size", size}, {"group", 1}, {"stride", stride}});
        div *= size;
      }
    } else {
      for (size_t d = plan.batch_dims.size(); d-- > 0;) {
        // The query's head dim names a key/value head of its group (enable_gqa).
        const std::int64_t group = d + 1 == plan.batch_dims.size() ? o->group : 1;
        if (o->strides[d] != 0 && plan.batch_dims[d] > group)
          dims.push_back({{"div", div},
                          {"size", plan.batch_dims[d]},
                          {"group", group},
                          {"stride", o->strides[d]}});
        div *= plan.batch_dims[d];
      }
    }
    operands.push_back({{"name", name}, {"offset", o->offset}, {"dims", dims}});
  }
  auto row = [](const AttentionOperand& o) { return o.strides[o.strides.size() - 2]; };
  if (!plan.mask.empty()) args.push_back(var_of(plan.mask));
  args.push_back(out);

  json mask_dims = json::array();
  std::int64_t div = 1;
  for (size_t d = plan.batch_dims.size(); d-- > 0;) {
    if (!plan.mask.empty() && plan.mask_batch_strides[d] != 0)
      mask_dims.push_back(
          {{"div", div}, {"size", plan.batch_dims[d]}, {"stride", plan.mask_batch_strides[d]}});
    div *= plan.batch_dims[d];
  }
  const std::int64_t bq = p.wgs > 0 ? std::int64_t{64} * p.wgs
                          : p.simt  ? std::int64_t{p.warps} * 32 / p.split
                                    : std::int64_t{p.warps} * p.mt * 16;
  const std::string dtype = spec::dtype_name(plan.dtype);
  char scale_log2[64], inv_scale[64];
  std::snprintf(scale_log2, sizeof scale_log2, "%.9g", plan.scale * 1.4426950408889634);
  std::snprintf(inv_scale, sizeof inv_scale, "%.9g", 1.0 / plan.scale);
  const std::string masks =
      (plan.causal ? ", causal (key tiles past the block skipped)" : "") +
      (plan.mask.empty() ? "" : ", " + spec::dtype_name(plan.mask_dtype) + " mask") +
      (plan.out_heads ? ", output written transposed (1, 2)" : "");
  const std::string structure =
      p.wgs > 0 ? "flash attention on wgmma (sm_90a), " + std::to_string(bq) +
                      " query rows per block (" + std::to_string(p.wgs) + " warpgroup" +
                      (p.wgs > 1 ? "s" : "") + " of 64 rows), key tiles of " +
                      std::to_string(p.bk) + " in " + std::to_string(wg_stages(plan, p)) +
                      " cp.async stages, 128-byte swizzled, S = Q K^T and O += P V (P from "
                      "registers) as m64nNk16 " +
                      dtype + " with fp32 online softmax" +
                      (p.pipe ? ", a tile's scores beside the last tile's P V" : "") + masks
      : p.simt
          ? "flash attention in exact fp32 on CUDA cores, " +
                (p.split == 1 ? std::string("a thread per query row")
                              : std::to_string(p.split) + " threads per query row (each every " +
                                    std::to_string(p.split) + "th key, merged by shuffles)") +
                ", " + std::to_string(bq) + " rows per block, key tiles of " +
                std::to_string(p.bk) + " in shared memory, online softmax per " +
                (p.split == 1 ? "16" : "8") + " keys" + masks
          : "flash attention, " + std::to_string(bq) + " query rows per block (" +
                std::to_string(p.warps) + " warps of " + std::to_string(p.mt * 16) +
                " rows), key tiles of " + std::to_string(p.bk) +
                " double-buffered by cp.async, mma.sync m16n8k16 " + dtype +
                (p.qs ? ", Q's fragments read from shared memory per key tile" : "") +
                " with fp32 online softmax" + masks;
  json ctx = {{"fn", fn},
              {"summary", quote(*plan.anchor) + " over " + std::to_string(plan.batch()) +
                              " batch entries, " + std::to_string(plan.l) + " queries x " +
                              std::to_string(plan.s) + " keys, head dim " + std::to_string(plan.e)},
              {"structure", structure},
              {"dtype", dtype},
              {"ctype", contract::c_type(plan.dtype)},
              {"mt", p.mt},
              {"warps", p.warps},
              {"split", p.split},
              {"ch", simt_keys_per_step(p)},
              {"ks", simt_tile_stride(plan, p)},
              {"bk", p.bk},
              {"q_smem", p.qs},
              {"warpgroups", p.wgs},
              {"min_blocks", p.wgs > 0 ? wg_min_blocks(plan, p) : 1},
              {"stages", p.wgs > 0 ? wg_stages(plan, p) : 2},
              {"pipe", p.pipe},
              {"wgmma_type", plan.dtype == spec::DType::bfloat16 ? "bf16" : "f16"},
              {"e", plan.e},
              {"d", plan.padded_e()},
              {"l", plan.l},
              {"s", plan.s},
              {"batch", plan.batch()},
              {"causal", plan.causal},
              {"has_mask", !plan.mask.empty()},
              {"mask_bool", plan.mask_dtype == spec::DType::boolean},
              {"mask_ctype", plan.mask.empty() ? "bool" : contract::c_type(plan.mask_dtype)},
              {"mask_stride_l", plan.mask_stride_l},
              {"mask_stride_s", plan.mask_stride_s},
              {"mask_dims", mask_dims},
              {"scale_log2", std::string(scale_log2)},
              {"inv_scale", std::string(inv_scale)},
              {"out_heads", plan.out_heads},
              {"operands", operands},
              {"q_row", row(plan.q)},
              {"k_row", row(plan.k)},
              {"v_row", row(plan.v)},
              {"args", args}};
  Candidate cand;
  cand.id =
      p.wgs > 0
          ? "attention.wg:" + std::to_string(bq) + "x" + std::to_string(p.bk) + (p.pipe ? ":p" : "")
          : std::string(p.simt ? "attention.simt:" : "attention.flash:") + std::to_string(bq) +
                "x" + std::to_string(p.bk) + ":w" + std::to_string(p.warps) + (p.qs ? ":qs" : "") +
                (p.split > 1 ? ":s" + std::to_string(p.split) : "");
  cand.summary = plan.anchor->target + ": " + structure;
  cand.params = p.to_json();
  // The operands' addressing, ex2 and the mask's rows, shared by both kernels.
  ctx["common"] = render::render(common_.text, ctx, common_.name);
  const render::Template& body = p.wgs > 0 ? wg_ : p.simt ? simt_ : kernel_;
  cand.code.device_code = render::render(body.text, ctx, body.name);
  cand.code.launch_body = render::render(launch_.text, ctx, launch_.name);
  return cand;
}

std::vector<AttentionParams> AttentionFamily::structure_params(const spec::Spec&,
                                                               const contract::Contract&,
                                                               const AttentionPlan& plan) const {
  // FlashAttention-2's forward tiles: for head dims up to 64, 128 query rows per block of 4 warps
  // against 128-key tiles, Q's fragments read from shared memory (its registers go to the scores);
  // then 128 x 64 with Q in registers; 64 rows (a warp's 16 rows keep 128-wide accumulators in
  // registers) above; 64 keys a tile.
  std::vector<AttentionParams> out;
  if (plan.dtype == spec::DType::float32) {
    // fp32: first the lanes per row that fill the GPU (simt_split) with 2 or 4 warps a block (a
    // block's key tiles serve more rows); then a thread per row, 64 rows a block where that still
    // gives every SM a block, else 32; 64-key tiles first.
    auto add = [&](const AttentionParams& p) {
      if (valid(plan, p)) out.push_back(p);
    };
    if (const int split = simt_split(plan); split > 1)
      for (const int warps : {2, 4})
        for (const int bk : {64, 32}) add(simt_params(warps, bk, split));
    const bool fills = plan.batch() * ((plan.l + 63) / 64) >= kSms;
    for (const int warps : fills ? std::vector<int>{2, 1} : std::vector<int>{1, 2})
      for (const int bk : {64, 32}) add(simt_params(warps, bk));
    return out;
  }
  // Where every arch is sm_90a, the wgmma kernel first, as cuDNN's and FlashAttention-3's Hopper
  // kernels: 128 query rows (two warpgroups) against 128-key tiles, pipelined as
  // FlashAttention-3 and not; then 64-key tiles pipelined (two blocks an SM).
  if (wgmma_)
    for (const auto& p :
         {wg_params(2, 128, true), wg_params(2, 128, false), wg_params(2, 64, true)})
      if (valid(plan, p)) out.push_back(p);
  for (const AttentionParams& p : {AttentionParams{2, 4, 128, true}, AttentionParams{2, 4, 64},
                                   AttentionParams{1, 4, 64}, AttentionParams{1, 8, 64}})
    if (valid(plan, p)) out.push_back(p);
  return out;
}

std::vector<AttentionParams> AttentionFamily::tuning_params(const spec::Spec&,
                                                            const contract::Contract&,
                                                            const AttentionPlan& plan,
                                                            const AttentionParams& incumbent,
                                                            const std::string&) const {
  std::vector<AttentionParams> out;
  auto add = [&](AttentionParams p) {
    if (!valid(plan, p) || p.to_json() == incumbent.to_json()) return;
    for (const auto& o : out)
      if (o.to_json() == p.to_json()) return;
    out.push_back(p);
  };
  // Key tiles first (fewer rescales against fewer registers), then where Q's fragments live,
  // then the rows a block owns.
  const AttentionParams& in = incumbent;
  if (in.wgs > 0) {
    for (const bool pipe : {in.pipe, !in.pipe})
      for (const int bk : {128, 64})
        for (const int wgs : {in.wgs, 1, 2, 3}) add(wg_params(wgs, bk, pipe));
    return out;
  }
  if (in.simt) {
    for (const int split : {in.split, in.split * 2, in.split / 2})
      for (const int warps : {1, 2, 4})
        for (const int bk : {64, 32})
          if (split >= 1) add(simt_params(warps, bk, split));
    return out;
  }
  for (int bk : {128, 64, 32}) {
    add({in.mt, in.warps, bk, in.qs});
    add({in.mt, in.warps, bk, !in.qs});
  }
  add({in.mt, in.warps == 4 ? 8 : 4, in.bk, in.qs});
  add({in.mt == 1 ? 2 : 1, in.warps, in.bk, in.qs});
  add({in.mt == 1 ? 2 : 1, in.warps, in.bk, true});
  return out;
}

std::optional<AttentionParams> AttentionFamily::fallback_params(const spec::Spec&,
                                                                const contract::Contract&,
                                                                const AttentionPlan& plan,
                                                                const AttentionParams&) const {
  if (plan.dtype == spec::DType::float32) return simt_params(1, 32);
  return AttentionParams{1, 4, 32};  // the fewest registers and shared memory
}

}  // namespace egg::backend::builtin
