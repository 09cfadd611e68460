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

// chain(G), G = x W^T (+ b) or x B: the value a feature reduction reads.
struct Product {
  const spec::Node* product = nullptr;    // linear or matmul
  const spec::Node* transpose = nullptr;  // matmul's W^T view, dropped when nothing else reads it
  std::string x, weight, bias;            // bias empty: none
  bool weight_rows = true;                // W [N, K] (linear, matmul of W^T); false: B [K, N]
  std::vector<Link> chain;                // from the product outward
  std::int64_t features = 0;
};

// The match: a reduction over groups of `group` consecutive features of a Product: a sum or mean
// over the last dim (group = features), or an average pool over it (kernel = stride = group).
struct Match {
  const spec::Node* reduction = nullptr;
  const spec::Node* view = nullptr;  // the pool's unsqueeze of the chain's value, if any
  Product p;
  std::int64_t group = 0;
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

// The Product whose chain ends in `cur`, a value of `features` features, or nullopt. Every value on
// the way has one reader.
std::optional<Product> product_under(const spec::Spec& s, const spec::Node* cur,
                                     const std::map<std::string, int>& readers) {
  if (!cur || cur->shape.empty()) return std::nullopt;
  Product m;
  m.features = cur->shape.back();
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
  // Additive terms without a bias would need a zero vector to apply the chain to: not taken.
  if (m.bias.empty())
    for (const auto& l : m.chain)
      if (l.additive) return std::nullopt;
  return m;
}

// A sum or mean over the last dim of a Product, or nullopt.
std::optional<Match> match_sum(const spec::Spec& s, const spec::Node& r,
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
  auto p = product_under(s, cur, readers);
  if (!p) return std::nullopt;
  return Match{&r, nullptr, *p, p->features};
}

// The single integer of a pool attribute ([k] or k), or nullopt.
std::optional<std::int64_t> one_int(const json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_array() && v.size() == 1 && v[0].is_number_integer()) return v[0].get<std::int64_t>();
  return std::nullopt;
}

// avg_pool1d over the last dim of a Product (directly, or of an unsqueeze of it that keeps the
// features last) with kernel = stride, no padding and whole groups: nullopt otherwise.
std::optional<Match> match_pool(const spec::Spec& s, const spec::Node& r,
                                const std::map<std::string, int>& readers) {
  if (r.op != "avg_pool1d" || r.dtype != spec::DType::float32 || r.args.empty() ||
      r.args[0].kind != spec::Arg::Kind::node)
    return std::nullopt;
  const auto kernel = one_int(r.attrs.value("kernel_size", json()));
  const json stride_attr = r.attrs.value("stride", json());
  const bool default_stride =
      stride_attr.is_null() || (stride_attr.is_array() && stride_attr.empty());
  const auto stride = default_stride ? kernel : one_int(stride_attr);
  const auto padding = one_int(r.attrs.value("padding", json(0)));
  if (!kernel || *kernel < 1 || stride != kernel || padding != std::optional<std::int64_t>(0))
    return std::nullopt;
  const spec::Node* in = s.find_node(r.args[0].node);
  if (!in || in->shape.empty()) return std::nullopt;
  const spec::Node* view = nullptr;
  if (in->op == "unsqueeze" && readers.at(in->name) == 1 && !in->args.empty() &&
      in->args[0].kind == spec::Arg::Kind::node) {
    const spec::Node* below = s.find_node(in->args[0].node);
    if (!below || below->shape.empty() || below->shape.back() != in->shape.back())
      return std::nullopt;
    view = in;
    in = below;
  }
  const std::int64_t n = in->shape.back();
  if (n % *kernel != 0 || r.shape.empty() || r.shape.back() != n / *kernel) return std::nullopt;
  auto p = product_under(s, in, readers);
  if (!p) return std::nullopt;
  return Match{&r, view, *p, *kernel};
}

// `value` (of `shape`) through the chain's links, one node each named `<prefix><i>`: every link, or
// with `scalings_only` its multiplies and divides alone (whose operands are scalars). A link's
// feature vector of a wider shape, [1, ..., N], widens the result. Returns the last node's name.
std::string through_chain(const spec::Spec& s, const Product& m, std::string value,
                          const std::string& prefix, Shape shape, bool scalings_only,
                          std::vector<spec::Node>& out) {
  int step = 0;
  for (const auto& l : m.chain) {
    if (scalings_only && l.additive) continue;
    if (l.other.kind == spec::Arg::Kind::node) {
      const Shape& os = *s.shape_of(l.other.node);
      if (os.size() > shape.size()) shape = os;
    }
    const std::string name = prefix + std::to_string(step++);
    out.push_back(part(*l.node, name, l.node->op, {node_arg(value), l.other}, l.node->attrs, shape,
                       spec::DType::float32));
    value = name;
  }
  return value;
}

