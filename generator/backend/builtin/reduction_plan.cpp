// Graph analysis of the reduction family: finds the one anchor, its prologue and epilogue, the
// reduced dims and the mode, or the reason (op and line) the family cannot implement the spec.
#include <algorithm>
#include <map>
#include <set>

#include "backend/builtin/plan_util.h"
#include "backend/builtin/reduction.h"

namespace egg::backend::builtin {
namespace {

using spec::Shape;

const std::set<std::string> kReduce = {"sum", "mean", "prod", "amax", "amin", "max", "min",
                                       "argmax", "argmin", "logsumexp"};
const std::set<std::string> kNormalize = {"softmax", "log_softmax"};
const std::set<std::string> kScan = {"cumsum", "cumprod"};

bool is_anchor(const spec::Node& n) {
  return kReduce.count(n.op) || kNormalize.count(n.op) || kScan.count(n.op);
}

// The reduced dims of the anchor (sorted, non-negative), or an error.
std::variant<std::vector<int>, UserError> reduced_dims(const spec::Node& n, size_t rank) {
  const nlohmann::json dim = n.attrs.contains("dim") ? n.attrs["dim"] : nlohmann::json();
  std::vector<int> dims;
  const bool all = dim.is_null() || (dim.is_array() && dim.empty());
  if (all) {
    if (kNormalize.count(n.op) || kScan.count(n.op))
      return UserError(n.where, quote(n) + " needs an explicit dim for the builtin backend", "pass dim=-1 (or the dim you mean)");
    for (size_t d = 0; d < rank; ++d) dims.push_back(static_cast<int>(d));
    return dims;
  }
  std::vector<nlohmann::json> items;
  if (dim.is_array()) items.assign(dim.begin(), dim.end());
  else items.push_back(dim);
  for (const auto& d : items) {
    if (!d.is_number_integer())
      return UserError(n.where, quote(n) + " has dim " + dim.dump() + "; the builtin backend needs integer dims");
    std::int64_t v = d.get<std::int64_t>();
    const std::int64_t r = std::max<std::int64_t>(static_cast<std::int64_t>(rank), 1);
    if (v < 0) v += r;
    if (v < 0 || v >= r) return UserError(n.where, quote(n) + " has dim " + dim.dump() + " out of range");
    if (rank > 0) dims.push_back(static_cast<int>(v));
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  for (size_t k = 1; k < dims.size(); ++k)
    if (dims[k] != dims[k - 1] + 1)
      return UserError(n.where, quote(n) + " reduces over dims " + dim.dump() +
                                    " that are not adjacent; the builtin reduction family reduces one run of adjacent dims",
                       "permute the input so the reduced dims are adjacent, or reduce in two ops in two op.py files");
  return dims;
}

}  // namespace

std::variant<ReductionPlan, UserError> plan_reduction(const spec::Spec& s, const OpTable& ops) {
  const SourceLocation file_only{s.op_file, 0, "output"};
  ReductionPlan plan;
  for (const auto& n : s.nodes) {
    if (!is_anchor(n)) continue;
    if (plan.anchor)
      return UserError(n.where,
                       quote(n) + " is a second reduction/softmax/scan after `" + plan.anchor->target + "`" +
                           at_line(*plan.anchor) + "; the builtin reduction family fuses exactly one",
                       "split the op into two op.py files (one reduction each)");
    plan.anchor = &n;
  }
  if (!plan.anchor)
    return UserError(file_only, "the graph has no reduction, softmax or scan op (the reduction family's anchor)");
  const spec::Node& an = *plan.anchor;
  if (s.outputs.empty()) return UserError(file_only, "the op has no outputs");
  if (an.args.empty() || an.args[0].kind != spec::Arg::Kind::node)
    return UserError(an.where, quote(an) + " does not read a tensor");
  plan.input = an.args[0].node;
  if (const auto* t = s.find_tensor(plan.input)) plan.in_shape = t->shape;
  else if (const auto* p = s.find_node(plan.input)) plan.in_shape = p->shape;
  else return UserError(an.where, "operand `" + plan.input + "` is not an input, parameter or earlier op");
  for (size_t k = 1; k < an.args.size(); ++k)
    if (an.args[k].kind == spec::Arg::Kind::node)
      return UserError(an.where, quote(an) + " with a tensor option is not supported by the builtin backend");

  // Reduced dims → [outer, R, inner].
  auto dims_or = reduced_dims(an, plan.in_shape.size());
  if (auto* e = std::get_if<UserError>(&dims_or)) return *e;
  const auto dims = std::get<std::vector<int>>(dims_or);
  for (size_t d = 0; d < plan.in_shape.size(); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), static_cast<int>(d)) != dims.end();
    if (reduced) plan.R *= plan.in_shape[d];
    else if (dims.empty() || static_cast<int>(d) < dims.front()) plan.outer *= plan.in_shape[d];
    else plan.inner *= plan.in_shape[d];
  }
  if (spec::numel(plan.in_shape) == 0) return UserError(an.where, quote(an) + " reads an empty tensor");
  const bool keepdim = an.attrs.value("keepdim", false);

