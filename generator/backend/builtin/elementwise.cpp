#include "backend/builtin/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace egg::backend::builtin {
namespace {

using nlohmann::json;
using spec::Shape;

// A float literal CUDA parses exactly as PyTorch's double-to-float conversion.
std::string float_literal(double v) {
  if (std::isnan(v)) return "NAN";
  // The frontend writes +-inf as +-DBL_MAX (JSON has no infinity); both become float infinity.
  if (std::isinf(static_cast<float>(v))) return v > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(static_cast<float>(v)));
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  s += "f";
  return s[0] == '-' ? "(" + s + ")" : s;
}

// Substitutes {0}.. and {attr} in an op's expression.
std::string substitute(std::string expr, const std::vector<std::string>& operands,
                       const std::map<std::string, std::string>& attrs) {
  std::string out;
  for (size_t i = 0; i < expr.size(); ++i) {
    if (expr[i] != '{') {
      out += expr[i];
      continue;
    }
    size_t close = expr.find('}', i);
    std::string key = expr.substr(i + 1, close - i - 1);
    if (!key.empty() && std::isdigit(static_cast<unsigned char>(key[0])))
      out += operands.at(std::stoul(key));
    else
      out += attrs.at(key);
    i = close;
  }
  return out;
}

// Right-aligned broadcast check of `operand` against `out`.
bool broadcasts_to(const Shape& operand, const Shape& out) {
  if (operand.size() > out.size()) return false;
  size_t off = out.size() - operand.size();
  for (size_t d = 0; d < operand.size(); ++d)
    if (operand[d] != 1 && operand[d] != out[off + d]) return false;
  return true;
}

// The element offset of a broadcast operand for output element `i`, with runs of matching
// dimensions merged so each run costs one division and one modulo.
std::string offset_expression(const Shape& operand, const Shape& out) {
  const size_t rank = out.size();
  Shape padded(rank - operand.size(), 1);
  padded.insert(padded.end(), operand.begin(), operand.end());
  std::vector<std::int64_t> pstride(rank, 1), ostride(rank, 1);
  for (size_t d = rank; d-- > 1;) {
    pstride[d - 1] = pstride[d] * padded[d];
    ostride[d - 1] = ostride[d] * out[d];
  }
  std::string expr;
  size_t d = 0;
  while (d < rank) {
    bool full = padded[d] == out[d] && out[d] != 1;
    if (!full) {
      ++d;
      continue;
    }
    size_t first = d;
    size_t last = d;
    while (last + 1 < rank && (padded[last + 1] == out[last + 1])) ++last;
    std::int64_t size = 1;
    for (size_t k = first; k <= last; ++k) size *= out[k];
    std::string term = "i";
    if (ostride[last] != 1) term = "(" + term + " / " + std::to_string(ostride[last]) + ")";
    bool outermost = true;
    for (size_t k = 0; k < first; ++k) outermost = outermost && out[k] == 1;
    if (!outermost) term = "(" + term + " % " + std::to_string(size) + ")";
    if (pstride[last] != 1) term += " * " + std::to_string(pstride[last]);
    expr += (expr.empty() ? "" : " + ") + term;
    d = last + 1;
  }
  return expr.empty() ? "0" : expr;
}

std::string known_ops(const json& ops) {
  std::string list;
  for (auto it = ops.begin(); it != ops.end(); ++it)
    if (it.key()[0] != '_') list += (list.empty() ? "" : ", ") + it.key();
  return list;
}

}  // namespace

json ElementwiseParams::to_json() const {
  return {{"block", block}, {"unroll", unroll}, {"vectorized", vectorized},
          {"persistent", persistent}, {"blocks_per_sm", blocks_per_sm}};
}

ElementwiseFamily::ElementwiseFamily(const std::filesystem::path& data_dir)
    : ops_table_(render::load_template(data_dir, "elementwise/ops.json")),
      helpers_(render::load_template(data_dir, "elementwise/ops.cuh")),
      kernel_(render::load_template(data_dir, "elementwise/kernel.cuh.tmpl")),
      launch_(render::load_template(data_dir, "elementwise/launch.tmpl")) {
  ops_ = json::parse(ops_table_.text, nullptr, false);
  if (ops_.is_discarded() || !ops_.is_object())
    throw InternalError("templates/elementwise/ops.json is not a JSON object; check --data-dir");
}

std::vector<std::pair<std::string, std::string>> ElementwiseFamily::key_inputs() const {
  return {{ops_table_.name, ops_table_.text}, {helpers_.name, helpers_.text},
          {kernel_.name, kernel_.text}, {launch_.name, launch_.text}};
}