// A whole-row sum's nodes: x . colsum(W), the chain's scaling, plus the chained bias summed once;
// the last one named and shaped as the reduction.
std::vector<spec::Node> rewrite_sum(const spec::Spec& s, const Match& mt) {
  const spec::Node& r = *mt.reduction;
  const Product& m = mt.p;
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
  std::string value = through_chain(s, m, base + "dot", base + "lin", r.shape, true, out);
  if (!m.bias.empty()) {
    // The whole chain applied to the bias vector, then summed: its share of every row's sum.
    const std::string b = through_chain(s, m, m.bias, base + "bias", Shape{m.features}, false, out);
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

// A pool's nodes: the product with the pooled weight (W's rows averaged in groups, the chain's
// scaling applied to it) and the pooled chained bias; the last one named and shaped as the pool.
std::vector<spec::Node> rewrite_pool(const spec::Spec& s, const Match& mt) {
  const spec::Node& r = *mt.reduction;
  const Product& m = mt.p;
  const std::string base = r.name + "__";
  const auto f32 = spec::DType::float32;
  const Shape& xs = *s.shape_of(m.x);
  const std::int64_t k = xs.back(), n = m.features, g = mt.group, groups = n / g;
  std::vector<spec::Node> out;
  // W [N, K] as [N/g, g, K] averaged over the group (or B [K, N] as [K, N/g, g]).
  const Shape grouped = m.weight_rows ? Shape{groups, g, k} : Shape{k, groups, g};
  const Shape pooled = m.weight_rows ? Shape{groups, k} : Shape{k, groups};
  out.push_back(part(r, base + "wgroups", "reshape", {node_arg(m.weight)}, {{"shape", grouped}},
                     grouped, f32));
  out.push_back(
      part(r, base + "wpool", "mean", {node_arg(base + "wgroups")},
           {{"dim", json::array({m.weight_rows ? 1 : 2})}, {"keepdim", false}, {"dtype", nullptr}},
           pooled, f32));
  // The chain's scaling moves onto the pooled weight: s (x W^T) = x (s W)^T.
  const std::string w = through_chain(s, m, base + "wpool", base + "wscale", pooled, true, out);
  std::string bias;
  if (!m.bias.empty()) {
    const std::string b = through_chain(s, m, m.bias, base + "bias", Shape{m.features}, false, out);
    out.push_back(part(r, base + "bgroups", "reshape", {node_arg(b)}, {{"shape", {groups, g}}},
                       Shape{groups, g}, f32));
    out.push_back(part(r, base + "bpool", "mean", {node_arg(base + "bgroups")},
                       {{"dim", json::array({1})}, {"keepdim", false}, {"dtype", nullptr}},
                       Shape{groups}, f32));
    bias = base + "bpool";
  }
  Shape product_shape = xs;
  product_shape.back() = groups;
  const spec::Node& p = *m.product;
  if (m.weight_rows) {
    std::vector<spec::Arg> args = {node_arg(m.x), node_arg(w)};
    if (!bias.empty()) args.push_back(node_arg(bias));
    out.push_back(
        part(p, base + "product", "linear", std::move(args), json::object(), product_shape, f32));
  } else {
    out.push_back(part(p, base + "product", "matmul", {node_arg(m.x), node_arg(w)}, json::object(),
                       product_shape, f32));
    if (!bias.empty())
      out.push_back(part(p, base + "biased", "add", {node_arg(base + "product"), node_arg(bias)},
                         {{"alpha", 1}}, product_shape, f32));
  }
  if (product_shape == r.shape) {
    out.back().name = r.name;
  } else {  // the pool's unsqueezed shape
    out.push_back(part(r, r.name, "reshape", {node_arg(out.back().name)}, {{"shape", r.shape}},
                       r.shape, f32));
  }
  return out;
}

}  // namespace

std::optional<spec::Spec> reduce_linear_features(const spec::Spec& s) {
  const auto readers = uses_of(s);
  std::set<const spec::Node*> replaced;
  std::map<const spec::Node*, std::vector<spec::Node>> rewrites;
  for (const auto& n : s.nodes) {
    auto m = match_sum(s, n, readers);
    if (!m) m = match_pool(s, n, readers);
    if (!m) continue;
    replaced.insert(m->p.product);
    for (const auto& l : m->p.chain) replaced.insert(l.node);
    if (m->p.transpose && readers.at(m->p.transpose->name) == 1) replaced.insert(m->p.transpose);
    if (m->view) replaced.insert(m->view);
    rewrites.emplace(&n,
                     m->view || n.op == "avg_pool1d" ? rewrite_pool(s, *m) : rewrite_sum(s, *m));
  }
  if (rewrites.empty()) return std::nullopt;
  return splice(s, replaced, std::move(rewrites));
}

}  // namespace egg::backend::builtin