  // Mode and reducer.
  const std::string& op = an.op;
  const bool with_indices = (op == "max" || op == "min") && an.attrs.contains("dim") && !an.attrs["dim"].is_null();
  if (kScan.count(op)) plan.mode = ReductionPlan::Mode::scan;
  else if (kNormalize.count(op)) plan.mode = ReductionPlan::Mode::normalize;
  static const std::map<std::string, std::string> reducer = {
      {"sum", "EggRedSum"},       {"mean", "EggRedSum"},         {"prod", "EggRedProd"},
      {"amax", "EggRedMax"},      {"amin", "EggRedMin"},         {"max", "EggRedMax"},
      {"min", "EggRedMin"},       {"argmax", "EggRedArgMax"},    {"argmin", "EggRedArgMin"},
      {"logsumexp", "EggRedSoftmax"}, {"softmax", "EggRedSoftmax"}, {"log_softmax", "EggRedSoftmax"},
      {"cumsum", "EggRedSum"},    {"cumprod", "EggRedProd"}};
  plan.reducer = reducer.at(op);
  if (with_indices) plan.reducer = op == "max" ? "EggRedArgMax" : "EggRedArgMin";
  if (an.attrs.contains("dtype") && !an.attrs["dtype"].is_null() && !float_storage(an.dtype))
    return UserError(an.where, quote(an) + " with dtype " + spec::dtype_name(an.dtype) +
                                   " is not supported by the builtin backend", "accumulate in float32, float16 or bfloat16");
  if (op == "argmax" || op == "argmin") plan.index_values.push_back(an.name);

  // Prologue: the anchor's ancestors.
  std::set<std::string> pro;
  std::vector<std::string> todo = {plan.input};
  while (!todo.empty()) {
    std::string v = todo.back();
    todo.pop_back();
    const auto* n = s.find_node(v);
    if (!n || pro.count(v)) continue;
    pro.insert(v);
    for (auto& a : node_args(*n)) todo.push_back(a);
  }
  auto check_leaf = [&](const spec::Tensor& t, const Shape& shape, const spec::Node& at) -> std::optional<UserError> {
    if (!float_storage(t.dtype) && t.dtype != spec::DType::boolean)
      return UserError(at.where, "tensor " + t.name + " is " + spec::dtype_name(t.dtype) +
                                     "; the builtin reduction kernels read float32, float16, bfloat16 or bool",
                       "convert it in get_inputs() or the model");
    if (!broadcasts_to(t.shape, shape))
      return UserError(at.where, "tensor " + t.name + " of shape " + spec::shape_string(t.shape) +
                                     " does not broadcast to " + spec::shape_string(shape) + " in " + quote(at));
    return std::nullopt;
  };
  if (const auto* t = s.find_tensor(plan.input))
    if (auto e = check_leaf(*t, plan.in_shape, an)) return *e;
  for (const auto& n : s.nodes) {
    if (!pro.count(n.name)) continue;
    if (auto e = ops.check(s, n)) return *e;
    if (!broadcasts_to(n.shape, plan.in_shape))
      return UserError(n.where, quote(n) + " produces shape " + spec::shape_string(n.shape) +
                                    " that does not broadcast to the input of `" + an.target + "`");
    for (const auto& a : node_args(n))
      if (const auto* t = s.find_tensor(a))
        if (auto e = check_leaf(*t, plan.in_shape, n)) return *e;
    plan.prologue.push_back(&n);
  }

