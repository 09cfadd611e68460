#include "backend/builtin/algebra_conv.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backend/builtin/plan_util.h"
#include "backend/builtin/window.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;
using spec::Shape;

constexpr auto kF32 = spec::DType::float32;
constexpr auto kI64 = spec::DType::int64;
constexpr auto kBool = spec::DType::boolean;

// A reduction over every spatial dim of a convolution's output, through scalar links.
struct Match {
  const spec::Node* reduction = nullptr;
  const spec::Node* conv = nullptr;
  bool transposed = false;
  std::vector<const spec::Node*> chain;                    // from the convolution outward
  std::string x, weight, bias;                             // bias empty: none
  int dims = 0;                                            // spatial dims (1-3)
  Dims3 stride{1, 1, 1}, pad{0, 0, 0}, dilation{1, 1, 1};  // right-aligned, as window.h spreads
};

// True when `n` multiplies, divides, adds or subtracts a scalar to `from`: a link that commutes
// with the mean.
bool scalar_link(const spec::Node& n, const std::string& from) {
  if ((n.op != "mul" && n.op != "div" && n.op != "add" && n.op != "sub") || n.args.size() != 2 ||
      n.args[0].kind != spec::Arg::Kind::node || n.args[0].node != from ||
      n.args[1].kind != spec::Arg::Kind::scalar || n.dtype != kF32)
    return false;
  if (n.op == "div" && n.attrs.contains("rounding_mode") && !n.attrs["rounding_mode"].is_null())
    return false;
  return !n.attrs.contains("alpha") || n.attrs["alpha"].is_number();
}

// The convolution under `r` (a sum or mean over every spatial dim), or nullopt.
std::optional<Match> match(const spec::Spec& s, const spec::Node& r,
                           const std::map<std::string, int>& readers) {
  if ((r.op != "sum" && r.op != "mean") || r.dtype != kF32 || r.args.empty() ||
      r.args[0].kind != spec::Arg::Kind::node)
    return std::nullopt;
  if (r.attrs.contains("dtype") && !r.attrs["dtype"].is_null()) return std::nullopt;
  const spec::Node* cur = s.find_node(r.args[0].node);
  if (!cur || cur->shape.size() < 3 || cur->shape.size() > 5) return std::nullopt;
  const auto rank = static_cast<std::int64_t>(cur->shape.size());
  const json dim = r.attrs.value("dim", json());
  if (!dim.is_array()) return std::nullopt;
  std::set<std::int64_t> reduced;
  for (const auto& d : dim) {
    if (!d.is_number_integer()) return std::nullopt;
    reduced.insert(dim_of(d.get<std::int64_t>(), rank));
  }
  std::set<std::int64_t> spatial;
  for (std::int64_t d = 2; d < rank; ++d) spatial.insert(d);
  if (reduced != spatial) return std::nullopt;

  Match m;
  m.reduction = &r;
  m.dims = static_cast<int>(rank - 2);
  while (cur->op == "mul" || cur->op == "div" || cur->op == "add" || cur->op == "sub") {
    if (readers.at(cur->name) != 1 || cur->args.empty() ||
        cur->args[0].kind != spec::Arg::Kind::node)
      return std::nullopt;
    const spec::Node* prev = s.find_node(cur->args[0].node);
    if (!prev || prev->shape != cur->shape || !scalar_link(*cur, prev->name)) return std::nullopt;
    m.chain.insert(m.chain.begin(), cur);
    cur = prev;
  }
  static const std::set<std::string> forward = {"conv1d", "conv2d", "conv3d"};
  static const std::set<std::string> transposed = {"conv_transpose1d", "conv_transpose2d",
                                                   "conv_transpose3d"};
  m.transposed = transposed.count(cur->op) > 0;
  if ((!m.transposed && !forward.count(cur->op)) || readers.at(cur->name) != 1 ||
      cur->dtype != kF32 || cur->args.size() < 2 || cur->args[0].kind != spec::Arg::Kind::node ||
      cur->args[1].kind != spec::Arg::Kind::node)
    return std::nullopt;
  m.conv = cur;
  m.x = cur->args[0].node;
  const Shape* xs = s.shape_of(m.x);
  const spec::Tensor* w = s.find_tensor(cur->args[1].node);
  if (!xs || xs->size() != static_cast<size_t>(rank) || !w || w->dtype != kF32 ||
      w->shape.size() != static_cast<size_t>(rank))
    return std::nullopt;
  const std::int64_t ci = (*xs)[1], co = cur->shape[1];
  if (w->shape[0] != (m.transposed ? ci : co) || w->shape[1] != (m.transposed ? co : ci))
    return std::nullopt;  // groups other than 1
  m.weight = w->name;
  if (cur->args.size() > 2 && cur->args[2].kind == spec::Arg::Kind::node) {
    const spec::Tensor* b = s.find_tensor(cur->args[2].node);
    if (!b || b->shape != Shape{co}) return std::nullopt;
    m.bias = b->name;
  }
  const json& a = cur->attrs;
  if (a.value("groups", json(1)) != json(1) ||
      !spread(a.value("stride", json(1)), m.dims, m.stride) ||
      !spread(a.value("padding", json(0)), m.dims, m.pad) ||
      !spread(a.value("dilation", json(1)), m.dims, m.dilation))
    return std::nullopt;  // a padding given by name ('same', 'valid'), or attributes not read
  return m;
}

