#include "backend/builtin/embedding_bag.h"

#include <algorithm>

#include "backend/builtin/plan_util.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

// The tensor operand k of the anchor (a graph input, param or an earlier kernel's value), or null.
const spec::Tensor* operand(const spec::Spec& s, const spec::Node& n, size_t k) {
  if (k >= n.args.size() || n.args[k].kind != spec::Arg::Kind::node) return nullptr;
  return s.find_tensor(n.args[k].node);
}

bool index_type(spec::DType d) { return d == spec::DType::int64 || d == spec::DType::int32; }

}  // namespace

std::variant<BagPlan, UserError> plan_embedding_bag(const spec::Spec& s) {
  BagPlan plan;
  for (const auto& n : s.nodes) {
    if (n.op != "embedding_bag") continue;
    if (plan.anchor)
      return UserError(n.where, quote(n) + " is a second embedding bag after `" +
                                    plan.anchor->target + "`" + at_line(*plan.anchor) +
                                    "; the builtin embedding-bag family runs one per kernel");
    plan.anchor = &n;
  }
  if (!plan.anchor)
    return UserError({s.op_file, 0, "output"},
                     "the graph has no embedding_bag (the embedding-bag family's anchor)");
  const spec::Node& an = *plan.anchor;
  const spec::Tensor* weight = operand(s, an, 0);
  const spec::Tensor* indices = operand(s, an, 1);
  const spec::Tensor* offsets = operand(s, an, 2);
  if (!weight || !indices || !offsets)
    return UserError(an.where, quote(an) +
                                   ": the builtin embedding-bag family reads the weight, the "
                                   "indices and the offsets as tensors (their producers run as "
                                   "kernels of their own)");
  if (!float_storage(weight->dtype) || weight->shape.size() != 2)
    return UserError(an.where,
                     quote(an) + ": the weight is " + spec::dtype_name(weight->dtype) + " " +
                         spec::shape_string(weight->shape) +
                         "; the builtin embedding-bag family reads a 2-D float32, float16 or "
                         "bfloat16 table");
  if (!index_type(indices->dtype) || indices->shape.size() != 1 ||
      offsets->dtype != indices->dtype || offsets->shape.size() != 1)
    return UserError(an.where,
                     quote(an) +
                         ": the builtin embedding-bag family reads 1-D int64 or int32 "
                         "indices and offsets of one dtype",
                     "pass torch.long indices and offsets");
  plan.weight = weight->name;
  plan.indices = indices->name;
  plan.offsets = offsets->name;
  plan.num_embeddings = weight->shape[0];
  plan.dim = weight->shape[1];
  plan.num_indices = indices->shape[0];
  plan.num_offsets = offsets->shape[0];
  plan.mode = an.attrs.value("mode", std::string("mean"));
  if (plan.mode != "sum" && plan.mode != "mean" && plan.mode != "max")
    return UserError(an.where, quote(an) + " with mode " + plan.mode + " is not an embedding bag");
  plan.include_last_offset = an.attrs.value("include_last_offset", false);
  plan.bags = plan.num_offsets - (plan.include_last_offset ? 1 : 0);
  const json pad = an.attrs.value("padding_idx", json());
  if (pad.is_number_integer()) {
    const std::int64_t p = pad.get<std::int64_t>();
    if (p >= 0 && p < plan.num_embeddings) plan.padding_idx = p;
  }
  if (const spec::Tensor* psw = operand(s, an, 3)) {
    if (plan.mode != "sum")
      return UserError(an.where, quote(an) + ": per_sample_weights go with mode='sum' only");
    if (psw->dtype != weight->dtype || psw->shape != indices->shape)
      return UserError(an.where, quote(an) + ": per_sample_weights must be " +
                                     spec::dtype_name(weight->dtype) + " " +
                                     spec::shape_string(indices->shape) +
                                     " (the weight's dtype, one per index)");
    plan.per_sample_weights = psw->name;
  } else if (an.args.size() > 3 && an.args[3].kind == spec::Arg::Kind::node) {
    return UserError(an.where,
                     quote(an) + ": per_sample_weights must be a tensor the kernel reads");
  }
  if (plan.bags <= 0 || plan.dim <= 0 || plan.num_embeddings <= 0)
    return UserError(an.where, quote(an) + " of no bags or an empty table is not supported");

  // The bags are written as they are; element-wise work on them runs as a kernel of its own.
  for (const auto& n : s.nodes)
    if (&n != &an)
      return UserError(n.where,
                       quote(n) + ": the builtin embedding-bag family writes the bags of " +
                           quote(an) + " as they are",
                       "the planner runs it as a kernel of its own");
  if (s.outputs.size() != 1 || s.outputs[0].node != an.name)
    return UserError(an.where,
                     quote(an) + " must be the op's one output for the embedding-bag family");
  return plan;
}

