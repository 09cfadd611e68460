#include "backend/builtin/op_table.h"

#include <cmath>
#include <cstdio>
#include <set>

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

// The value of `node`'s attribute `key` that picks a variant of its expression: a string or a
// boolean as written, "none" when it is missing or None.
std::string variant_key(const spec::Node& node, const std::string& key) {
  const auto it = node.attrs.find(key);
  if (it == node.attrs.end() || it->is_null()) return "none";
  if (it->is_boolean()) return it->get<bool>() ? "true" : "false";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// Substitutes {0}.. and {attr} in an op's expression.
std::string substitute(const std::string& expr, const std::vector<std::string>& operands,
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

}  // namespace

std::string fill_fields(const std::string& expr, const std::map<std::string, std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < expr.size(); ++i) {
    const size_t close = expr[i] == '{' ? expr.find('}', i) : std::string::npos;
    if (close == std::string::npos) {
      out += expr[i];
      continue;
    }
    const std::string key = expr.substr(i + 1, close - i - 1);
    const auto it = fields.find(key);
    if (it == fields.end())
      throw InternalError("the table expression `" + expr + "` has a field {" + key +
                          "} its family does not fill");
    out += it->second;
    i = close;
  }
  return out;
}

std::string table_text(const json& entry, const char* key, const std::string& fallback,
                       const char* file) {
  const auto it = entry.find(key);
  if (it == entry.end()) return fallback;
  if (!it->is_string())
    throw InternalError(std::string(file) + ": field '" + key + "' is not a string");
  return it->get<std::string>();
}

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

bool broadcasts_to(const spec::Shape& operand, const spec::Shape& out) {
  if (operand.size() > out.size()) return false;
  size_t off = out.size() - operand.size();
  for (size_t d = 0; d < operand.size(); ++d)
    if (operand[d] != 1 && operand[d] != out[off + d]) return false;
  return true;
}

