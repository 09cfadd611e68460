#include "pipeline/roofline.h"

#include <string>

namespace egg::pipeline {
namespace {

// The shape of node argument `k`, or nullptr when it is not a tensor.
const spec::Shape* arg_shape(const spec::Spec& s, const spec::Node& n, size_t k) {
  if (k >= n.args.size() || n.args[k].kind != spec::Arg::Kind::node) return nullptr;
  return s.shape_of(n.args[k].node);
}

double product(const spec::Shape& shape, size_t from) {
  double p = 1;
  for (size_t d = from; d < shape.size(); ++d) p *= double(shape[d]);
  return p;
}

}  // namespace

double node_flops(const spec::Spec& s, const spec::Node& n) {
  const double out = double(spec::numel(n.shape));
  const std::string& op = n.op;
  // out = A·B: each output element is a K-long dot product (K: A's last dim).
  if (op == "linear" || op == "matmul" || op == "mm" || op == "bmm" || op == "addmm" ||
      op == "baddbmm") {
    const size_t a = (op == "addmm" || op == "baddbmm") ? 1 : 0;
    if (const auto* shape = arg_shape(s, n, a); shape && !shape->empty())
      return 2 * out * double(shape->back());
  }
  // Weight [C_out, C_in / groups, k...]: each output element reads C_in / groups * prod(k).
  if (op == "conv1d" || op == "conv2d" || op == "conv3d") {
    if (const auto* w = arg_shape(s, n, 1); w && w->size() >= 2) return 2 * out * product(*w, 1);
  }
  // Weight [C_in, C_out / groups, k...]: each input element scatters into C_out / groups * prod(k).
  if (op == "conv_transpose1d" || op == "conv_transpose2d" || op == "conv_transpose3d") {
    const auto* x = arg_shape(s, n, 0);
    if (const auto* w = arg_shape(s, n, 1); x && w && w->size() >= 2)
      return 2 * double(spec::numel(*x)) * product(*w, 1);
  }
  // softmax(Q·K^T)·V: Q [.., L, E], K [.., S, E], out [.., L, Ev]: 2·L·S·(E + Ev) per batch-head.
  if (op == "scaled_dot_product_attention") {
    const auto* q = arg_shape(s, n, 0);
    if (const auto* k = arg_shape(s, n, 1); q && k && k->size() >= 2)
      return 2 * double((*k)[k->size() - 2]) * (double(spec::numel(*q)) + out);
  }
  return out;
}

RooflineInputs roofline_inputs(const spec::Spec& s) {
  RooflineInputs r;
  for (const auto& t : s.inputs)
    r.bytes += double(spec::numel(t.shape)) * spec::dtype_size(t.dtype);
  for (const auto& t : s.params)
    r.bytes += double(spec::numel(t.shape)) * spec::dtype_size(t.dtype);
  for (const auto& o : s.outputs)
    r.bytes += double(spec::numel(o.shape)) * spec::dtype_size(o.dtype);
  for (const auto& n : s.nodes) r.flops += node_flops(s, n);
  return r;
}

}  // namespace egg::pipeline