json BagParams::to_json() const {
  return {{"vec", vec}, {"tpb", tpb}, {"block", block}, {"unroll", unroll}};
}

BagParams BagParams::from_json(const json& j) {
  BagParams p;
  p.vec = j.value("vec", p.vec);
  p.tpb = j.value("tpb", p.tpb);
  p.block = j.value("block", p.block);
  p.unroll = j.value("unroll", p.unroll);
  return p;
}

bool bag_params_valid(const BagPlan& plan, int elem_size, const BagParams& p) {
  // A column per step, or one 16-byte vector (whole vectors: the row length a multiple of it).
  if ((p.vec != 1 && p.vec * elem_size != 16) || plan.dim % p.vec) return false;
  if (p.tpb < 1 || p.tpb > 1024 || (p.tpb & (p.tpb - 1))) return false;
  if (p.block < 32 || p.block > 1024 || p.block % 32 || p.block % p.tpb) return false;
  // No thread of a bag without columns: tpb at most the row's vectors rounded up.
  if (p.tpb > next_pow2(ceil_div(plan.dim, p.vec))) return false;
  return p.unroll >= 1 && p.unroll <= 16;
}

EmbeddingBagFamily::EmbeddingBagFamily(const std::filesystem::path& data_dir)
    : ops_(data_dir),
      kernel_(render::load_template(data_dir, "embedding_bag/bag.cuh.tmpl")),
      launch_(render::load_template(data_dir, "embedding_bag/launch.tmpl")) {}

std::vector<std::pair<std::string, std::string>> EmbeddingBagFamily::key_inputs() const {
  auto inputs = ops_.key_inputs();
  inputs.push_back({kernel_.name, kernel_.text});
  inputs.push_back({launch_.name, launch_.text});
  return inputs;
}

std::variant<BagPlan, UserError> EmbeddingBagFamily::analyze(const spec::Spec& s) const {
  return plan_embedding_bag(s);
}

Candidate EmbeddingBagFamily::render(const spec::Spec&, const contract::Contract& c,
                                     const BagPlan& plan, const BagParams& p) const {
  const std::string fn = "egg_" + c.name;
  json ins = json::object();
  std::string out_var, out_ctype;
  for (const auto& a : c.args) {
    if (a.role == contract::Role::output) {
      out_var = a.var;
      out_ctype = contract::c_type(a.dtype);
      continue;
    }
    const json entry = host_input(c, a);  // with its place in the host program's `in`
    if (a.source == plan.weight) ins["weight"] = entry;
    if (a.source == plan.indices) ins["indices"] = entry;
    if (a.source == plan.offsets) ins["offsets"] = entry;
    if (!plan.per_sample_weights.empty() && a.source == plan.per_sample_weights) ins["psw"] = entry;
  }
  for (const char* k : {"weight", "indices", "offsets"})
    if (!ins.contains(k))
      throw InternalError(std::string("embedding-bag family: the ") + k +
                          " is not in the contract");
  const bool psw = ins.contains("psw");
  const std::int64_t bags_per_block = p.block / p.tpb;
  const std::int64_t grid = ceil_div(plan.bags, bags_per_block);
  const std::string structure =
      std::to_string(p.tpb) + " threads per bag (" + std::to_string(bags_per_block) +
      " bags per block of " + std::to_string(p.block) + "), " + std::to_string(p.vec) +
      " columns per thread per load, " + std::to_string(p.unroll) +
      " entries' rows in flight, fp32 " + plan.mode +
      (plan.padding_idx ? ", padding_idx " + std::to_string(*plan.padding_idx) + " left out" : "") +
      (psw ? ", per-sample weights" : "");
  const json ctx = {
      {"fn", fn},
      {"helpers", ops_.helpers()},
      {"summary", quote(*plan.anchor) + ": " + std::to_string(plan.bags) + " bags of " +
                      std::to_string(plan.num_indices) + " entries in all over a " +
                      std::to_string(plan.num_embeddings) + " x " + std::to_string(plan.dim) +
                      " table"},
      {"structure", structure},
      {"weight", ins["weight"]},
      {"indices", ins["indices"]},
      {"offsets", ins["offsets"]},
      {"psw", psw ? ins["psw"] : json(false)},
      {"out", {{"ptr", out_var}, {"ctype", out_ctype}}},
      {"sum", plan.mode == "sum"},
      {"mean", plan.mode == "mean"},
      {"max", plan.mode == "max"},
      {"has_padding", plan.padding_idx.has_value()},
      {"padding_idx", plan.padding_idx.value_or(-1)},
      {"bags", plan.bags},
      {"dim", plan.dim},
      {"rows", plan.num_embeddings},
      {"num_indices", plan.num_indices},
      {"num_offsets", plan.num_offsets},
      {"vec", p.vec},
      {"tpb", p.tpb},
      {"block", p.block},
      {"unroll", p.unroll},
      {"grid", grid}};
  Candidate cand;
  cand.id = "embedding_bag." + plan.mode + ":v" + std::to_string(p.vec) + ":t" +
            std::to_string(p.tpb) + ":b" + std::to_string(p.block) + ":u" +
            std::to_string(p.unroll);
  cand.summary = plan.anchor->target + ": " + structure;
  cand.params = p.to_json();
  cand.code.device_code = render::render(kernel_.text, ctx, kernel_.name);
  cand.code.launch_body = render::render(launch_.text, ctx, launch_.name);
  return cand;
}

