// Graph analysis of the GEMM family: the one GEMM anchor, the transposed leaves it reads as
// operands, its problem shape (M, N, K, batch, bias), the element-wise epilogue after it and its
// one output. Each step returns its result or the UserError naming the op and its line.
#include <map>
#include <set>

#include "backend/builtin/gemm.h"
#include "backend/builtin/plan_util.h"

namespace egg::backend::builtin {
namespace {

using spec::Shape;
// Node name of an operand view → the leaf it transposes in its last two dims.
using TransposedLeaves = std::map<std::string, const spec::Tensor*>;

const std::set<std::string>& anchor_ops() {
  static const std::set<std::string> ops = {"linear", "matmul", "bmm", "addmm"};
  return ops;
}

std::int64_t prod(const Shape& s, size_t from, size_t to) {
  std::int64_t p = 1;
  for (size_t d = from; d < to; ++d) p *= s[d];
  return p;
}

// The index of the one GEMM node. Without one, the error has no line, so that a family whose anchor
// is in the graph explains better.
std::variant<size_t, UserError> find_anchor(const spec::Spec& s) {
  size_t at = s.nodes.size();
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const auto& n = s.nodes[i];
    if (!anchor_ops().count(n.op)) continue;
    if (at != s.nodes.size())
      return UserError(n.where,
                       "a second GEMM (`" + n.target +
                           "`) in one op: the builtin GEMM family fuses one GEMM with element-wise "
                           "ops after it",
                       "split the op into one op.py per GEMM");
    at = i;
  }
  if (at == s.nodes.size())
    return UserError(SourceLocation{s.op_file, 0, "matmul"},
                     "no linear, matmul, mm, bmm or addmm in the op");
  return at;
}

// Before the GEMM only transposes of the last two dims of an input or parameter that the GEMM
// reads as an operand (x @ w.t(), torch.bmm(q, k.transpose(1, 2)), `x.T` as torch.export's
// permute): cuBLASLt and the own kernels read them as stored. Anything else (a prologue) is not
// fused.
std::variant<TransposedLeaves, UserError> operand_views(const spec::Spec& s, size_t at) {
  const spec::Node& g = s.nodes[at];
  TransposedLeaves transposed;
  // Either operand of matmul/bmm/addmm (A: mat1, B: mat2) may be a transposed leaf.
  const size_t first = g.op == "addmm" ? 1 : 0;
  auto operand = [&](size_t k, const spec::Node& n) {
    return g.op != "linear" && g.args.size() > k && g.args[k].kind == spec::Arg::Kind::node &&
           g.args[k].node == n.name;
  };
  for (size_t i = 0; i < at; ++i) {
    const auto& n = s.nodes[i];
    const spec::Tensor* src = (!n.args.empty() && n.args[0].kind == spec::Arg::Kind::node)
                                  ? s.find_tensor(n.args[0].node)
                                  : nullptr;
    const auto rank = src ? static_cast<std::int64_t>(src->shape.size()) : 0;
    if (rank >= 2 && swaps_dims(n, rank - 2, rank - 1) &&
        (operand(first, n) || operand(first + 1, n))) {
      transposed[n.name] = src;
      continue;
    }
    const bool layout =
        n.op == "transpose" || n.op == "permute" || n.op == "reshape" || n.op == "flatten";
    return UserError(
        n.where,
        quote(n) + " before " + quote(g) + " is not supported by the builtin GEMM family" +
            (layout ? ": operands must be contiguous inputs or parameters as stored (no "
                      "transposed or reshaped views)"
                    : ": it fuses element-wise ops after the GEMM only"),
        layout ? "pass the operand in the layout the GEMM reads (e.g. use nn.Linear's weight "
                 "[out, in], or make get_inputs() return the transposed tensor)"
               : "apply the op to the inputs in get_inputs(), or move it after the GEMM");
  }
  return transposed;
}

// Operand k of the GEMM: an input or parameter (or the leaf a transposed view reads), in a float
// dtype.
std::variant<const spec::Tensor*, UserError> operand_leaf(const spec::Spec& s, const spec::Node& g,
                                                          const TransposedLeaves& transposed,
                                                          size_t k, const std::string& role) {
  if (k >= g.args.size() || g.args[k].kind != spec::Arg::Kind::node)
    return UserError(g.where, "operand " + role + " of " + quote(g) + " is not a tensor");
  const spec::Tensor* t = s.find_tensor(g.args[k].node);
  if (!t && transposed.count(g.args[k].node)) t = transposed.at(g.args[k].node);
  if (!t)
    return UserError(g.where,
                     "operand " + role + " of " + quote(g) + " is not an input or parameter");
  if (!float_storage(t->dtype))
    return UserError(g.where,
                     quote(g) + ": operand " + t->name + " is " + spec::dtype_name(t->dtype) +
                         "; the builtin GEMM family multiplies float32, float16 or bfloat16",
                     "convert the operands to a floating dtype in get_inputs() or the model");
  return t;
}

UserError bad_shape(const spec::Node& g, const std::string& why) {
  return UserError(g.where, quote(g) + ": " + why + " is not supported by the builtin GEMM family",
                   "use 2D x 2D, batched 3D x 3D (equal batch), or ND x 2D operands");
}

// nn.Linear: x [.., K] by its weight [N, K] (read as stored, B^T), an optional bias [N].
std::optional<UserError> linear_shape(const spec::Spec& s, const spec::Node& g,
                                      const TransposedLeaves& transposed, GemmProblem& p) {
  auto a = operand_leaf(s, g, transposed, 0, "input");
  if (auto* e = std::get_if<UserError>(&a)) return *e;
  auto b = operand_leaf(s, g, transposed, 1, "weight");
  if (auto* e = std::get_if<UserError>(&b)) return *e;
  const spec::Tensor& x = *std::get<const spec::Tensor*>(a);
  const spec::Tensor& w = *std::get<const spec::Tensor*>(b);
  if (w.shape.size() != 2 || x.shape.empty() || x.shape.back() != w.shape[1])
    return bad_shape(
        g, "input " + spec::shape_string(x.shape) + " with weight " + spec::shape_string(w.shape));
  p.a = x.name;
  p.b = w.name;
  p.b_nk = true;
  p.k = w.shape[1];
  p.n = w.shape[0];
  p.m = prod(x.shape, 0, x.shape.size() - 1);
  if (g.args.size() > 2 && g.args[2].kind == spec::Arg::Kind::node) {
    auto bias = operand_leaf(s, g, transposed, 2, "bias");
    if (auto* e = std::get_if<UserError>(&bias)) return *e;
    const spec::Tensor& t = *std::get<const spec::Tensor*>(bias);
    if (spec::numel(t.shape) != p.n || t.shape.empty() || t.shape.back() != p.n)
      return bad_shape(g, "bias " + spec::shape_string(t.shape));
    p.bias = t.name;
  }
  return std::nullopt;
}

// matmul, bmm, addmm: A [.., M, K] by B [.., K, N], either a transposed leaf; a B without batch
// dims shared by every batch entry of A (A's batch folded into M), else equal batch dims; addmm's
// alpha, beta and input.
std::optional<UserError> matmul_shape(const spec::Spec& s, const spec::Node& g,
                                      const TransposedLeaves& transposed, GemmProblem& p) {
  const bool addmm = g.op == "addmm";
  auto a_leaf = operand_leaf(s, g, transposed, addmm ? 1 : 0, "mat1");
  if (auto* e = std::get_if<UserError>(&a_leaf)) return *e;
  auto b_leaf = operand_leaf(s, g, transposed, addmm ? 2 : 1, "mat2");
  if (auto* e = std::get_if<UserError>(&b_leaf)) return *e;
  const spec::Tensor& a = *std::get<const spec::Tensor*>(a_leaf);
  const spec::Tensor& b = *std::get<const spec::Tensor*>(b_leaf);
  p.a = a.name;
  p.b = b.name;
  p.b_nk = transposed.count(g.args[addmm ? 2 : 1].node) > 0;
  p.a_km = transposed.count(g.args[addmm ? 1 : 0].node) > 0;
  Shape as = a.shape;  // the logical [.., M, K]
  if (p.a_km) std::swap(as[as.size() - 1], as[as.size() - 2]);
  Shape bs = b.shape;  // the logical [.., K, N]
  if (p.b_nk) std::swap(bs[bs.size() - 1], bs[bs.size() - 2]);
  const std::string operands = spec::shape_string(as) + " x " + spec::shape_string(bs);
  if (as.size() < 2 || bs.size() < 2) return bad_shape(g, "a 1-D operand (" + operands + ")");
  if (as.back() != bs[bs.size() - 2] || (g.op == "bmm" && (as.size() != 3 || bs.size() != 3)) ||
      (addmm && (as.size() != 2 || bs.size() != 2)))
    return bad_shape(g, "operands " + operands);
  p.k = as.back();
  p.n = bs.back();
  const std::int64_t b_batch = prod(bs, 0, bs.size() - 2);
  if (b_batch == 1 && bs.size() <= as.size() && !(p.a_km && as.size() > 2)) {
    p.m = prod(as, 0, as.size() - 1);  // a shared B: fold A's batch into M
  } else if (as.size() == bs.size() &&
             Shape(as.begin(), as.end() - 2) == Shape(bs.begin(), bs.end() - 2)) {
    p.batch = b_batch;
    p.m = as[as.size() - 2];
  } else {
    return bad_shape(g, "broadcast batch dimensions (" + operands + ")");
  }
  if (addmm) {
    if (g.args.empty() || g.args[0].kind != spec::Arg::Kind::node || !s.find_tensor(g.args[0].node))
      return UserError(g.where, quote(g) + ": its input must be an input or parameter tensor");
    p.alpha = attr_number(g, "alpha", 1.0);
    p.beta = attr_number(g, "beta", 1.0);
    if (p.beta != 0.0) p.bias = g.args[0].node;
  }
  return std::nullopt;
}

// One dtype for the operands and the result, a consistent shape, and a bias (linear's, addmm's
// input) of a float dtype that broadcasts to the result.
std::optional<UserError> check_problem(const spec::Spec& s, const spec::Node& g,
                                       const GemmProblem& p) {
  const spec::DType a = s.find_tensor(p.a)->dtype, b = s.find_tensor(p.b)->dtype;
  if (a != b || g.dtype != a)
    return UserError(
        g.where,
        quote(g) + " mixes dtypes (" + spec::dtype_name(a) + " and " + spec::dtype_name(b) + ")",
        "give both operands one dtype");
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || spec::numel(g.shape) != p.batch * p.m * p.n)
    return bad_shape(g, "an empty or inconsistent problem (" + spec::shape_string(g.shape) + ")");
  if (p.bias.empty()) return std::nullopt;
  const spec::Tensor* t = s.find_tensor(p.bias);
  if (!broadcasts_to(t->shape, p.out_shape))
    return UserError(g.where, quote(g) + ": " + t->name + " " + spec::shape_string(t->shape) +
                                  " does not broadcast to the result " +
                                  spec::shape_string(p.out_shape));
  if (!float_storage(t->dtype))
    return UserError(g.where, quote(g) + ": " + t->name + " is " + spec::dtype_name(t->dtype) +
                                  "; the builtin GEMM family reads float32, float16 or bfloat16");
  return std::nullopt;
}