// The rewrite's nodes, each derived from the reduction (its line), named `<reduction>__<part>`.
class Nodes {
 public:
  explicit Nodes(const spec::Node& r) : r_(r), base_(r.name + "__") {}
  std::string add(const std::string& part_name, const std::string& op, std::vector<spec::Arg> args,
                  json attrs, Shape shape, spec::DType dtype) {
    out_.push_back(part(r_, base_ + part_name, op, std::move(args), std::move(attrs),
                        std::move(shape), dtype));
    return out_.back().name;
  }
  std::vector<spec::Node>& nodes() { return out_; }

 private:
  const spec::Node& r_;
  std::string base_;
  std::vector<spec::Node> out_;
};

json arange(std::int64_t n) { return {{"start", 0}, {"end", n}, {"step", 1}, {"dtype", nullptr}}; }

// Axis a's mask M[k, i] (bool [K, I]): true where kernel offset k connects input position i to an
// output position inside the output.
std::string axis_mask(Nodes& g, const Match& m, int a, std::int64_t k, std::int64_t in,
                      std::int64_t out) {
  const int e = 3 - m.dims + a;
  const std::int64_t st = m.stride[e], pd = m.pad[e], dl = m.dilation[e];
  const std::string A = std::to_string(a);
  const Shape ki = {k, in};
  std::string kk = g.add("k" + A, "arange", {}, arange(k), {k}, kI64);
  kk = g.add("k" + A + "c", "reshape", {node_arg(kk)}, {{"shape", {k, 1}}}, {k, 1}, kI64);
  const std::string kd = g.add("k" + A + "d", "mul", {node_arg(kk), scalar_arg(double(dl))},
                               json::object(), {k, 1}, kI64);
  std::string ii = g.add("i" + A, "arange", {}, arange(in), {in}, kI64);
  ii = g.add("i" + A + "r", "reshape", {node_arg(ii)}, {{"shape", {1, in}}}, {1, in}, kI64);
  const json alpha = {{"alpha", 1}};
  std::string t, mask;
  std::int64_t limit = 0;
  if (m.transposed) {  // output o = i s + k d - p, inside [0, out)
    t = g.add("i" + A + "s", "mul", {node_arg(ii), scalar_arg(double(st))}, json::object(), {1, in},
              kI64);
    t = g.add("t" + A, "add", {node_arg(t), node_arg(kd)}, alpha, ki, kI64);
    t = g.add("t" + A + "p", "sub", {node_arg(t), scalar_arg(double(pd))}, alpha, ki, kI64);
    limit = out;
  } else {  // input i = o s + k d - p: u = i + p - k d is o s, o inside [0, out)
    t = g.add("u" + A, "add", {node_arg(ii), scalar_arg(double(pd))}, alpha, {1, in}, kI64);
    t = g.add("u" + A + "k", "sub", {node_arg(t), node_arg(kd)}, alpha, ki, kI64);
    limit = out * st;
  }
  const std::string lo =
      g.add("m" + A + "lo", "ge", {node_arg(t), scalar_arg(0.0)}, json::object(), ki, kBool);
  const std::string hi = g.add("m" + A + "hi", "lt", {node_arg(t), scalar_arg(double(limit))},
                               json::object(), ki, kBool);
  mask = g.add("m" + A, "logical_and", {node_arg(lo), node_arg(hi)}, json::object(), ki, kBool);
  if (!m.transposed && st > 1) {  // and on the stride's lattice
    const std::string rem = g.add("m" + A + "rem", "remainder",
                                  {node_arg(t), scalar_arg(double(st))}, json::object(), ki, kI64);
    const std::string on =
        g.add("m" + A + "on", "eq", {node_arg(rem), scalar_arg(0.0)}, json::object(), ki, kBool);
    mask = g.add("m" + A + "s", "logical_and", {node_arg(mask), node_arg(on)}, json::object(), ki,
                 kBool);
  }
  return mask;
}

