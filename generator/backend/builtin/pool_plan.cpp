// Graph analysis of the pool family: finds the one pool, its prologue and epilogue, the window
// geometry, or the reason (op and line) the family cannot implement the spec.
#include <set>

#include "backend/builtin/plan_util.h"
#include "backend/builtin/pool.h"
#include "backend/builtin/window.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;
using spec::Shape;

// The pool ops this family implements, and the ones it knows but rejects.
bool is_pool(const std::string& op) {
  for (const char* p :
       {"max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d"})
    if (op == p) return true;
  return false;
}
// Adaptive pools: implemented where every output size divides its input size (then ATen's
// windows [floor(i*in/out), ceil((i+1)*in/out)) are a fixed pool with kernel = stride = in/out).
bool is_adaptive_pool(const std::string& op) {
  for (const char* p : {"adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
                        "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"})
    if (op == p) return true;
  return false;
}

}  // namespace

std::int64_t pool_output_size(std::int64_t in, std::int64_t kernel, std::int64_t pad,
                              std::int64_t stride, std::int64_t dilation, bool ceil_mode) {
  const std::int64_t num =
      in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  // div_rtn: rounds toward negative infinity.
  std::int64_t q = num / stride;
  if ((num % stride != 0) && ((num < 0) != (stride < 0))) --q;
  std::int64_t out = q + 1;
  // The last window must start inside the input or the left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

bool is_pool_op(const std::string& op) { return is_pool(op) || is_adaptive_pool(op); }

std::optional<UserError> plan_pool_window(const spec::Spec& s, const spec::Node& an,
                                          PoolPlan& plan) {
  plan.anchor = &an;
  const bool adaptive = is_adaptive_pool(an.op);
  plan.max = an.op.find("max_pool") != std::string::npos;
  plan.dims = an.op[an.op.size() - 2] - '0';
  if (an.args.empty() || an.args[0].kind != spec::Arg::Kind::node)
    return UserError(an.where, quote(an) + " does not read a tensor");
  for (size_t k = 1; k < an.args.size(); ++k)
    if (an.args[k].kind == spec::Arg::Kind::node)
      return UserError(an.where,
                       quote(an) + " with a tensor option is not supported by the builtin backend");
  plan.input = an.args[0].node;
  if (const auto* t = s.find_tensor(plan.input))
    plan.in_shape = t->shape;
  else if (const auto* p = s.find_node(plan.input))
    plan.in_shape = p->shape;
  else
    return UserError(an.where,
                     "operand `" + plan.input + "` is not an input, parameter or earlier op");
  plan.out_shape = an.shape;

  // Options.
  const json& at = an.attrs;
  if (at.value("return_indices", false))
    return UserError(
        an.where,
        quote(an) + " with return_indices=True is not implemented by the builtin pool family",
        "return only the pooled values");
  const int d = plan.dims;
  const int rank = static_cast<int>(plan.in_shape.size());
  if (rank != d + 1 && rank != d + 2)
    return UserError(an.where, quote(an) + " reads a tensor of rank " + std::to_string(rank) +
                                   "; expected " + std::to_string(d + 1) + " or " +
                                   std::to_string(d + 2));
  const json none;
  if (adaptive) {
    // The output sizes are the node's (output_size may hold None: that dim's input size).
    if (static_cast<int>(plan.out_shape.size()) != rank)
      return UserError(an.where, quote(an) + " produces " + spec::shape_string(plan.out_shape) +
                                     " from an input of rank " + std::to_string(rank));
    for (int k = 0; k < d; ++k) {
      const std::int64_t in = plan.in_shape[rank - d + k], out = plan.out_shape[rank - d + k];
      if (out < 1 || in % out != 0)
        return UserError(an.where,
                         quote(an) + " pools " + spec::shape_string(plan.in_shape) + " to " +
                             spec::shape_string(plan.out_shape) +
                             "; the builtin pool family implements adaptive pooling only where "
                             "each output size divides its input size (windows of equal size)",
                         "choose an output_size that divides the input, or use max_pool/avg_pool "
                         "with an explicit kernel_size and stride");
      plan.kernel[3 - d + k] = plan.stride[3 - d + k] = in / out;
    }
  } else if (!spread(at.contains("kernel_size") ? at["kernel_size"] : none, d, plan.kernel))
    return UserError(an.where,
                     quote(an) + " has a kernel_size the builtin pool family cannot read");
  if (!adaptive) {
    const json stride = at.contains("stride") ? at["stride"] : none;
    if (stride.is_null() || (stride.is_array() && stride.empty()))
      plan.stride = plan.kernel;
    else if (!spread(stride, d, plan.stride))
      return UserError(an.where, quote(an) + " has a stride the builtin pool family cannot read");
    if (!spread(at.value("padding", json(0)), d, plan.pad))
      return UserError(an.where, quote(an) + " has a padding the builtin pool family cannot read",
                       "use integer padding (no 'same'/'valid' strings)");
    if (plan.max && !spread(at.value("dilation", json(1)), d, plan.dilation))
      return UserError(an.where, quote(an) + " has a dilation the builtin pool family cannot read");
    plan.ceil_mode = at.value("ceil_mode", false);
    plan.count_include_pad = at.value("count_include_pad", true);
  }
  if (!adaptive && !plan.max && at.contains("divisor_override") &&
      !at["divisor_override"].is_null()) {
    if (!at["divisor_override"].is_number_integer() ||
        at["divisor_override"].get<std::int64_t>() == 0)
      return UserError(an.where, quote(an) + " has divisor_override " +
                                     at["divisor_override"].dump() +
                                     "; expected a non-zero integer");
    plan.divisor = at["divisor_override"].get<std::int64_t>();
  }
  for (int k = 0; k < 3; ++k)
    if (plan.kernel[k] < 1 || plan.stride[k] < 1 || plan.pad[k] < 0 || plan.dilation[k] < 1)
      return UserError(
          an.where,
          quote(an) + " has a non-positive kernel_size, stride or dilation, or a negative padding");

  // Geometry: leading dims are planes; the output must match ATen's size formula.
  for (int k = 0; k < rank - d; ++k) plan.planes *= plan.in_shape[k];
  for (int k = 0; k < d; ++k) plan.in[3 - d + k] = plan.in_shape[rank - d + k];
  Shape expect(plan.in_shape.begin(), plan.in_shape.begin() + (rank - d));
  for (int k = 3 - d; k < 3; ++k) {
    plan.out[k] = pool_output_size(plan.in[k], plan.kernel[k], plan.pad[k], plan.stride[k],
                                   plan.dilation[k], plan.ceil_mode);
    if (plan.out[k] < 1)
      return UserError(an.where, quote(an) + " makes an empty output (input " +
                                     spec::shape_string(plan.in_shape) + ")");
    expect.push_back(plan.out[k]);
  }
  if (expect != plan.out_shape)
    return UserError(an.where,
                     quote(an) + " produces " + spec::shape_string(plan.out_shape) +
                         ", but the pool output formula gives " + spec::shape_string(expect),
                     "this is a bug in EGG's pool family; please report it with the op.py");
  if (spec::numel(plan.in_shape) == 0)
    return UserError(an.where, quote(an) + " reads an empty tensor");
  if (!float_storage(an.dtype))
    return UserError(an.where, quote(an) + " is " + spec::dtype_name(an.dtype) +
                                   "; the builtin pool family reads float32, float16 or bfloat16");
  return std::nullopt;
}

std::variant<PoolPlan, UserError> plan_pool(const spec::Spec& s, const OpTable& ops) {
  const SourceLocation file_only{s.op_file, 0, "output"};
  PoolPlan plan;
  const spec::Node* anchor = nullptr;
  for (const auto& n : s.nodes) {
    if (!is_pool_op(n.op)) continue;
    if (anchor)
      return UserError(n.where,
                       quote(n) + " is a second pool after `" + anchor->target + "`" +
                           at_line(*anchor) + "; the builtin pool family fuses exactly one",
                       "split the op into two op.py files (one pool each)");
    anchor = &n;
  }
  if (!anchor)
    return UserError(file_only,
                     "the graph has no max_pool or avg_pool op (the pool family's anchor)");
  if (auto e = plan_pool_window(s, *anchor, plan)) return *e;
  const spec::Node& an = *anchor;

  // Prologue: the pool input's ancestors, element-wise on the input shape.
  const std::set<std::string> pro = ancestors(s, {plan.input});
  auto check_leaf = [](const spec::Tensor& t, const Shape& shape, const spec::Node& at_node) {
    return check_leaf_tensor(t, shape, at_node, "the builtin pool kernels read");
  };
  if (const auto* t = s.find_tensor(plan.input))
    if (auto e = check_leaf(*t, plan.in_shape, an)) return *e;
  for (const auto& n : s.nodes) {
    if (!pro.count(n.name)) continue;
    if (auto e = ops.check(s, n))
      return UserError(
          n.where, std::string(e->what()) + "; before " + quote(an) + " only element-wise ops fuse",
          e->hint());
    if (!broadcasts_to(n.shape, plan.in_shape))
      return UserError(n.where, quote(n) + " produces shape " + spec::shape_string(n.shape) +
                                    " that does not broadcast to the input of `" + an.target + "`");
    for (const auto& a : node_args(n))
      if (const auto* t = s.find_tensor(a))
        if (auto e = check_leaf(*t, plan.in_shape, n)) return *e;
    plan.prologue.push_back(&n);
  }

  // Epilogue: everything else, element-wise on the output shape, never reading the pool's input
  // side.
  EpilogueRule rule;
  rule.shape = plan.out_shape;
  rule.shape_of = "the pool output";
  rule.input_side = pro;
  rule.input_side.insert(plan.input);
  rule.skip = [&](const spec::Node& n) { return pro.count(n.name) > 0 || is_pool(n.op); };
  rule.check_leaf = [&](const spec::Tensor& t, const spec::Node& at_node) {
    return check_leaf(t, plan.out_shape, at_node);
  };
  auto epi = collect_epilogue(s, ops, an, rule);
  if (auto* e = std::get_if<UserError>(&epi)) return *e;
  plan.epilogue = std::get<std::vector<const spec::Node*>>(std::move(epi));
  if (auto e = check_anchor_outputs(s, an, plan.epilogue, plan.out_shape, file_only,
                                    "the pool's result", "pool", "the pool's"))
    return *e;
  return plan;
}

}  // namespace egg::backend::builtin