  // Outputs: one shape; that shape decides reduce (a value per row) or normalize (every element).
  plan.out_shape = s.outputs.front().shape;
  for (const auto& o : s.outputs)
    if (o.shape != plan.out_shape)
      return UserError(file_only, "outputs have different shapes (" + spec::shape_string(plan.out_shape) + " and " +
                                      spec::shape_string(o.shape) + ")",
                       "return outputs of one shape, or split the op into two op.py files");
  const std::int64_t out_numel = spec::numel(plan.out_shape);
  if (plan.mode == ReductionPlan::Mode::reduce && out_numel != plan.rows()) {
    if (out_numel == spec::numel(plan.in_shape) && plan.out_shape == plan.in_shape && keepdim && !with_indices &&
        op != "argmax" && op != "argmin")
      plan.mode = ReductionPlan::Mode::normalize;
    else
      return UserError(an.where, "the outputs have shape " + spec::shape_string(plan.out_shape) + ", but " + quote(an) +
                                     " makes " + std::to_string(plan.rows()) +
                                     " values; the builtin reduction family writes either one value per reduced row or, "
                                     "after a keepdim=True reduction, every element of the input shape",
                       "use keepdim=True when the result is broadcast back over the input");
  }
  if (plan.mode != ReductionPlan::Mode::reduce && plan.out_shape != plan.in_shape)
    return UserError(an.where, "the outputs have shape " + spec::shape_string(plan.out_shape) + ", but " + quote(an) +
                                   " produces " + spec::shape_string(plan.in_shape),
                     "return a tensor of the input's shape");
  const Shape& epi_shape = plan.out_shape;

  // Epilogue: everything else, element-wise, evaluated per output element.
  const std::string after = "after " + quote(an) + at_line(an) + " only element-wise ops fuse";
  std::set<std::string> index_values(plan.index_values.begin(), plan.index_values.end());
  for (const auto& n : s.nodes) {
    if (&n == &an || pro.count(n.name)) continue;
    if (n.op == "operator.getitem" || n.op == "getitem") {
      const bool on_anchor = !n.args.empty() && n.args[0].kind == spec::Arg::Kind::node && n.args[0].node == an.name;
      if (!on_anchor || !with_indices || n.args.size() < 2 || n.args[1].kind != spec::Arg::Kind::scalar)
        return UserError(n.where, quote(n) + ": " + after + "; indexing fuses only as the (values, indices) result of max/min with a dim",
                         "compute the indexing in a separate op.py");
      if (n.args[1].scalar == 0) plan.value_aliases.push_back(n.name);
      else {
        plan.index_values.push_back(n.name);
        index_values.insert(n.name);
      }
      continue;
    }
    if (auto e = ops.check(s, n))
      return UserError(n.where, std::string(e->what()) + "; " + after, e->hint());
    for (const auto& a : node_args(n)) {
      if (a == an.name && with_indices)
        return UserError(n.where, quote(n) + " reads the (values, indices) pair of " + quote(an) + " directly",
                         "index it: torch.max(x, dim)[0] for the values");
      if (index_values.count(a))
        return UserError(n.where, quote(n) + " computes on the indices of " + quote(an) +
                                      "; the builtin reduction family writes indices only as they are",
                         "return the indices and compute on them in a separate op.py");
      if (plan.mode == ReductionPlan::Mode::reduce && (pro.count(a) || a == plan.input))
        return UserError(n.where, quote(n) + " reads `" + a + "` per element after " + quote(an) +
                                      " reduced it; the epilogue of a reduction sees one value per row",
                         "use keepdim=True and return a tensor of the input's shape, or split the op");
      if (const auto* t = s.find_tensor(a))
        if (auto e = check_leaf(*t, epi_shape, n)) return *e;
    }
    if (!broadcasts_to(n.shape, epi_shape))
      return UserError(n.where, quote(n) + " produces shape " + spec::shape_string(n.shape) +
                                    " that does not broadcast to the output " + spec::shape_string(epi_shape));
    plan.epilogue.push_back(&n);
  }
  std::set<std::string> epi;
  for (const auto* n : plan.epilogue) epi.insert(n->name);
  const std::set<std::string> aliases(plan.value_aliases.begin(), plan.value_aliases.end());
  for (const auto& o : s.outputs) {
    const bool is_index = index_values.count(o.node) > 0;
    const bool ok = is_index || aliases.count(o.node) || epi.count(o.node) || (o.node == an.name && !with_indices);
    if (!ok)
      return UserError(file_only, "output " + o.name + " (`" + o.node + "`) is not computed from " + quote(an),
                       "return the reduction's result or element-wise ops of it");
    if (!is_index && !float_storage(o.dtype))
      return UserError(file_only, "output " + o.name + " is " + spec::dtype_name(o.dtype) +
                                      "; the builtin reduction kernels write float32, float16 or bfloat16 values or int64 indices",
                       "return a floating-point tensor (e.g. .float())");
  }
  return plan;
}

}  // namespace egg::backend::builtin