// Axis a's input positions that kernel offset k connects to no output position inside the
// output, per k: the zeros of axis_mask's mask, computed here to pick the contraction's form.
std::vector<std::vector<std::int64_t>> excluded(const Match& m, int a, std::int64_t k,
                                                std::int64_t in, std::int64_t out) {
  const int e = 3 - m.dims + a;
  const std::int64_t st = m.stride[e], pd = m.pad[e], dl = m.dilation[e];
  std::vector<std::vector<std::int64_t>> ex(static_cast<size_t>(k));
  for (std::int64_t kk = 0; kk < k; ++kk)
    for (std::int64_t i = 0; i < in; ++i) {
      bool hit = false;
      if (m.transposed) {
        const std::int64_t o = i * st + kk * dl - pd;
        hit = o >= 0 && o < out;
      } else {
        const std::int64_t u = i + pd - kk * dl;
        hit = u >= 0 && u < out * st && u % st == 0;
      }
      if (!hit) ex[static_cast<size_t>(kk)].push_back(i);
    }
  return ex;
}

// Axis a of v [N, C_in, ..., I_a, K...] contracted into its K kernel offsets as the axis's total
// less the positions each offset misses (`ex`): v becomes [N, C_in, ..., K_a, K...].
void contract_by_totals(Nodes& g, int a, std::int64_t k,
                        const std::vector<std::vector<std::int64_t>>& ex, std::string& v,
                        Shape& vs) {
  const auto pos = static_cast<std::int64_t>(2 + a);
  const std::string A = std::to_string(a);
  Shape ts = vs;
  ts.erase(ts.begin() + pos);
  const std::string total =
      g.add("t" + A, "sum", {node_arg(v)},
            {{"dim", json::array({pos})}, {"keepdim", false}, {"dtype", nullptr}}, ts, kF32);
  std::map<std::int64_t, std::string> at;  // position i of the axis, selected once
  spec::Arg items;
  items.kind = spec::Arg::Kind::list;
  for (std::int64_t kk = 0; kk < k; ++kk) {
    std::string sk = total;
    for (const std::int64_t i : ex[static_cast<size_t>(kk)]) {
      auto [it, fresh] = at.emplace(i, "");
      if (fresh)
        it->second = g.add("x" + A + "i" + std::to_string(i), "select", {node_arg(v)},
                           {{"dim", pos}, {"index", i}}, ts, kF32);
      sk = g.add("t" + A + "k" + std::to_string(kk) + "i" + std::to_string(i), "sub",
                 {node_arg(sk), node_arg(it->second)}, {{"alpha", 1}}, ts, kF32);
    }
    items.items.push_back(node_arg(sk));
  }
  vs = ts;
  vs.insert(vs.begin() + pos, k);
  v = g.add("s" + A, "stack", {items}, {{"dim", pos}}, vs, kF32);
}

// The same through the axis's [K, I] mask of the input positions each offset reads: v times the
// mask, summed over I.
void contract_by_mask(Nodes& g, const Match& m, int a, std::int64_t k, std::int64_t in,
                      std::int64_t out_len, std::string& v, Shape& vs) {
  const auto pos = static_cast<std::int64_t>(2 + a);
  const std::string A = std::to_string(a);
  const std::string mask = axis_mask(g, m, a, k, in, out_len);
  Shape us = vs;
  us.insert(us.begin() + pos, 1);
  const std::string u = g.add("x" + A, "unsqueeze", {node_arg(v)}, {{"dim", pos}}, us, kF32);
  // The mask as [K, I, 1...] against the kernel axes already contracted.
  Shape ms = {k, in};
  for (int b = a + 1; b < m.dims; ++b) ms.push_back(1);
  const std::string mr = ms.size() == 2 ? mask
                                        : g.add("m" + A + "r", "reshape", {node_arg(mask)},
                                                {{"shape", ms}}, ms, kBool);
  Shape ps = us;
  ps[static_cast<size_t>(pos)] = k;
  const std::string p =
      g.add("p" + A, "mul", {node_arg(u), node_arg(mr)}, json::object(), ps, kF32);
  vs = ps;
  vs.erase(vs.begin() + pos + 1);
  v = g.add("s" + A, "sum", {node_arg(p)},
            {{"dim", json::array({pos + 1})}, {"keepdim", false}, {"dtype", nullptr}}, vs, kF32);
}