std::string broadcast_offset(const spec::Shape& operand, const spec::Shape& out,
                             const std::string& index) {
  const size_t rank = out.size();
  spec::Shape padded(rank - operand.size(), 1);
  padded.insert(padded.end(), operand.begin(), operand.end());
  std::vector<std::int64_t> pstride(rank, 1), ostride(rank, 1);
  for (size_t d = rank; d-- > 1;) {
    pstride[d - 1] = pstride[d] * padded[d];
    ostride[d - 1] = ostride[d] * out[d];
  }
  std::string expr;
  size_t d = 0;
  while (d < rank) {
    if (!(padded[d] == out[d] && out[d] != 1)) {
      ++d;
      continue;
    }
    size_t first = d, last = d;
    while (last + 1 < rank && padded[last + 1] == out[last + 1]) ++last;
    std::int64_t size = 1;
    for (size_t k = first; k <= last; ++k) size *= out[k];
    std::string term = index;
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

void add_tensor_leaves(const spec::Spec& s, const std::vector<const spec::Node*>& nodes,
                       std::set<std::string>& leaves) {
  for (const auto* n : nodes)
    for (const auto& a : n->args)
      if (a.kind == spec::Arg::Kind::node && s.find_tensor(a.node)) leaves.insert(a.node);
}

OpTable::OpTable(const std::filesystem::path& data_dir)
    : table_(render::load_template(data_dir, "elementwise/ops.json")),
      helpers_(render::load_template(data_dir, "elementwise/ops.cuh")) {
  ops_ = json::parse(table_.text, nullptr, false);
  if (ops_.is_discarded() || !ops_.is_object())
    throw InternalError("templates/elementwise/ops.json is not a JSON object; check --data-dir");
}

bool OpTable::knows(const std::string& op) const {
  return !op.empty() && op[0] != '_' && ops_.contains(op);
}

std::string OpTable::known_ops() const {
  std::string list;
  for (auto it = ops_.begin(); it != ops_.end(); ++it)
    if (it.key()[0] != '_') list += (list.empty() ? "" : ", ") + it.key();
  return list;
}

std::vector<std::pair<std::string, std::string>> OpTable::key_inputs() const {
  return {{table_.name, table_.text}, {helpers_.name, helpers_.text}};
}

std::optional<UserError> OpTable::check(const spec::Spec& s, const spec::Node& n) const {
  if (!knows(n.op))
    return UserError(
        n.where,
        "the builtin backend cannot generate a kernel for `" + n.target + "`" +
            (n.code.empty() ? "" : " (in `" + n.code + "`)"),
        "supported element-wise ops: " + known_ops() + "; rewrite the op with these ops");
  const json& op = ops_.at(n.op);
  const size_t arity = op.value("arity", 1);
  if (n.args.size() < arity)
    return UserError(n.where, "`" + n.target + "` has " + std::to_string(n.args.size()) +
                                  " operands, expected " + std::to_string(arity));
  std::set<size_t> scalar_only;
  for (const auto& k : op.value("scalar_operands", json::array()))
    scalar_only.insert(k.get<size_t>());
  for (size_t k = 0; k < arity; ++k) {
    const auto& a = n.args[k];
    if (a.kind == spec::Arg::Kind::node) {
      if (scalar_only.count(k))
        return UserError(n.where,
                         "`" + n.target + "` with a tensor as operand " + std::to_string(k + 1) +
                             " is not supported by the builtin backend",
                         "use a Python number there");
      if (!s.find_tensor(a.node) && !s.find_node(a.node))
        return UserError(n.where,
                         "operand `" + a.node + "` is not an input, parameter or earlier op");
    } else if (a.kind != spec::Arg::Kind::scalar && a.kind != spec::Arg::Kind::boolean) {
      return UserError(n.where, "`" + n.target + "` operand " + std::to_string(k + 1) +
                                    " is neither a tensor nor a number");
    }
  }
  if (op.contains("variants"))
    for (auto v = op["variants"].begin(); v != op["variants"].end(); ++v) {
      const std::string chosen = variant_key(n, v.key());
      if (!v->contains(chosen))
        return UserError(n.where, "`" + n.target + "` with " + v.key() + "='" + chosen +
                                      "' is not supported by the builtin backend");
    }
  return std::nullopt;
}

std::optional<OpTable::Scaling> OpTable::scaling(const spec::Node& node) const {
  if (!knows(node.op) || node.args.size() != 2) return std::nullopt;
  if (variant_key(node, "rounding_mode") != "none") return std::nullopt;  // x // 2 is no scaling
  const std::string how = ops_.at(node.op).value("scale", "");
  if (how.empty()) return std::nullopt;
  const auto& a = node.args[0];
  const auto& b = node.args[1];
  using K = spec::Arg::Kind;
  if (a.kind == K::node && b.kind == K::scalar && b.scalar != 0 && std::isfinite(b.scalar))
    return Scaling{a.node, how == "over" ? 1.0 / b.scalar : b.scalar};
  if (how == "times" && b.kind == K::node && a.kind == K::scalar && a.scalar != 0 &&
      std::isfinite(a.scalar))
    return Scaling{b.node, a.scalar};
  return std::nullopt;
}

std::optional<OpTable::Scaling> OpTable::folded_scaling(
    const spec::Spec& s, const spec::Node& node,
    const std::map<std::string, std::string>& value_of) const {
  auto outer = scaling(node);
  if (!outer) return std::nullopt;
  Scaling folded = *outer;
  int folds = 0;
  for (const spec::Node* inner = s.find_node(folded.base); inner;
       inner = s.find_node(folded.base)) {
    auto next = scaling(*inner);
    if (!next || !value_of.count(next->base)) break;
    folded = Scaling{next->base, folded.factor * next->factor};
    ++folds;
  }
  if (folds == 0 || !std::isfinite(static_cast<float>(folded.factor))) return std::nullopt;
  return folded;
}

namespace {

// An integer literal of long long arithmetic for a number the spec holds as a double.
std::string integer_literal(double v) {
  return std::to_string(static_cast<long long>(std::llround(v))) + "LL";
}

// The operands of `node` as C expressions: its values from `value_of`, its numbers and booleans
// (as 1 or 0) as literals of `number`.
std::vector<std::string> operand_texts(const json& op, const spec::Node& node,
                                       const std::map<std::string, std::string>& value_of,
                                       std::string (*number)(double)) {
  std::vector<std::string> vals;
  for (size_t k = 0; k < op.value("arity", 1u); ++k) {
    const auto& a = node.args[k];
    if (a.kind == spec::Arg::Kind::node)
      vals.push_back(value_of.at(a.node));
    else if (a.kind == spec::Arg::Kind::boolean)
      vals.push_back(number(a.flag ? 1.0 : 0.0));
    else
      vals.push_back(number(a.scalar));
  }
  return vals;
}

// The `int` form of a table entry for `node`: the string, or the node's variant of it; "" when
// there is none.
std::string integer_form(const json& op, const spec::Node& node) {
  if (!op.contains("int")) return "";
  const json& form = op["int"];
  if (form.is_string()) return form.get<std::string>();
  for (auto v = form.begin(); v != form.end(); ++v) {
    const std::string chosen = variant_key(node, v.key());
    if (!v->contains(chosen)) return "";
    return (*v)[chosen].get<std::string>();
  }
  return "";
}

}  // namespace

bool OpTable::has_integer_form(const spec::Node& node) const {
  return knows(node.op) && !integer_form(ops_.at(node.op), node).empty();
}

std::string OpTable::integer_expression(const spec::Node& node,
                                        const std::map<std::string, std::string>& value_of) const {
  const json& op = ops_.at(node.op);
  const std::string expr = integer_form(op, node);
  if (expr.empty())
    throw InternalError("op table: `" + node.op + "` has no integer form for this node");
  const std::vector<std::string> vals = operand_texts(op, node, value_of, integer_literal);
  std::map<std::string, std::string> attrs;
  json defaults = op.value("defaults", json::object());
  for (auto it = defaults.begin(); it != defaults.end(); ++it)
    attrs[it.key()] = integer_literal(it->get<double>());
  const json nulls = op.value("int_null", json::object());
  for (auto it = nulls.begin(); it != nulls.end(); ++it) attrs[it.key()] = it->get<std::string>();
  for (auto it = node.attrs.begin(); it != node.attrs.end(); ++it)
    if (it->is_number()) attrs[it.key()] = integer_literal(it->get<double>());
  try {
    return substitute(expr, vals, attrs);
  } catch (const std::out_of_range&) {
    throw UserError(node.where,
                    "`" + node.target + "` is missing an attribute the builtin backend needs");
  }
}

std::string OpTable::expression(const spec::Spec& s, const spec::Node& node,
                                const std::map<std::string, std::string>& value_of) const {
  const json& op = ops_.at(node.op);
  if (auto f = folded_scaling(s, node, value_of)) {
    // Rounded once instead of once per step: within an ulp or two of PyTorch's step-by-step result.
    const std::string& base = value_of.at(f->base);
    if (f->factor == 1.0) return base;
    return substitute(ops_.at("mul").value("expr", ""), {base, float_literal(f->factor)}, {});
  }
  const std::vector<std::string> vals = operand_texts(op, node, value_of, float_literal);
  std::string expr = op.value("expr", "");
  if (op.contains("variants"))
    for (auto v = op["variants"].begin(); v != op["variants"].end(); ++v)
      expr = (*v)[variant_key(node, v.key())].get<std::string>();
  // A scalar operand with a case of its own (pow(x, 3.0) → x * x * x, x * 1 → x), for the plain
  // form only (x // 1 is floor(x), not x).
  bool plain = true;
  if (op.contains("variants"))
    for (auto v = op["variants"].begin(); v != op["variants"].end(); ++v)
      plain = plain && variant_key(node, v.key()) == "none";
  if (plain && op.contains("scalar_cases"))
    for (auto c = op["scalar_cases"].begin(); c != op["scalar_cases"].end(); ++c) {
      const size_t k = std::stoul(c.key());
      if (k >= node.args.size() || node.args[k].kind != spec::Arg::Kind::scalar) continue;
      for (auto v = c->begin(); v != c->end(); ++v)
        if (std::stod(v.key()) == node.args[k].scalar) expr = v->get<std::string>();
    }
  std::map<std::string, std::string> attrs;
  json defaults = op.value("defaults", json::object());
  json nulls = op.value("null", json::object());
  for (auto it = defaults.begin(); it != defaults.end(); ++it)
    attrs[it.key()] = float_literal(it->get<double>());
  for (auto it = nulls.begin(); it != nulls.end(); ++it) attrs[it.key()] = it->get<std::string>();
  for (auto it = node.attrs.begin(); it != node.attrs.end(); ++it) {
    if (it->is_number())
      attrs[it.key()] = float_literal(it->get<double>());
    else if (it->is_boolean())
      attrs[it.key()] = it->get<bool>() ? "1.0f" : "0.0f";
    else if (it->is_null() && nulls.contains(it.key()))
      attrs[it.key()] = nulls[it.key()].get<std::string>();
  }
  try {
    return substitute(expr, vals, attrs);
  } catch (const std::out_of_range&) {
    throw UserError(node.where,
                    "`" + node.target + "` is missing an attribute the builtin backend needs");
  }
}

}  // namespace egg::backend::builtin
