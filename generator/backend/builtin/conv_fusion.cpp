// Cross-anchor fusion of the conv family: a convolution whose element-wise epilogue ends in a
// reduction over the output channels (min/max/sum/mean/... with dim=1) or a softmax over them, or
// in a reduction over every spatial dim (a global pooling, lowered to mean/amax over dims 2..),
// then element-wise ops on its value. The implicit GEMM's block holds every output channel of its
// pixels, so a channel reduction runs in its epilogue and the full-size result is never written;
// cuDNN's channels-last result holds them as one contiguous row per pixel, and each channel's
// spatial positions as a column read along the channels, so one pass reduces it without the
// transpose back (templates/conv/cudnn.cuh.tmpl).
#include <algorithm>
#include <set>

#include "backend/builtin/conv.h"
#include "backend/builtin/plan_util.h"

namespace egg::backend::builtin {
namespace {

// Most output channels one block's tile holds (its N tile).
constexpr std::int64_t kMaxFusedChannels = 128;

// What the reduction's dims are on a tensor of rank `rank`: exactly the channel dim (1), or
// exactly the spatial dims (2..rank-1, in any order); nullopt for anything else.
std::optional<ConvReductionAxis> reduced_axis(const spec::Node& n, size_t rank) {
  if (!n.attrs.contains("dim")) return std::nullopt;
  const nlohmann::json& dim = n.attrs["dim"];
  std::set<std::int64_t> dims;
  for (const auto& d : dim.is_array() ? dim : nlohmann::json::array({dim})) {
    if (!d.is_number_integer()) return std::nullopt;
    std::int64_t v = d.get<std::int64_t>();
    if (v < 0) v += static_cast<std::int64_t>(rank);
    dims.insert(v);
  }
  if (dims == std::set<std::int64_t>{1}) return ConvReductionAxis::channels;
  std::set<std::int64_t> spatial;
  for (size_t k = 2; k < rank; ++k) spatial.insert(static_cast<std::int64_t>(k));
  if (!spatial.empty() && dims == spatial) return ConvReductionAxis::spatial;
  return std::nullopt;
}

}  // namespace

std::optional<UserError> plan_conv_reduction(const spec::Spec& s, const OpTable& ops,
                                             const ReductionOps& table, ConvPlan& plan,
                                             bool channels_last_library) {
  const spec::Node& an = *plan.anchor;
  const SourceLocation file_only{s.op_file, 0, "output"};
  const spec::Node* red = nullptr;
  const ReductionAnchor* entry = nullptr;
  for (const auto& n : s.nodes)
    if (const ReductionAnchor* e = table.anchor(n.op)) {
      if (red)
        return UserError(n.where, quote(n) + " is a second reduction after " + quote(*red) +
                                      "; the conv epilogue fuses one");
      red = &n;
      entry = e;
    }
  if (!red)
    return UserError(file_only,
                     "the graph has no reduction after its convolution (nothing for the fused "
                     "conv epilogue to reduce)");
  const std::string why_not =
      "; the conv epilogue fuses a reduction over the output channels, or (after cuDNN) over "
      "every spatial dim, only";
  if (entry->mode == ReductionMode::scan || entry->indices || entry->norm)
    return UserError(red->where, quote(*red) + " is not a plain reduction or softmax" + why_not);
  if (plan.in_shape.size() != size_t(plan.dims) + 2)
    return UserError(an.where, quote(an) + " is unbatched" + why_not + " of a batched convolution");
  // Without cuDNN the implicit GEMM's tile must hold every output channel of its pixels.
  if (!channels_last_library && (plan.transposed || plan.groups != 1))
    return UserError(an.where, quote(an) + " is transposed or grouped" + why_not +
                                   " of an ungrouped forward convolution without cuDNN");
  if (!channels_last_library && plan.c_out > kMaxFusedChannels)
    return UserError(an.where, quote(an) + " has " + std::to_string(plan.c_out) +
                                   " output channels, more than one tile's " +
                                   std::to_string(kMaxFusedChannels) + why_not + " without cuDNN");
  const auto axis = reduced_axis(*red, plan.out_shape.size());
  if (!axis)
    return UserError(red->where,
                     quote(*red) + " reduces neither dim 1 alone nor every spatial dim" + why_not);
  if (*axis == ConvReductionAxis::spatial && !channels_last_library)
    return UserError(red->where, quote(*red) + " reduces the spatial dims" + why_not +
                                     " (cuDNN is not at hand)");
  if (*axis == ConvReductionAxis::spatial && entry->mode == ReductionMode::normalize)
    return UserError(red->where, quote(*red) + " normalizes over the spatial dims" + why_not +
                                     " as a plain reduction");
  for (size_t k = 1; k < red->args.size(); ++k)
    if (red->args[k].kind == spec::Arg::Kind::node)
      return UserError(red->where, quote(*red) + " has a tensor option" + why_not);
  if (red->args.empty() || red->args[0].kind != spec::Arg::Kind::node)
    return UserError(red->where, quote(*red) + " does not read a tensor");

  // Before the reduction: the element-wise epilogue on the convolution's output.
  std::set<std::string> after;  // the reduction and everything after it in spec order
  bool seen = false;
  for (const auto& n : s.nodes) {
    seen = seen || &n == red;
    if (seen) after.insert(n.name);
  }
  EpilogueRule rule;
  rule.shape = plan.out_shape;
  rule.shape_of = "the convolution output";
  rule.from_anchor = true;
  rule.skip = [&](const spec::Node& n) { return is_convolution(n.op) || after.count(n.name); };
  rule.check_leaf = [&](const spec::Tensor& t, const spec::Node& at_node) {
    return check_leaf_tensor(t, plan.out_shape, at_node, "the conv epilogue reads",
                             "the convolution's output ");
  };
  auto epi = collect_epilogue(s, ops, an, rule);
  if (auto* e = std::get_if<UserError>(&epi)) return *e;
  plan.epilogue = std::get<std::vector<const spec::Node*>>(std::move(epi));
  std::set<std::string> before = {an.name};
  for (const auto* n : plan.epilogue) before.insert(n->name);
  if (!before.count(red->args[0].node))
    return UserError(red->where, quote(*red) + " does not read the convolution's epilogue");

  // After it: getitem(.., 0) of its values, then element-wise ops on the reduced shape.
  ConvReduction r;
  r.node = red;
  r.axis = *axis;
  r.reducer = entry->reducer;
  r.in_expr = entry->in;
  const std::int64_t reduced = r.spatial() ? plan.out[0] * plan.out[1] * plan.out[2] : plan.c_out;
  r.row_expr = fill_fields(entry->row, {{"R", std::to_string(reduced)}});
  r.normalize = entry->mode == ReductionMode::normalize;
  r.element_expr = entry->element;
  r.shape = red->shape;
  r.value_names.push_back(red->name);
  std::set<std::string> values = {red->name};
  for (const auto& n : s.nodes) {
    if (!after.count(n.name) || &n == red) continue;
    if (n.op == "getitem") {
      if (n.args.size() < 2 || n.args[0].kind != spec::Arg::Kind::node ||
          n.args[0].node != red->name || n.args[1].kind != spec::Arg::Kind::scalar ||
          n.args[1].scalar != 0)
        return UserError(n.where,
                         quote(n) + " reads the reduction's indices" + why_not + " (its values)");
      r.value_names.push_back(n.name);
      values.insert(n.name);
      continue;
    }
    if (auto e = ops.check(s, n))
      return UserError(n.where, std::string(e->what()) + why_not + ", then element-wise ops",
                       e->hint());
    for (const auto& a : node_args(n)) {
      if (before.count(a))
        return UserError(n.where, quote(n) + " reads `" + a + "`, a value before " + quote(*red) +
                                      why_not + ", then ops of its result");
      if (const auto* t = s.find_tensor(a))
        if (auto e = check_leaf_tensor(*t, r.shape, n, "the fused conv epilogue reads")) return *e;
    }
    if (n.shape != r.shape)
      return UserError(n.where, quote(n) + " produces shape " + spec::shape_string(n.shape) +
                                    ", not the reduction's " + spec::shape_string(r.shape));
    r.post.push_back(&n);
    values.insert(n.name);
  }
  if (s.outputs.empty()) return UserError(file_only, "the op has no outputs");
  for (const auto& o : s.outputs)
    if (!values.count(o.node) || !float_storage(o.dtype) || o.shape != r.shape)
      return UserError(file_only, "output " + o.name + " (`" + o.node +
                                      "`) is not a float value of the reduction's " +
                                      spec::shape_string(r.shape) + " result");
  plan.reduction = std::move(r);
  return std::nullopt;
}

}  // namespace egg::backend::builtin