// The epilogue: the element-wise ops (of the table) after the GEMM, over its result, reading
// tensors of a float dtype or bool that broadcast to it (not the transposed operand views).
std::variant<std::vector<const spec::Node*>, UserError> gemm_epilogue(
    const spec::Spec& s, const OpTable& ops, size_t at, const TransposedLeaves& transposed,
    const spec::Shape& out_shape) {
  const spec::Node& g = s.nodes[at];
  std::vector<const spec::Node*> epilogue;
  for (size_t i = at + 1; i < s.nodes.size(); ++i) {
    const auto& n = s.nodes[i];
    if (auto e = ops.check(s, n))
      return UserError(e->where(), std::string(e->what()) + " after the GEMM " + quote(g),
                       "the builtin GEMM family fuses these element-wise ops after the GEMM: " +
                           ops.known_ops());
    for (const auto& a : node_args(n)) {
      if (transposed.count(a))
        return UserError(n.where, quote(n) + " reads the transposed view `" + a +
                                      "` after the GEMM; the builtin GEMM family reads it only "
                                      "as the GEMM's operand");
      const spec::Tensor* t = s.find_tensor(a);
      if (!t) continue;
      if (!float_storage(t->dtype) && t->dtype != spec::DType::boolean)
        return UserError(n.where,
                         "tensor " + t->name + " is " + spec::dtype_name(t->dtype) +
                             "; the GEMM epilogue reads float32, float16, bfloat16 or bool",
                         "convert it in get_inputs() or the model");
      if (!broadcasts_to(t->shape, out_shape))
        return UserError(n.where,
                         "tensor " + t->name + " of shape " + spec::shape_string(t->shape) +
                             " does not broadcast to the GEMM result " +
                             spec::shape_string(out_shape),
                         "the GEMM epilogue reads operands that broadcast to the GEMM's output");
    }
    if (!broadcasts_to(n.shape, out_shape))
      return UserError(n.where, quote(n) + " produces shape " + spec::shape_string(n.shape) +
                                    " that does not broadcast to the GEMM result " +
                                    spec::shape_string(out_shape));
    epilogue.push_back(&n);
  }
  return epilogue;
}

