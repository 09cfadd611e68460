#include "backend/builtin/algebra.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backend/builtin/plan_util.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;
using spec::Shape;

// True when `t` is a per-feature vector of a product with `n` features: [N] or [1, ..., 1, N].
bool feature_vector(const Shape& t, std::int64_t n) {
  if (t.empty() || t.back() != n) return false;
  for (size_t k = 0; k + 1 < t.size(); ++k)
    if (t[k] != 1) return false;
  return true;
}

// One link of the affine chain: the node and its other operand (a scalar, or a feature vector).
struct Link {
  const spec::Node* node = nullptr;
  spec::Arg other;
  bool additive = false;  // add/sub: the linear part skips it
};

// The match: reduction R over the last dim of chain(G), G = x W^T (+ b) or x B.
struct Match {
  const spec::Node* reduction = nullptr;
  const spec::Node* product = nullptr;    // linear or matmul
  const spec::Node* transpose = nullptr;  // matmul's W^T view, dropped when nothing else reads it
  std::string x, weight, bias;            // bias empty: none
  bool weight_rows = true;                // W [N, K] (linear, matmul of W^T); false: B [K, N]
  std::vector<Link> chain;                // from the product outward
  std::int64_t features = 0;
};

// The affine link `n` applies to `from`, or nullopt.
std::optional<Link> link_of(const spec::Spec& s, const spec::Node& n, const std::string& from,
                            std::int64_t features) {
  if ((n.op != "mul" && n.op != "div" && n.op != "add" && n.op != "sub") || n.args.size() != 2 ||
      n.args[0].kind != spec::Arg::Kind::node || n.args[0].node != from)
    return std::nullopt;  // the chain's value first: c - y and c / y are not linear in y
  const spec::Arg& other = n.args[1];
  const bool additive = n.op == "add" || n.op == "sub";
  if (n.op == "div" && n.attrs.contains("rounding_mode") && !n.attrs["rounding_mode"].is_null())
    return std::nullopt;
  if (additive && n.attrs.contains("alpha") && !n.attrs["alpha"].is_number()) return std::nullopt;
  if (other.kind == spec::Arg::Kind::scalar) return Link{&n, other, additive};
  // Adding a per-feature vector (a tensor the graph reads) keeps each feature affine; scaling by
  // one would weight the rows of W (not taken).
  if (!additive || other.kind != spec::Arg::Kind::node) return std::nullopt;
  const spec::Tensor* t = s.find_tensor(other.node);
  if (!t || t->dtype != spec::DType::float32 || !feature_vector(t->shape, features))
    return std::nullopt;
  return Link{&n, other, additive};
}

// The reduction's match, or nullopt.
std::optional<Match> match(const spec::Spec& s, const spec::Node& r,
                           const std::map<std::string, int>& readers) {
  if ((r.op != "sum" && r.op != "mean") || r.dtype != spec::DType::float32 || r.args.empty() ||
      r.args[0].kind != spec::Arg::Kind::node)
    return std::nullopt;
  if (r.attrs.contains("dtype") && !r.attrs["dtype"].is_null()) return std::nullopt;
  const spec::Node* cur = s.find_node(r.args[0].node);
  if (!cur || cur->shape.empty()) return std::nullopt;
  const auto rank = cur->shape.size();
  const json dim = r.attrs.value("dim", json());
  const json dims = dim.is_array() ? dim : json::array({dim});
  if (dims.size() != 1 || !dims[0].is_number_integer() ||
      dim_of(dims[0].get<std::int64_t>(), rank) != static_cast<std::int64_t>(rank) - 1)
    return std::nullopt;
  Match m;
  m.reduction = &r;
  m.features = cur->shape.back();
  // Walk back through the chain to the product; every value on the way has one reader.
  std::vector<Link> chain;
  while (cur->op != "linear" && cur->op != "matmul") {
    if (readers.at(cur->name) != 1 || cur->args.empty() ||
        cur->args[0].kind != spec::Arg::Kind::node)
      return std::nullopt;
    const spec::Node* prev = s.find_node(cur->args[0].node);
    if (!prev || prev->shape != cur->shape) return std::nullopt;
    const auto l = link_of(s, *cur, prev->name, m.features);
    if (!l) return std::nullopt;
    chain.insert(chain.begin(), *l);
    cur = prev;
  }
  if (readers.at(cur->name) != 1 || cur->dtype != spec::DType::float32 || cur->args.size() < 2 ||
      cur->args[0].kind != spec::Arg::Kind::node || cur->args[1].kind != spec::Arg::Kind::node)
    return std::nullopt;
  m.product = cur;
  m.chain = chain;
  m.x = cur->args[0].node;
  const Shape* xs = s.shape_of(m.x);
  if (!xs || xs->empty()) return std::nullopt;
  const std::int64_t k = xs->back();
  const std::string& second = cur->args[1].node;
  if (cur->op == "linear") {
    const spec::Tensor* w = s.find_tensor(second);
    if (!w || w->shape != Shape{m.features, k}) return std::nullopt;
    m.weight = w->name;
    if (cur->args.size() > 2 && cur->args[2].kind == spec::Arg::Kind::node) {
      const spec::Tensor* b = s.find_tensor(cur->args[2].node);
      if (!b || b->shape != Shape{m.features}) return std::nullopt;
      m.bias = b->name;
    }
  } else if (const spec::Tensor* b = s.find_tensor(second)) {
    if (b->shape != Shape{k, m.features}) return std::nullopt;
    m.weight = b->name;
    m.weight_rows = false;
  } else {
    const spec::Node* t = s.find_node(second);
    if (!t ||
        (!(t->op == "permute" && t->attrs.value("dims", json()) == json({1, 0})) &&
         !(t->op == "transpose" && t->shape.size() == 2 && swaps_dims(*t, 0, 1))) ||
        t->args.empty() || t->args[0].kind != spec::Arg::Kind::node)
      return std::nullopt;
    const spec::Tensor* w = s.find_tensor(t->args[0].node);
    if (!w || w->shape != Shape{m.features, k}) return std::nullopt;
    m.weight = w->name;
    m.transpose = t;
  }
  if (xs->size() < 1 || spec::numel(*xs) / k * k != spec::numel(*xs)) return std::nullopt;
  // Additive terms without a bias would need a zero vector to apply the chain to: not taken.
  if (m.bias.empty())
    for (const auto& l : m.chain)
      if (l.additive) return std::nullopt;
  return m;
}