std::optional<UserError> ElementwiseFamily::cannot_implement(const spec::Spec& s) const {
  const SourceLocation file_only{s.op_file, 0, "output"};
  const Shape& out_shape = s.outputs.front().shape;
  for (const auto& o : s.outputs) {
    if (!spec::is_floating(o.dtype) || o.dtype == spec::DType::float64)
      return UserError(file_only, "output " + o.name + " is " + spec::dtype_name(o.dtype) +
                                      "; the builtin element-wise kernels write float32, float16 or bfloat16",
                       "return a floating-point tensor (e.g. .float())");
    if (o.shape != out_shape)
      return UserError(file_only, "outputs have different shapes (" + spec::shape_string(out_shape) + " and " +
                                      spec::shape_string(o.shape) + ")",
                       "return outputs of one shape, or split the op into two op.py files");
  }
  auto check_leaf = [&](const spec::Tensor& t, const SourceLocation& at) -> std::optional<UserError> {
    if (!(spec::is_floating(t.dtype) && t.dtype != spec::DType::float64) && t.dtype != spec::DType::boolean)
      return UserError(at, "tensor " + t.name + " is " + spec::dtype_name(t.dtype) +
                               "; the builtin element-wise kernels read float32, float16, bfloat16 or bool",
                       "convert it in get_inputs() or the model");
    if (!broadcasts_to(t.shape, out_shape))
      return UserError(at, "tensor " + t.name + " of shape " + spec::shape_string(t.shape) +
                               " does not broadcast to the output shape " + spec::shape_string(out_shape),
                       "the builtin element-wise family needs operands that broadcast to the output");
    return std::nullopt;
  };
  for (const auto& n : s.nodes) {
    if (!ops_.contains(n.op) || n.op[0] == '_')
      return UserError(n.where,
                       "the builtin backend cannot generate a kernel for `" + n.target + "`" +
                           (n.code.empty() ? "" : " (in `" + n.code + "`)"),
                       "supported element-wise ops: " + known_ops(ops_) +
                           "; rewrite the op with these ops");
    const json& op = ops_.at(n.op);
    const size_t arity = op.value("arity", 1);
    if (n.args.size() < arity)
      return UserError(n.where, "`" + n.target + "` has " + std::to_string(n.args.size()) +
                                    " operands, expected " + std::to_string(arity));
    std::set<size_t> scalar_only;
    for (const auto& k : op.value("scalar_operands", json::array())) scalar_only.insert(k.get<size_t>());
    for (size_t k = 0; k < arity; ++k) {
      const auto& a = n.args[k];
      if (a.kind == spec::Arg::Kind::node) {
        if (scalar_only.count(k))
          return UserError(n.where, "`" + n.target + "` with a tensor as operand " + std::to_string(k + 1) +
                                        " is not supported by the builtin backend",
                           "use a Python number there");
        if (const auto* t = s.find_tensor(a.node))
          if (auto e = check_leaf(*t, n.where)) return e;
        if (!s.find_tensor(a.node) && !s.find_node(a.node))
          return UserError(n.where, "operand `" + a.node + "` is not an input, parameter or earlier op");
      } else if (a.kind != spec::Arg::Kind::scalar && a.kind != spec::Arg::Kind::boolean) {
        return UserError(n.where, "`" + n.target + "` operand " + std::to_string(k + 1) +
                                      " is neither a tensor nor a number");
      }
    }
    if (!broadcasts_to(n.shape, out_shape))
      return UserError(n.where, "`" + n.target + "` produces shape " + spec::shape_string(n.shape) +
                                    " that does not broadcast to the output " + spec::shape_string(out_shape));
  }
  for (const auto& o : s.outputs)
    if (const auto* t = s.find_tensor(o.node))
      if (auto e = check_leaf(*t, file_only)) return e;
  return std::nullopt;
}