// One output: the GEMM result or the end of its epilogue, in the GEMM's dtype and shape.
std::optional<UserError> check_output(const spec::Spec& s, const GemmProblem& p) {
  const spec::Node& g = *p.anchor;
  if (s.outputs.size() != 1)
    return UserError(g.where,
                     quote(g) + ": the builtin GEMM family writes one output, the op returns " +
                         std::to_string(s.outputs.size()),
                     "return one tensor, or split the op into several op.py files");
  const auto& o = s.outputs.front();
  const std::string last = p.epilogue.empty() ? g.name : p.epilogue.back()->name;
  if (o.node != last)
    return UserError(g.where, quote(g) + ": the op returns `" + o.node +
                                  "`, not the end of the GEMM's epilogue");
  if (o.dtype != p.dtype)
    return UserError(g.where,
                     quote(g) + ": the output is " + spec::dtype_name(o.dtype) +
                         " but the GEMM computes " + spec::dtype_name(p.dtype),
                     "keep the epilogue's operands in the GEMM's dtype (type promotion changes the "
                     "output dtype)");
  if (o.shape != p.out_shape)
    return UserError(g.where, quote(g) + ": the output " + spec::shape_string(o.shape) +
                                  " is not the GEMM's shape " + spec::shape_string(p.out_shape));
  return std::nullopt;
}

}  // namespace

std::variant<GemmProblem, UserError> plan_gemm(const spec::Spec& s, const OpTable& ops) {
  const auto anchor = find_anchor(s);
  if (const auto* e = std::get_if<UserError>(&anchor)) return *e;
  const size_t at = std::get<size_t>(anchor);
  const spec::Node& g = s.nodes[at];
  const auto views = operand_views(s, at);
  if (const auto* e = std::get_if<UserError>(&views)) return *e;
  const TransposedLeaves& transposed = std::get<TransposedLeaves>(views);

  GemmProblem p;
  p.anchor = &g;
  p.out_shape = g.shape;
  if (auto e =
          g.op == "linear" ? linear_shape(s, g, transposed, p) : matmul_shape(s, g, transposed, p))
    return *e;
  p.dtype = s.find_tensor(p.a)->dtype;
  if (auto e = check_problem(s, g, p)) return *e;
  auto epilogue = gemm_epilogue(s, ops, at, transposed, p.out_shape);
  if (auto* e = std::get_if<UserError>(&epilogue)) return *e;
  p.epilogue = std::move(std::get<std::vector<const spec::Node*>>(epilogue));
  if (auto e = check_output(s, p)) return *e;
  return p;
}

}  // namespace egg::backend::builtin