std::vector<BagParams> EmbeddingBagFamily::structure_params(const spec::Spec& s,
                                                            const contract::Contract&,
                                                            const BagPlan& plan) const {
  const int esize = spec::dtype_size(s.find_tensor(plan.weight)->dtype);
  // The expert prior: 16-byte vectors of a row, the fewest threads that cover it (a warp for a
  // 128-wide fp32 row), 256 threads per block, 4 entries in flight; then scalar columns.
  std::vector<BagParams> out;
  for (int vec : {16 / esize, 1}) {
    BagParams p;
    p.vec = plan.dim % vec == 0 ? vec : 1;
    p.tpb = static_cast<int>(std::min<std::int64_t>(next_pow2(ceil_div(plan.dim, p.vec)), 256));
    p.block = std::max(256, p.tpb);
    if (bag_params_valid(plan, esize, p) &&
        std::none_of(out.begin(), out.end(), [&](const BagParams& q) { return q.vec == p.vec; }))
      out.push_back(p);
  }
  return out;
}

std::vector<BagParams> EmbeddingBagFamily::tuning_params(const spec::Spec& s,
                                                         const contract::Contract&,
                                                         const BagPlan& plan, const BagParams& inc,
                                                         const std::string&) const {
  const int esize = spec::dtype_size(s.find_tensor(plan.weight)->dtype);
  std::vector<BagParams> out = {inc};
  auto add = [&](BagParams p) {
    if (bag_params_valid(plan, esize, p) &&
        std::none_of(out.begin(), out.end(),
                     [&](const BagParams& q) { return q.to_json() == p.to_json(); }))
      out.push_back(p);
  };
  // More entries in flight (short rows leave each thread few loads), fewer threads per bag with
  // more columns each, and the block size.
  for (int u : {2, 8, 16}) {
    BagParams p = inc;
    p.unroll = u;
    add(p);
  }
  for (int t : {inc.tpb / 2, inc.tpb * 2}) {
    BagParams p = inc;
    p.tpb = t;
    p.block = std::max(p.block, t);
    add(p);
  }
  for (int b : {128, 512}) {
    BagParams p = inc;
    p.block = std::max(b, inc.tpb);
    add(p);
  }
  return out;
}

std::optional<BagParams> EmbeddingBagFamily::fallback_params(const spec::Spec&,
                                                             const contract::Contract&,
                                                             const BagPlan& plan,
                                                             const BagParams&) const {
  BagParams p;  // scalar columns, a warp per bag, one entry at a time
  p.vec = 1;
  p.tpb = static_cast<int>(std::min<std::int64_t>(next_pow2(plan.dim), 32));
  p.block = 256;
  p.unroll = 1;
  return p;
}

}  // namespace egg::backend::builtin
