// Graph analysis of the loss family: finds the one loss, its operands, prologue and epilogue and
// options, or the reason (op and line) the family cannot implement the spec.
#include <algorithm>
#include <map>
#include <set>

#include "backend/builtin/loss.h"
#include "backend/builtin/plan_util.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;
using spec::Shape;

double number(const json& attrs, const std::string& key, double fallback) {
  return attrs.contains(key) && attrs[key].is_number() ? attrs[key].get<double>() : fallback;
}

// Right-aligned broadcast of two shapes, or nullopt.
std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t k = 0; k < out.size(); ++k) {
    const std::int64_t x = k < out.size() - a.size() ? 1 : a[k - (out.size() - a.size())];
    const std::int64_t y = k < out.size() - b.size() ? 1 : b[k - (out.size() - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[k] = x == 1 ? y : x;
  }
  return out;
}

}  // namespace

std::variant<LossPlan, UserError> plan_loss(const spec::Spec& s, const OpTable& ops,
                                            const LossOps& losses) {
  const SourceLocation file_only{s.op_file, 0, "output"};
  LossPlan plan;
  const LossEntry* entry = nullptr;
  for (const auto& n : s.nodes) {
    const bool unknown_loss = n.op.rfind("torch.nn.functional.", 0) == 0 && n.op.size() > 5 &&
                              n.op.compare(n.op.size() - 5, 5, "_loss") == 0;
    if (losses.unsupported(n.op) || unknown_loss)
      return UserError(n.where, quote(n) + " is not implemented by the builtin loss family",
                       "supported losses: " + losses.supported());
    if (!losses.loss(n.op)) continue;
    if (plan.anchor)
      return UserError(n.where,
                       quote(n) + " is a second loss after `" + plan.anchor->target + "`" +
                           at_line(*plan.anchor) + "; the builtin loss family fuses exactly one",
                       "split the op into two op.py files (one loss each)");
    plan.anchor = &n;
    entry = losses.loss(n.op);
  }
  if (!plan.anchor)
    return UserError(file_only, "the graph has no loss op (the loss family's anchor)");
  const spec::Node& an = *plan.anchor;
  const json& at = an.attrs;
  plan.kind = entry->kind;
  plan.rows = entry->rows;
  plan.gather = entry->gather;
  plan.state = entry->state;
  plan.reduction = at.value("reduction", std::string("mean"));
  if (plan.reduction != "mean" && plan.reduction != "sum" && plan.reduction != "none" &&
      !(plan.reduction == "batchmean" && plan.kind == "kl_div"))
    return UserError(an.where,
                     quote(an) + " with reduction='" + plan.reduction + "' is not supported",
                     "use reduction='mean', 'sum' or 'none'");
  const size_t num_operands = plan.kind == "triplet" ? 3 : 2;
  if (an.args.size() < num_operands)
    return UserError(an.where, quote(an) + " has too few operands");
  for (size_t k = 0; k < an.args.size(); ++k) {
    const auto& a = an.args[k];
    if (k < num_operands) {
      if (a.kind != spec::Arg::Kind::node)
        return UserError(an.where,
                         quote(an) + " operand " + std::to_string(k + 1) + " is not a tensor");
      continue;
    }
    if (k == 2 && plan.kind == "nll" && a.kind == spec::Arg::Kind::node) {
      plan.weight = a.node;
      continue;
    }
    if (a.kind != spec::Arg::Kind::none)
      return UserError(
          an.where,
          quote(an) + " with a class weight tensor is not implemented by the builtin loss family",
          "pass weight=None, or scale the per-sample losses (reduction='none') in the op");
  }
  auto shape_of = [&](const std::string& v) -> std::optional<Shape> {
    if (const auto* t = s.find_tensor(v)) return t->shape;
    if (const auto* p = s.find_node(v)) return p->shape;
    return std::nullopt;
  };
  std::vector<Shape> shapes;
  for (size_t k = 0; k < num_operands; ++k) {
    auto sh = shape_of(an.args[k].node);
    if (!sh)
      return UserError(
          an.where, "operand `" + an.args[k].node + "` is not an input, parameter or earlier op");
    shapes.push_back(*sh);
  }

  // Options and the structure's shape.
  if (plan.kind == "cross_entropy" || plan.kind == "nll") {
    plan.operands = {an.args[0].node};
    plan.target = an.args[1].node;
    const auto* t = s.find_tensor(plan.target);
    if (!t || (t->dtype != spec::DType::int64 && t->dtype != spec::DType::int32))
      return UserError(an.where,
                       quote(an) +
                           " with a target that is not an int64 input (class probabilities, or a "
                           "computed target)"
                           " is not implemented by the builtin loss family",
                       "pass class indices as an int64 input tensor");
    if (shapes[0].size() != 2 || shapes[1] != Shape{shapes[0][0]})
      return UserError(
          an.where,
          quote(an) + " on logits " + spec::shape_string(shapes[0]) + " and target " +
              spec::shape_string(shapes[1]) +
              ": the builtin loss family implements [N, C] logits with [N] targets",
          "flatten extra dims: logits.permute(...).reshape(-1, C) and target.reshape(-1)");
    if (!plan.weight.empty()) {
      const auto* w = s.find_tensor(plan.weight);
      if (!w || !float_storage(w->dtype) || w->shape != Shape{shapes[0][1]})
        return UserError(an.where,
                         quote(an) + " with a class weight that is not a [" +
                             std::to_string(shapes[0][1]) +
                             "] float input or parameter is not implemented by the builtin loss "
                             "family",
                         "pass the weights as a parameter or buffer of the model");
    }
    plan.label_smoothing = number(at, "label_smoothing", 0.0);
    if (plan.label_smoothing < 0.0 || plan.label_smoothing > 1.0)
      return UserError(an.where, quote(an) + " has label_smoothing outside [0, 1]");
    plan.ignore_index = static_cast<std::int64_t>(number(at, "ignore_index", -100));
    plan.n = shapes[0][0];
    plan.len = shapes[0][1];
    plan.elem_shape = shapes[0];
  } else if (plan.kind == "triplet") {
    plan.operands = {an.args[0].node, an.args[1].node, an.args[2].node};
    if (number(at, "p", 2.0) != 2.0)
      return UserError(an.where,
                       quote(an) + " with p=" + at["p"].dump() +
                           " is not implemented by the builtin loss family",
                       "use p=2 (the default)");
    if (shapes[0].size() != 2 || shapes[1] != shapes[0] || shapes[2] != shapes[0])
      return UserError(an.where, quote(an) +
                                     ": the builtin loss family implements anchor, positive and "
                                     "negative of one [B, D] shape");
    plan.margin = number(at, "margin", 1.0);
    plan.eps = number(at, "eps", 1e-6);
    plan.swap = at.value("swap", false);
    plan.n = shapes[0][0];
    plan.len = shapes[0][1];
    plan.elem_shape = shapes[0];
  } else {
    plan.operands = {an.args[0].node, an.args[1].node};
    auto b = broadcast(shapes[0], shapes[1]);
    if (!b)
      return UserError(an.where, quote(an) + " operands " + spec::shape_string(shapes[0]) +
                                     " and " + spec::shape_string(shapes[1]) + " do not broadcast");
    plan.elem_shape = *b;
    plan.n = spec::numel(plan.elem_shape);
    if (plan.kind == "huber" && number(at, "delta", 1.0) <= 0)
      return UserError(an.where, quote(an) + " needs delta > 0");
    if (plan.kind == "smooth_l1" && number(at, "beta", 1.0) < 0)
      return UserError(an.where, quote(an) + " needs beta >= 0");
    plan.loss_expr = losses.pointwise(*entry, at, "egg_v[0]", "egg_v[1]");
  }
  if (plan.rows) {  // the table's row expressions, their fields filled
    plan.push_expr = fill_fields(entry->push, {{"eps", float_literal(plan.eps)}});
    plan.row_loss_expr = plan.label_smoothing > 0
                             ? fill_fields(entry->row_loss_smoothed,
                                           {{"keep", float_literal(1.0 - plan.label_smoothing)},
                                            {"smoothing", float_literal(plan.label_smoothing)},
                                            {"len", float_literal(static_cast<double>(plan.len))}})
                             : entry->row_loss;
  }
  if (plan.n == 0 || spec::numel(plan.elem_shape) == 0)
    return UserError(an.where, quote(an) + " reads an empty tensor");
  if (plan.reduction == "none") plan.out_shape = plan.rows ? Shape{plan.n} : plan.elem_shape;
  plan.divisor = plan.reduction == "mean" ? static_cast<double>(plan.n)
                 : plan.reduction == "batchmean"
                     ? static_cast<double>(shapes[0].empty() ? 1 : shapes[0][0])
                     : 1.0;
  if (an.shape != plan.out_shape)
    return UserError(an.where,
                     quote(an) + " produces " + spec::shape_string(an.shape) +
                         ", but the loss family computes " + spec::shape_string(plan.out_shape),
                     "this is a bug in EGG's loss family; please report it with the op.py");

  // Prologue: the float operands' ancestors, element-wise on the element shape.
  const std::set<std::string> pro = ancestors(s, plan.operands);
  auto check_leaf = [&](const spec::Tensor& t, const Shape& shape,
                        const spec::Node& at_node) -> std::optional<UserError> {
    if (!float_storage(t.dtype) && t.dtype != spec::DType::boolean)
      return UserError(
          at_node.where,
          "tensor " + t.name + " is " + spec::dtype_name(t.dtype) + " in " + quote(at_node) +
              "; the builtin loss kernels read float32, float16, bfloat16 or bool there",
          "convert it in get_inputs() or the model");
    if (!broadcasts_to(t.shape, shape))
      return UserError(at_node.where, "tensor " + t.name + " of shape " +
                                          spec::shape_string(t.shape) + " does not broadcast to " +
                                          spec::shape_string(shape) + " in " + quote(at_node));
    return std::nullopt;
  };
  for (const auto& v : plan.operands)
    if (const auto* t = s.find_tensor(v))
      if (auto e = check_leaf(*t, plan.elem_shape, an)) return *e;
  for (const auto& n : s.nodes) {
    if (!pro.count(n.name)) continue;
    if (auto e = ops.check(s, n))
      return UserError(
          n.where, std::string(e->what()) + "; before " + quote(an) + " only element-wise ops fuse",
          e->hint());
    if (!broadcasts_to(n.shape, plan.elem_shape))
      return UserError(n.where, quote(n) + " produces shape " + spec::shape_string(n.shape) +
                                    " that does not broadcast to the operands of `" + an.target +
                                    "`");
    for (const auto& a : node_args(n))
      if (const auto* t = s.find_tensor(a))
        if (auto e = check_leaf(*t, plan.elem_shape, n)) return *e;
    plan.prologue.push_back(&n);
  }

  // Epilogue: element-wise on the loss's output shape, never reading the operand side.
  EpilogueRule rule;
  rule.shape = plan.out_shape;
  rule.shape_of = "the loss's output";
  rule.input_side = pro;
  rule.input_side.insert(plan.operands.begin(), plan.operands.end());
  if (!plan.target.empty()) rule.input_side.insert(plan.target);
  if (!plan.weight.empty()) rule.input_side.insert(plan.weight);
  rule.skip = [&](const spec::Node& n) { return pro.count(n.name) > 0; };
  rule.check_leaf = [&](const spec::Tensor& t, const spec::Node& at_node) {
    return check_leaf(t, plan.out_shape, at_node);
  };
  auto epi = collect_epilogue(s, ops, an, rule);
  if (auto* e = std::get_if<UserError>(&epi)) return *e;
  plan.epilogue = std::get<std::vector<const spec::Node*>>(std::move(epi));
  if (auto e = check_anchor_outputs(s, an, plan.epilogue, plan.out_shape, file_only, "the loss",
                                    "loss", "the loss's"))
    return *e;
  return plan;
}

}  // namespace egg::backend::builtin
