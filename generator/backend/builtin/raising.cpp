#include "backend/builtin/raising.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "backend/builtin/plan_util.h"
#include "backend/builtin/strided.h"

namespace egg::backend::builtin {
namespace {

// A fill that no score survives next to: -inf, or at most float16's lowest (torch.finfo(..).min,
// as Hugging Face models write it), whose exponential is 0 in fp32 beside any real score.
bool drops(const spec::Arg& a) { return a.kind == spec::Arg::Kind::scalar && a.scalar <= -65504.0; }

bool is_node(const spec::Arg& a) { return a.kind == spec::Arg::Kind::node; }

// True when `n` swaps the last two dims of its operand (k.transpose(-2, -1), k.mT, a permute).
bool swaps_last_two(const spec::Node& n) {
  const auto r = static_cast<std::int64_t>(n.shape.size());
  return r >= 2 && swaps_dims(n, r - 2, r - 1);
}

// One written-out attention found: the nodes it replaces and the nodes that replace it.
struct Match {
  std::set<std::string> removed;
  std::vector<spec::Node> added;  // before the attention node, in order
  std::string at;                 // the final matmul, whose place the attention takes
};

std::optional<Match> match(const spec::Spec& s, const spec::Node& softmax,
                           const std::map<std::string, int>& uses,
                           const std::map<std::string, const spec::Node*>& reader) {
  auto used_once = [&](const std::string& v) {
    const auto it = uses.find(v);
    return it != uses.end() && it->second == 1;
  };
  const size_t rank = softmax.shape.size();
  const auto dim = softmax.attrs.value("dim", nlohmann::json());
  if (rank < 2 || !dim.is_number_integer() ||
      dim_of(dim.get<std::int64_t>(), rank) != static_cast<std::int64_t>(rank - 1))
    return std::nullopt;
  if (softmax.attrs.contains("dtype") && !softmax.attrs["dtype"].is_null()) return std::nullopt;
  if (!used_once(softmax.name) || !reader.count(softmax.name)) return std::nullopt;
  const spec::Node& pv = *reader.at(softmax.name);
  if ((pv.op != "matmul" && pv.op != "bmm") || pv.args.size() != 2 || !is_node(pv.args[0]) ||
      pv.args[0].node != softmax.name || !is_node(pv.args[1]))
    return std::nullopt;

  Match m;
  m.at = pv.name;
  m.removed = {softmax.name, pv.name};
  std::optional<spec::Arg> mask;
  std::string drop;  // a mask whose true elements are dropped (masked_fill's)
  double scale = 1.0;
  bool scaled = false;
  const spec::Node* x = softmax.args.empty() || !is_node(softmax.args[0])
                            ? nullptr
                            : s.find_node(softmax.args[0].node);
  // From the softmax back to the scores: at most one mask and one scale; an additive mask only
  // outside the scale (softmax(scores * c + bias), SDPA's form), a dropping one on either side.
  for (int step = 0; step < 2 && x; ++step) {
    if (!used_once(x->name)) return std::nullopt;
    if (!mask && x->op == "where" && x->args.size() == 3 && is_node(x->args[0])) {
      // SDPA's keep mask is a bool one (a float mask is added); a dropping condition of any
      // dtype becomes the bool `== 0`.
      const bool bool_cond = s.dtype_of(x->args[0].node) == spec::DType::boolean;
      if (drops(x->args[2]) && is_node(x->args[1]) && bool_cond) {
        mask = x->args[0];
      } else if (drops(x->args[1]) && is_node(x->args[2])) {
        drop = x->args[0].node;
      } else {
        return std::nullopt;
      }
      m.removed.insert(x->name);
      x = s.find_node(x->args[drop.empty() ? 1 : 2].node);
      continue;
    }
    if (!mask && drop.empty() && !scaled && x->op == "add" && x->args.size() == 2 &&
        is_node(x->args[0]) && is_node(x->args[1]) && x->attrs.value("alpha", 1.0) == 1.0) {
      // The bias is the operand that is no chain of this attention: the other one must lead to
      // the scores through a scale or be them.
      const spec::Node* a = s.find_node(x->args[0].node);
      const bool a_scores =
          a && (a->op == "matmul" || a->op == "bmm" || a->op == "mul" || a->op == "div");
      mask = x->args[a_scores ? 1 : 0];
      // SDPA adds a float mask; a bool one it would read as a keep mask.
      const auto bias_type = s.dtype_of(mask->node);
      if (!bias_type || !spec::is_floating(*bias_type)) return std::nullopt;
      m.removed.insert(x->name);
      x = s.find_node(x->args[a_scores ? 0 : 1].node);
      continue;
    }
    if (!scaled && (x->op == "mul" || x->op == "div") && x->args.size() == 2) {
      const bool lhs = is_node(x->args[0]) && x->args[1].kind == spec::Arg::Kind::scalar;
      const bool rhs =
          x->op == "mul" && is_node(x->args[1]) && x->args[0].kind == spec::Arg::Kind::scalar;
      if (!lhs && !rhs) return std::nullopt;
      const double c = lhs ? x->args[1].scalar : x->args[0].scalar;
      if (!(c > 0.0)) return std::nullopt;
      scale = x->op == "mul" ? c : 1.0 / c;
      scaled = true;
      m.removed.insert(x->name);
      x = s.find_node(x->args[lhs ? 0 : 1].node);
      continue;
    }
    break;
  }
  if (!x || !used_once(x->name) || (x->op != "matmul" && x->op != "bmm") || x->args.size() != 2 ||
      !is_node(x->args[0]) || !is_node(x->args[1]))
    return std::nullopt;
  const spec::Node* kt = s.find_node(x->args[1].node);
  if (!kt || !swaps_last_two(*kt) || kt->args.empty() || !is_node(kt->args[0])) return std::nullopt;
  m.removed.insert(x->name);
  if (used_once(kt->name)) m.removed.insert(kt->name);

  std::vector<spec::Arg> args = {x->args[0], kt->args[0], pv.args[1]};
  if (!drop.empty()) {
    const spec::Shape* shape = s.shape_of(drop);
    if (!shape) return std::nullopt;
    spec::Node keep;
    keep.name = pv.name + "__keep";
    keep.op = "eq";
    keep.target = "torch.eq";
    spec::Arg zero;
    zero.kind = spec::Arg::Kind::scalar;
    keep.args = {node_arg(drop), zero};
    keep.shape = *shape;
    keep.dtype = spec::DType::boolean;
    keep.where = softmax.where;
    keep.code = softmax.code;
    m.added.push_back(keep);
    mask = node_arg(keep.name);
  }
  if (mask) args.push_back(*mask);
  spec::Node att;
  att.name = pv.name;
  att.op = "scaled_dot_product_attention";
  att.target = pv.target;
  att.args = std::move(args);
  att.attrs = {{"dropout_p", 0.0}, {"is_causal", false}, {"scale", scale}};
  att.shape = pv.shape;
  att.dtype = pv.dtype;
  att.where = pv.where;
  att.code = pv.code;
  m.added.push_back(std::move(att));
  return m;
}

}  // namespace

std::optional<spec::Spec> raise_attention(const spec::Spec& s) {
  const std::map<std::string, int> uses = uses_of(s);  // a returned value is never folded away
  std::map<std::string, const spec::Node*> reader;     // a value's (last) reader
  for (const auto& n : s.nodes)
    for (const auto& a : node_args(n)) reader[a] = &n;
  std::vector<Match> found;
  std::set<std::string> taken;
  for (const auto& n : s.nodes) {
    if (n.op != "softmax") continue;
    auto m = match(s, n, uses, reader);
    if (!m) continue;
    bool overlaps = false;
    for (const auto& r : m->removed) overlaps = overlaps || taken.count(r);
    if (overlaps) continue;
    taken.insert(m->removed.begin(), m->removed.end());
    found.push_back(std::move(*m));
  }
  if (found.empty()) return std::nullopt;
  spec::Spec out = s;
  out.nodes.clear();
  for (const auto& n : s.nodes) {
    const Match* at = nullptr;
    for (const auto& m : found)
      if (m.at == n.name) at = &m;
    if (at) {
      for (const auto& a : at->added) out.nodes.push_back(a);
      continue;
    }
    if (!taken.count(n.name)) out.nodes.push_back(n);
  }
  return out;
}

spec::Spec fold_attention_views(const spec::Spec& s) {
  spec::Spec out = s;
  std::set<std::string> walked;
  bool any = false;
  for (auto& n : out.nodes) {
    if (n.op != "scaled_dot_product_attention" || n.args.size() < 3) continue;
    nlohmann::json layouts = nlohmann::json::array();
    bool folded = false;
    for (size_t k = 0; k < 3; ++k) {
      std::optional<StridedView> v;
      if (is_node(n.args[k])) v = strided_view(s, n.args[k].node);
      bool ok = v && !v->nodes.empty() && !v->strides.empty() && v->strides.back() == 1 &&
                v->offset % 8 == 0 && s.dtype_of(v->base) == s.dtype_of(n.args[k].node);
      for (size_t d = 0; ok && d + 1 < v->strides.size(); ++d) ok = v->strides[d] % 8 == 0;
      for (const auto& [size, stride] : ok ? v->batch : decltype(v->batch){}) ok = stride % 8 == 0;
      if (!ok) {
        layouts.push_back(nullptr);
        continue;
      }
      nlohmann::json layout = {{"shape", v->shape}, {"strides", v->strides}, {"offset", v->offset}};
      if (!v->batch.empty()) layout["batch"] = v->batch;
      layouts.push_back(std::move(layout));
      n.args[k] = node_arg(v->base);
      walked.insert(v->nodes.begin(), v->nodes.end());
      folded = true;
    }
    if (!folded) continue;
    n.attrs["layouts"] = layouts;
    any = true;
  }
  if (!any) return s;
  // Views nothing reads any more go, chains of them from the reader back.
  for (bool dropped = true; dropped;) {
    dropped = false;
    const std::map<std::string, int> uses = uses_of(out);
    for (size_t i = out.nodes.size(); i-- > 0;)
      if (walked.count(out.nodes[i].name) && !uses.count(out.nodes[i].name)) {
        out.nodes.erase(out.nodes.begin() + static_cast<std::ptrdiff_t>(i));
        dropped = true;
        break;
      }
  }
  return out;
}

}  // namespace egg::backend::builtin