Candidate ElementwiseFamily::render(const spec::Spec& s, const contract::Contract& c,
                                    const ElementwiseParams& p) const {
  const Shape& out_shape = s.outputs.front().shape;
  const std::int64_t n = spec::numel(out_shape);
  const std::string fn = "egg_" + c.name;

  // Operands: inputs and params the graph reads, in launch() order.
  std::set<std::string> used;
  for (const auto& node : s.nodes)
    for (const auto& a : node.args)
      if (a.kind == spec::Arg::Kind::node && s.find_tensor(a.node)) used.insert(a.node);
  for (const auto& o : s.outputs)
    if (s.find_tensor(o.node)) used.insert(o.node);

  std::map<std::string, std::string> value_of;  // spec value name → float variable
  json operands = json::array(), full_operands = json::array(), outs = json::array();
  json full_ptrs = json::array(), args = json::array();
  int min_size = 16;
  for (const auto& a : c.args) {
    if (a.role == contract::Role::output) continue;
    if (!used.count(a.source)) continue;
    const bool full = spec::numel(a.shape) == n;
    const std::string value = "a" + std::to_string(operands.size());
    value_of[a.source] = value;
    const std::string ctype = contract::c_type(a.dtype);
    std::string load = full ? "egg_to_float(" + a.var + "_v.v[j])"
                            : "egg_to_float(" + a.var + "[" + offset_expression(a.shape, out_shape) + "])";
    operands.push_back({{"ptr", a.var}, {"ctype", ctype}, {"value", value}, {"load", load}});
    if (full) {
      full_operands.push_back({{"ptr", a.var}, {"ctype", ctype}});
      full_ptrs.push_back(a.var);
      min_size = std::min(min_size, spec::dtype_size(a.dtype));
    }
    args.push_back(a.var);
  }
  int slot = 0;
  for (const auto& a : c.args) {
    if (a.role != contract::Role::output) continue;
    outs.push_back({{"ptr", a.var}, {"ctype", contract::c_type(a.dtype)}, {"slot", slot++}});
    full_ptrs.push_back(a.var);
    args.push_back(a.var);
    min_size = std::min(min_size, spec::dtype_size(a.dtype));
  }

  json steps = json::array();
  for (const auto& node : s.nodes) {
    const json& op = ops_.at(node.op);
    std::vector<std::string> vals;
    for (size_t k = 0; k < op.value("arity", 1u); ++k) {
      const auto& a = node.args[k];
      if (a.kind == spec::Arg::Kind::node) vals.push_back(value_of.at(a.node));
      else if (a.kind == spec::Arg::Kind::boolean) vals.push_back(a.flag ? "1.0f" : "0.0f");
      else vals.push_back(float_literal(a.scalar));
    }
    std::string expr = op.value("expr", "");
    std::map<std::string, std::string> attrs;
    json defaults = op.value("defaults", json::object());
    json nulls = op.value("null", json::object());
    for (auto it = defaults.begin(); it != defaults.end(); ++it) attrs[it.key()] = float_literal(it->get<double>());
    for (auto it = nulls.begin(); it != nulls.end(); ++it) attrs[it.key()] = it->get<std::string>();
    for (auto it = node.attrs.begin(); it != node.attrs.end(); ++it) {
      if (it->is_number()) attrs[it.key()] = float_literal(it->get<double>());
      else if (it->is_boolean()) attrs[it.key()] = it->get<bool>() ? "1.0f" : "0.0f";
      else if (it->is_null() && nulls.contains(it.key())) attrs[it.key()] = nulls[it.key()].get<std::string>();
    }
    if (op.contains("variants")) {
      for (auto v = op["variants"].begin(); v != op["variants"].end(); ++v) {
        std::string chosen = node.attrs.value(v.key(), std::string("none"));
        if (!v->contains(chosen))
          throw UserError(node.where, "`" + node.target + "` with " + v.key() + "='" + chosen +
                                          "' is not supported by the builtin backend");
        expr = (*v)[chosen].get<std::string>();
      }
    }
    std::string value = "t" + std::to_string(steps.size());
    try {
      steps.push_back({{"value", value}, {"expr", substitute(expr, vals, attrs)}});
    } catch (const std::out_of_range&) {
      throw UserError(node.where, "`" + node.target + "` is missing an attribute the builtin backend needs");
    }
    value_of[node.name] = value;
  }
  json results = json::array();
  slot = 0;
  for (const auto& o : s.outputs) results.push_back({{"slot", slot++}, {"value", value_of.at(o.node)}});

  const int vec = p.vectorized ? 16 / min_size : 1;
  json ctx = {{"fn", fn},
              {"helpers", helpers_.text},
              {"num_ops", s.nodes.size()},
              {"numel", n},
              {"structure", "one fused kernel, " + std::string(p.vectorized ? "16-byte vectors" : "scalar accesses")},
              {"block", p.block},
              {"unroll", p.unroll},
              {"vec", vec},
              {"persistent", p.persistent ? "true" : "false"},
              {"blocks_per_sm", p.blocks_per_sm},
              {"max_tile", static_cast<std::int64_t>(p.block) * vec * p.unroll},
              {"operands", operands},
              {"full_operands", full_operands},
              {"outs", outs},
              {"num_outs", outs.size()},
              {"steps", steps},
              {"results", results},
              {"full_ptrs", full_ptrs},
              {"args", args}};
  Candidate cand;
  cand.id = "elementwise.fused:b" + std::to_string(p.block) + ":u" + std::to_string(p.unroll) + ":v" +
            std::to_string(vec) + (p.persistent ? ":persistent" + std::to_string(p.blocks_per_sm) : "");
  cand.summary = "fused element-wise chain of " + std::to_string(s.nodes.size()) + " ops, block " +
                 std::to_string(p.block) + ", " + std::to_string(vec) + "-wide vectors, unroll " +
                 std::to_string(p.unroll) + (p.persistent ? ", persistent grid" : ", full grid");
  cand.params = p.to_json();
  cand.params["vec"] = vec;
  cand.code.device_code = render::render(kernel_.text, ctx, kernel_.name);
  cand.code.launch_body = render::render(launch_.text, ctx, launch_.name);
  return cand;
}

}  // namespace egg::backend::builtin