std::vector<spec::Node> rewrite(const spec::Spec& s, const Match& m) {
  const spec::Node& r = *m.reduction;
  const Shape& xs = *s.shape_of(m.x);
  const Shape& ys = m.conv->shape;
  const Shape& ws = s.find_tensor(m.weight)->shape;
  const std::int64_t n = xs[0], ci = xs[1], co = ys[1];
  Nodes g(r);
  // x contracted with each axis's mask, the last spatial axis first: [N, C_in, I..., K...] until
  // every input axis is a kernel axis.
  std::string v = m.x;
  Shape vs = xs;
  std::int64_t taps = 1, positions = 1;
  for (int a = m.dims - 1; a >= 0; --a) {
    const std::int64_t k = ws[2 + a], in = xs[2 + a];
    taps *= k;
    positions *= ys[2 + a];
    // Where offsets miss only a few positions (the borders a padding or an output crop leaves
    // out), the axis's total once, less those positions: x read once along it, not K times.
    const auto ex = excluded(m, a, k, in, ys[2 + a]);
    size_t missed = 0;
    for (const auto& e : ex) missed += e.size();
    if (missed <= 2 * static_cast<size_t>(k))
      contract_by_totals(g, a, k, ex, v, vs);
    else
      contract_by_mask(g, m, a, k, in, ys[2 + a], v, vs);
  }
  // The window sums as rows of C_in K taps, scaled to the mean's; the weight as [C_out, C_in K].
  v = g.add("z", "reshape", {node_arg(v)}, {{"shape", {n, ci * taps}}}, {n, ci * taps}, kF32);
  v = g.add("zm", "div", {node_arg(v), scalar_arg(double(positions))}, {{"rounding_mode", nullptr}},
            {n, ci * taps}, kF32);
  std::string w = m.weight;
  if (m.transposed) {  // [C_in, C_out, K...] → [C_out, C_in, K...]
    json dims = json::array({1, 0});
    Shape pw = {co, ci};
    for (int a = 0; a < m.dims; ++a) {
      dims.push_back(2 + a);
      pw.push_back(ws[2 + a]);
    }
    w = g.add("wt", "permute", {node_arg(w)}, {{"dims", dims}}, pw, kF32);
  }
  w = g.add("wf", "reshape", {node_arg(w)}, {{"shape", {co, ci * taps}}}, {co, ci * taps}, kF32);
  std::vector<spec::Arg> largs = {node_arg(v), node_arg(w)};
  if (!m.bias.empty()) largs.push_back(node_arg(m.bias));
  // The mean of the convolution's output per (batch entry, output channel), then the chain.
  v = g.add("mean", "linear", std::move(largs), json::object(), {n, co}, kF32);
  int step = 0;
  for (const spec::Node* l : m.chain)
    v = g.add("chain" + std::to_string(step++), l->op, {node_arg(v), l->args[1]}, l->attrs, {n, co},
              kF32);
  if (r.op == "sum")
    v = g.add("total", "mul", {node_arg(v), scalar_arg(double(positions))}, json::object(), {n, co},
              kF32);
  auto& out = g.nodes();
  if (r.shape == Shape{n, co}) {
    out.back().name = r.name;
  } else {  // keepdim: [N, C_out, 1...]
    out.push_back(part(r, r.name, "reshape", {node_arg(v)}, {{"shape", r.shape}}, r.shape, kF32));
  }
  return out;
}

}  // namespace

std::optional<spec::Spec> reduce_conv_spatial(const spec::Spec& s) {
  const auto readers = uses_of(s);
  std::set<const spec::Node*> replaced;
  std::map<const spec::Node*, std::vector<spec::Node>> rewrites;
  for (const auto& n : s.nodes) {
    const auto m = match(s, n, readers);
    if (!m) continue;
    replaced.insert(m->conv);
    for (const auto* l : m->chain) replaced.insert(l);
    rewrites.emplace(&n, rewrite(s, *m));
  }
  if (rewrites.empty()) return std::nullopt;
  return splice(s, replaced, std::move(rewrites));
}

}  // namespace egg::backend::builtin
