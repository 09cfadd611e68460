// Graph analysis of the conv family: finds the one convolution, its operands, its geometry and its
// element-wise epilogue, or the reason (op and line) the family cannot implement the spec.
#include <algorithm>
#include <set>

#include "backend/builtin/conv.h"
#include "backend/builtin/plan_util.h"
#include "backend/builtin/window.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;
using spec::Shape;

json attr(const spec::Node& n, const char* key, json fallback) {
  return n.attrs.contains(key) && !n.attrs[key].is_null() ? n.attrs[key] : fallback;
}

// The leaf tensor (input or parameter) a conv operand names, or nullptr.
const spec::Tensor* operand(const spec::Spec& s, const spec::Node& an, size_t k) {
  if (k >= an.args.size() || an.args[k].kind != spec::Arg::Kind::node) return nullptr;
  return s.find_tensor(an.args[k].node);
}

}  // namespace

bool is_convolution(const std::string& op) {
  for (const char* c :
       {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"})
    if (op == c) return true;
  return false;
}

std::int64_t conv_output_size(std::int64_t in, std::int64_t kernel, std::int64_t pad_total,
                              std::int64_t stride, std::int64_t dilation) {
  const std::int64_t span = in + pad_total - dilation * (kernel - 1) - 1;
  if (span < 0) return 0;
  return span / stride + 1;
}

std::int64_t conv_transpose_output_size(std::int64_t in, std::int64_t kernel, std::int64_t pad,
                                        std::int64_t stride, std::int64_t dilation,
                                        std::int64_t output_padding) {
  return (in - 1) * stride - 2 * pad + dilation * (kernel - 1) + output_padding + 1;
}

std::variant<ConvPlan, UserError> plan_conv(const spec::Spec& s, const OpTable& ops,
                                            const ReductionOps* fuse, bool channels_last_library) {
  const SourceLocation file_only{s.op_file, 0, "output"};
  ConvPlan plan;
  for (const auto& n : s.nodes) {
    if (!is_convolution(n.op)) continue;
    if (plan.anchor)
      return UserError(n.where,
                       quote(n) + " is a second convolution after `" + plan.anchor->target + "`" +
                           at_line(*plan.anchor) + "; the builtin conv family fuses exactly one",
                       "the builtin backend plans one kernel per convolution; if this message "
                       "comes from a whole-op check, split the op into one op.py per convolution");
    plan.anchor = &n;
  }
  if (!plan.anchor)
    return UserError(file_only,
                     "the graph has no conv1d/2d/3d or conv_transpose1d/2d/3d (the conv family's "
                     "anchor)");
  const spec::Node& an = *plan.anchor;
  plan.transposed = an.op.rfind("conv_transpose", 0) == 0;
  plan.dims = an.op[an.op.size() - 2] - '0';
  const int d = plan.dims;

  // Operands: input, weight and bias are inputs or parameters, one float dtype.
  if (an.args.size() > 3 || (an.args.size() > 1 && an.args[1].kind != spec::Arg::Kind::node) ||
      (an.args.size() > 2 && an.args[2].kind != spec::Arg::Kind::node &&
       an.args[2].kind != spec::Arg::Kind::none))
    return UserError(an.where,
                     quote(an) + " is called with arguments the builtin conv family cannot read",
                     "call it as conv(input, weight, bias, ...) with the options as numbers");
  const spec::Tensor* x = operand(s, an, 0);
  if (!x) {
    const bool is_node = !an.args.empty() && an.args[0].kind == spec::Arg::Kind::node &&
                         s.find_node(an.args[0].node);
    return UserError(an.where,
                     quote(an) + (is_node ? " reads a value computed before it; the builtin conv "
                                            "family fuses element-wise ops after the convolution "
                                            "only"
                                          : " does not read an input tensor"),
                     "the builtin backend runs ops before a convolution as their own kernel; "
                     "if this message comes from a whole-op check the planner splits them off");
  }
  const spec::Tensor* w = operand(s, an, 1);
  if (!w)
    return UserError(an.where,
                     quote(an) +
                         ": its weight is not an input or parameter tensor (a weight "
                         "computed in forward is not supported by the builtin conv family)",
                     "use the module's weight, or pass the weight as an input of forward");
  const spec::Tensor* b = nullptr;
  if (an.args.size() > 2 && an.args[2].kind == spec::Arg::Kind::node) {
    b = operand(s, an, 2);
    if (!b)
      return UserError(an.where, quote(an) + ": its bias is not an input or parameter tensor",
                       "use the module's bias, or add a computed bias after the convolution");
  }
  plan.input = x->name;
  plan.weight = w->name;
  plan.bias = b ? b->name : "";
  plan.dtype = x->dtype;
  plan.in_shape = x->shape;
  plan.weight_shape = w->shape;
  plan.out_shape = an.shape;
  if (!float_storage(x->dtype))
    return UserError(an.where,
                     quote(an) + " reads " + spec::dtype_name(x->dtype) +
                         "; the builtin conv family convolves float32, float16 or bfloat16",
                     "convert the input in get_inputs() or the model");
  for (const spec::Tensor* t : {w, b})
    if (t && t->dtype != x->dtype)
      return UserError(an.where,
                       quote(an) + " mixes dtypes (input " + spec::dtype_name(x->dtype) + ", " +
                           t->name + " " + spec::dtype_name(t->dtype) + ")",
                       "give input, weight and bias one dtype (e.g. model.half() with half "
                       "inputs)");
  if (an.dtype != x->dtype)
    return UserError(an.where, quote(an) + " produces " + spec::dtype_name(an.dtype) + " from " +
                                   spec::dtype_name(x->dtype) + " operands");

  // Options. padding_mode other than zeros (modules only) and string padding other than
  // 'same'/'valid' are rejected by name.
  const json& at = an.attrs;
  const std::string mode = at.value("padding_mode", std::string("zeros"));
  if (mode != "zeros")
    return UserError(an.where,
                     quote(an) + " with padding_mode='" + mode +
                         "' is not implemented by the builtin conv family (zero padding only)",
                     "use padding_mode='zeros' (the default)");
  const int rank = static_cast<int>(plan.in_shape.size());
  if (rank != d + 1 && rank != d + 2)
    return UserError(an.where, quote(an) + " reads a tensor of rank " + std::to_string(rank) +
                                   "; expected " + std::to_string(d + 1) + " or " +
                                   std::to_string(d + 2));
  if (static_cast<int>(plan.weight_shape.size()) != d + 2)
    return UserError(an.where, quote(an) + " has a weight of shape " +
                                   spec::shape_string(plan.weight_shape) + "; expected rank " +
                                   std::to_string(d + 2));
  if (!spread(attr(an, "stride", json(1)), d, plan.stride))
    return UserError(an.where, quote(an) + " has a stride the builtin conv family cannot read");
  if (!spread(attr(an, "dilation", json(1)), d, plan.dilation))
    return UserError(an.where, quote(an) + " has a dilation the builtin conv family cannot read");
  const json groups = attr(an, "groups", json(1));
  if (!groups.is_number_integer() || groups.get<std::int64_t>() < 1)
    return UserError(an.where,
                     quote(an) + " has groups " + groups.dump() + "; expected a positive integer");
  plan.groups = groups.get<std::int64_t>();
  const json padding = attr(an, "padding", json(0));
  std::array<std::int64_t, 3> pad_total{0, 0, 0};
  bool same = false;
  if (padding.is_string()) {
    const std::string p = padding.get<std::string>();
    if (plan.transposed || (p != "same" && p != "valid"))
      return UserError(
          an.where,
          quote(an) + " has padding='" + p + "', which the builtin conv family does not implement",
          "use integer padding, or 'same'/'valid' on a (non-transposed) convolution");
    same = p == "same";
  } else if (!spread(padding, d, plan.pad)) {
    return UserError(an.where, quote(an) + " has a padding the builtin conv family cannot read");
  }
  std::array<std::int64_t, 3> out_pad{0, 0, 0};
  if (plan.transposed && !spread(attr(an, "output_padding", json(0)), d, out_pad))
    return UserError(an.where,
                     quote(an) + " has an output_padding the builtin conv family cannot read");
  for (int k = 0; k < 3; ++k)
    if (out_pad[k] < 0 ||
        (out_pad[k] > 0 && out_pad[k] >= std::max(plan.stride[k], plan.dilation[k])))
      return UserError(an.where, quote(an) + " has output_padding " + std::to_string(out_pad[k]) +
                                     "; it must be smaller than the stride or the dilation");
  for (int k = 0; k < 3; ++k)
    if (plan.stride[k] < 1 || plan.dilation[k] < 1 || plan.pad[k] < 0)
      return UserError(an.where, quote(an) +
                                     " has a non-positive stride or dilation, or a "
                                     "negative padding");

  // Geometry: [N,] C, spatial; weight [C_out, C_in/groups, k...] or, transposed,
  // [C_in, C_out/groups, k...].
  const bool batched = rank == d + 2;
  plan.batch = batched ? plan.in_shape[0] : 1;
  plan.c_in = plan.in_shape[batched ? 1 : 0];
  for (int k = 0; k < d; ++k) {
    plan.in[3 - d + k] = plan.in_shape[rank - d + k];
    plan.kernel[3 - d + k] = plan.weight_shape[2 + k];
  }
  const std::int64_t wc0 = plan.weight_shape[0], wc1 = plan.weight_shape[1];
  if (plan.transposed) {
    plan.c_out = wc1 * plan.groups;
    if (wc0 != plan.c_in || plan.c_in % plan.groups != 0)
      return UserError(an.where, quote(an) + ": weight " + spec::shape_string(plan.weight_shape) +
                                     " does not fit the input's " + std::to_string(plan.c_in) +
                                     " channels in " + std::to_string(plan.groups) + " group(s)");
  } else {
    plan.c_out = wc0;
    if (wc1 * plan.groups != plan.c_in || wc0 % plan.groups != 0)
      return UserError(an.where, quote(an) + ": weight " + spec::shape_string(plan.weight_shape) +
                                     " does not fit the input's " + std::to_string(plan.c_in) +
                                     " channels in " + std::to_string(plan.groups) + " group(s)");
  }
  if (b && (b->shape.size() != 1 || b->shape[0] != plan.c_out))
    return UserError(an.where, quote(an) + ": bias " + spec::shape_string(b->shape) +
                                   " is not a vector of the " + std::to_string(plan.c_out) +
                                   " output channels");
  Shape expect;
  if (batched) expect.push_back(plan.batch);
  expect.push_back(plan.c_out);
  for (int k = 3 - d; k < 3; ++k) {
    if (plan.transposed) {
      // The output size as traced: output_padding, or the module's forward(x, output_size=...),
      // which the trace does not keep, adds 0 <= extra < max(stride, dilation) at the end.
      const std::int64_t base = conv_transpose_output_size(plan.in[k], plan.kernel[k], plan.pad[k],
                                                           plan.stride[k], plan.dilation[k], 0);
      const std::int64_t extra =
          plan.out_shape.size() == plan.in_shape.size() ? plan.out_shape[rank - 3 + k] - base : -1;
      plan.out[k] =
          base +
          (extra >= 0 && extra < std::max(plan.stride[k], plan.dilation[k]) ? extra : out_pad[k]);
    } else {
      if (same) {
        const std::int64_t total = plan.dilation[k] * (plan.kernel[k] - 1);
        plan.pad[k] = total / 2;  // ATen pads the odd remainder on the right
        pad_total[k] = total;
      } else {
        pad_total[k] = 2 * plan.pad[k];
      }
      plan.out[k] = conv_output_size(plan.in[k], plan.kernel[k], pad_total[k], plan.stride[k],
                                     plan.dilation[k]);
    }
    if (plan.out[k] < 1)
      return UserError(an.where, quote(an) + " makes an empty output (input " +
                                     spec::shape_string(plan.in_shape) + ")");
    expect.push_back(plan.out[k]);
  }
  if (expect != plan.out_shape)
    return UserError(an.where,
                     quote(an) + " produces " + spec::shape_string(plan.out_shape) +
                         ", but the convolution output formula gives " + spec::shape_string(expect),
                     "this is a bug in EGG's conv family; please report it with the op.py");
  if (spec::numel(plan.in_shape) == 0 || spec::numel(plan.weight_shape) == 0)
    return UserError(an.where, quote(an) + " reads an empty tensor");
  if (plan.groups > 65535 || plan.cout_per_group() > (std::int64_t(1) << 30) ||
      plan.gemm_k() > (std::int64_t(1) << 30))
    return UserError(an.where, quote(an) +
                                   " has more groups or channels than the builtin conv "
                                   "kernels index (65535 groups, 2^30 channels)");

  if (fuse) {  // a reduction or a pool ends the epilogue
    if (auto e = plan_conv_fused(s, ops, *fuse, plan, channels_last_library)) return *e;
    return plan;
  }
  // Epilogue: every other node, element-wise on the output shape, computed from the result.
  EpilogueRule rule;
  rule.shape = plan.out_shape;
  rule.shape_of = "the convolution output";
  rule.from_anchor = true;
  rule.skip = [](const spec::Node& n) { return is_convolution(n.op); };
  rule.check_leaf = [&](const spec::Tensor& t, const spec::Node& at_node) {
    return check_leaf_tensor(t, plan.out_shape, at_node, "the conv epilogue reads",
                             "the convolution's output ");
  };
  auto epi = collect_epilogue(s, ops, an, rule);
  if (auto* e = std::get_if<UserError>(&epi)) return *e;
  plan.epilogue = std::get<std::vector<const spec::Node*>>(std::move(epi));
  if (auto e = check_anchor_outputs(s, an, plan.epilogue, plan.out_shape, file_only,
                                    "the convolution's result", "conv", "the convolution's"))
    return *e;
  return plan;
}

}  // namespace egg::backend::builtin