// The rewritten nodes of a match, the last one named and shaped as the reduction.
std::vector<spec::Node> rewrite(const spec::Spec& s, const Match& m) {
  const spec::Node& r = *m.reduction;
  const std::string base = r.name + "__";
  const auto f32 = spec::DType::float32;
  const Shape& xs = *s.shape_of(m.x);
  const std::int64_t k = xs.back();
  const bool keepdim = r.attrs.value("keepdim", false);
  std::vector<spec::Node> out;
  // The summed weight: the column sums of W [N, K] (a [1, K] row) or the row sums of B [K, N].
  const Shape wshape = m.weight_rows ? Shape{1, k} : Shape{k};
  out.push_back(part(r, base + "wsum", "sum", {node_arg(m.weight)},
                     {{"dim", json::array({m.weight_rows ? 0 : 1})},
                      {"keepdim", m.weight_rows},
                      {"dtype", nullptr}},
                     wshape, f32));
  out.push_back(part(r, base + "xw", "mul", {node_arg(m.x), node_arg(base + "wsum")},
                     json::object(), xs, f32));
  out.push_back(part(r, base + "dot", "sum", {node_arg(base + "xw")},
                     {{"dim", json::array({-1})}, {"keepdim", keepdim}, {"dtype", nullptr}},
                     r.shape, f32));
  // The chain's scaling on the dot product (its additive terms go with the bias below).
  std::string value = base + "dot";
  int step = 0;
  for (const auto& l : m.chain) {
    if (l.additive) continue;
    const std::string name = base + "lin" + std::to_string(step++);
    out.push_back(
        part(*l.node, name, l.node->op, {node_arg(value), l.other}, l.node->attrs, r.shape, f32));
    value = name;
  }
  if (!m.bias.empty()) {
    // The whole chain applied to the bias vector, then summed: its share of every row's sum.
    std::string b = m.bias;
    Shape bshape = {m.features};
    step = 0;
    for (const auto& l : m.chain) {
      if (l.other.kind == spec::Arg::Kind::node) {
        const Shape& os = *s.shape_of(l.other.node);
        if (os.size() > bshape.size()) bshape = os;
      }
      const std::string name = base + "bias" + std::to_string(step++);
      out.push_back(
          part(*l.node, name, l.node->op, {node_arg(b), l.other}, l.node->attrs, bshape, f32));
      b = name;
    }
    out.push_back(part(r, base + "bsum", "sum", {node_arg(b)},
                       {{"dim", nullptr}, {"keepdim", false}, {"dtype", nullptr}}, Shape{}, f32));
    const std::string name = r.op == "mean" ? base + "total" : r.name;
    out.push_back(part(r, name, "add", {node_arg(value), node_arg(base + "bsum")}, {{"alpha", 1}},
                       r.shape, f32));
    value = name;
  }
  if (r.op == "mean") {
    out.push_back(part(r, r.name, "div", {node_arg(value), scalar_arg(double(m.features))},
                       {{"rounding_mode", nullptr}}, r.shape, f32));
  } else if (value != r.name) {
    out.back().name = r.name;  // the last node is the sum itself
  }
  return out;
}

}  // namespace

std::optional<spec::Spec> sum_linear_features(const spec::Spec& s) {
  const auto readers = uses_of(s);
  std::vector<Match> matches;
  std::set<const spec::Node*> replaced;
  for (const auto& n : s.nodes)
    if (auto m = match(s, n, readers)) {
      replaced.insert(m->product);
      for (const auto& l : m->chain) replaced.insert(l.node);
      if (m->transpose && readers.at(m->transpose->name) == 1) replaced.insert(m->transpose);
      matches.push_back(*m);
    }
  if (matches.empty()) return std::nullopt;
  spec::Spec out = s;
  out.nodes.clear();
  for (const auto& n : s.nodes) {
    if (replaced.count(&n)) continue;
    const auto m = std::find_if(matches.begin(), matches.end(),
                                [&](const Match& x) { return x.reduction == &n; });
    if (m == matches.end()) {
      out.nodes.push_back(n);
      continue;
    }
    for (auto& r : rewrite(s, *m)) out.nodes.push_back(std::move(r));
  }
  return out;
}

}  // namespace egg::backend::builtin
