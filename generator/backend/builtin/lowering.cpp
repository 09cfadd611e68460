#include "backend/builtin/lowering.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>

#include "backend/builtin/plan_util.h"
#include "backend/builtin/window.h"

namespace egg::backend::builtin {
namespace {

void lower_attention(const spec::Spec& s, const spec::Node& n, std::vector<spec::Node>& out) {
  auto value = [&](size_t k) -> std::pair<spec::Shape, spec::DType> {
    if (k >= n.args.size() || n.args[k].kind != spec::Arg::Kind::node)
      throw UserError(n.where,
                      quote(n) + ": operand " + std::to_string(k + 1) + " is not a tensor");
    if (const spec::Shape* shape = s.shape_of(n.args[k].node))
      return {*shape, *s.dtype_of(n.args[k].node)};
    throw UserError(n.where, quote(n) + " reads `" + n.args[k].node + "`, which is not defined");
  };
  const auto [q, q_type] = value(0);
  const auto [k, k_type] = value(1);
  const auto [v, v_type] = value(2);
  if (q.size() < 2 || k.size() != q.size() || v.size() != q.size())
    throw UserError(n.where, quote(n) +
                                 ": query, key and value must have the same rank, two or "
                                 "more dims");
  // Grouped-query attention (enable_gqa): each key/value head (dim -3) repeated for its group of
  // query heads, as repeat_interleave does (unsqueeze, expand, reshape: a copy by index).
  const bool gqa = n.attrs.value("enable_gqa", false) && q.size() >= 3 && k.size() == q.size() &&
                   v.size() == q.size() && k[k.size() - 3] > 0 &&
                   k[k.size() - 3] == v[v.size() - 3] && q[q.size() - 3] % k[k.size() - 3] == 0 &&
                   std::equal(q.begin(), q.end() - 3, k.begin()) &&
                   std::equal(q.begin(), q.end() - 3, v.begin());
  std::vector<spec::Arg> args = n.args;
  if (gqa && k[k.size() - 3] != q[q.size() - 3]) {
    const std::string p = n.name + "__";
    const size_t h = q.size() - 3;
    const std::int64_t group = q[h] / k[h];
    for (size_t which : {size_t{1}, size_t{2}}) {
      const auto [shape, dtype] = value(which);
      const std::string base = p + (which == 1 ? "k" : "v") + "_rep";
      spec::Shape one = shape, wide = shape, repeated = shape;
      one.insert(one.begin() + static_cast<std::ptrdiff_t>(h) + 1, 1);
      wide.insert(wide.begin() + static_cast<std::ptrdiff_t>(h) + 1, group);
      repeated[h] = q[h];
      out.push_back(part(n, base + "_u", "unsqueeze", {n.args[which]},
                         {{"dim", static_cast<std::int64_t>(h) + 1}}, one, dtype));
      out.push_back(
          part(n, base + "_e", "expand", {node_arg(base + "_u")}, {{"size", wide}}, wide, dtype));
      out.push_back(part(n, base, "reshape", {node_arg(base + "_e")}, {{"shape", repeated}},
                         repeated, dtype));
      args[which] = node_arg(base);
    }
  } else if (!std::equal(q.begin(), q.end() - 2, k.begin()) ||
             !std::equal(q.begin(), q.end() - 2, v.begin()))
    throw UserError(n.where,
                    quote(n) + " with batch or head dims that differ between query " +
                        spec::shape_string(q) + ", key " + spec::shape_string(k) + " and value " +
                        spec::shape_string(v) + " is not supported by the builtin backend",
                    "expand key and value to the query's heads first (repeat_interleave)");
  const double dropout = n.attrs.value("dropout_p", 0.0);
  if (dropout != 0.0)
    throw UserError(n.where,
                    quote(n) + " with dropout_p=" + std::to_string(dropout) +
                        " draws random numbers; the builtin backend needs dropout_p=0",
                    "run the model in eval mode (dropout_p=0 when not training)");
  const size_t r = q.size();
  const std::int64_t L = q[r - 2], E = q[r - 1], S = k[r - 2];
  spec::Shape kt_shape = k, scores = q;
  if (gqa) kt_shape[r - 3] = q[r - 3];
  kt_shape[r - 2] = E;
  kt_shape[r - 1] = S;
  scores[r - 1] = S;
  const auto scale_attr = n.attrs.find("scale");
  const double scale = scale_attr == n.attrs.end() || scale_attr->is_null()
                           ? 1.0 / std::sqrt(static_cast<double>(E))
                           : scale_attr->get<double>();
  const std::string p = n.name + "__";
  out.push_back(
      part(n, p + "kt", "transpose", {args[1]}, {{"dim0", -2}, {"dim1", -1}}, kt_shape, k_type));
  out.push_back(part(n, p + "scores", "matmul", {n.args[0], node_arg(p + "kt")},
                     nlohmann::json::object(), scores, q_type));
  out.push_back(part(n, p + "scaled", "mul", {node_arg(p + "scores"), scalar_arg(scale)},
                     nlohmann::json::object(), scores, q_type));
  std::string logits = p + "scaled";
  const double minus_inf = -std::numeric_limits<double>::infinity();
  if (n.args.size() > 3 && n.args[3].kind == spec::Arg::Kind::node) {
    const auto [mask, mask_type] = value(3);
    if (mask_type == spec::DType::boolean)
      out.push_back(part(n, p + "masked", "where",
                         {n.args[3], node_arg(logits), scalar_arg(minus_inf)},
                         nlohmann::json::object(), scores, q_type));
    else
      out.push_back(part(n, p + "masked", "add", {node_arg(logits), n.args[3]}, {{"alpha", 1}},
                         scores, q_type));
    logits = p + "masked";
  }
  if (n.attrs.value("is_causal", false)) {
    out.push_back(part(n, p + "ones", "full", {}, {{"size", {L, S}}, {"fill_value", 1.0}},
                       spec::Shape{L, S}, spec::DType::float32));
    out.push_back(part(n, p + "causal", "tril", {node_arg(p + "ones")}, {{"diagonal", 0}},
                       spec::Shape{L, S}, spec::DType::float32));
    out.push_back(part(n, p + "causal_masked", "where",
                       {node_arg(p + "causal"), node_arg(logits), scalar_arg(minus_inf)},
                       nlohmann::json::object(), scores, q_type));
    logits = p + "causal_masked";
  }
  out.push_back(part(n, p + "weights", "softmax", {node_arg(logits)},
                     {{"dim", -1}, {"dtype", nullptr}}, scores, q_type));
  out.push_back(part(n, n.name, "matmul", {node_arg(p + "weights"), args[2]},
                     nlohmann::json::object(), n.shape, n.dtype));
}

// The dims a list-dim reduction reduces (non-negative, sorted), when they are not one run of
// adjacent dims; nullopt otherwise (or when the dims are not a plain integer list: the family
// names that).
std::optional<std::vector<std::int64_t>> scattered_dims(const spec::Spec& s, const spec::Node& n) {
  static const std::set<std::string> list_dim = {"sum",  "mean",      "amax",
                                                 "amin", "logsumexp", "vector_norm"};
  if (!list_dim.count(n.op) || n.args.empty() || n.args[0].kind != spec::Arg::Kind::node)
    return std::nullopt;
  const nlohmann::json& dim = n.attrs.value("dim", nlohmann::json());
  const spec::Shape* in = s.shape_of(n.args[0].node);
  if (!in || !dim.is_array() || dim.size() < 2) return std::nullopt;
  const auto rank = static_cast<std::int64_t>(in->size());
  std::vector<std::int64_t> dims;
  for (const auto& d : dim) {
    if (!d.is_number_integer()) return std::nullopt;
    const std::int64_t v =
        d.get<std::int64_t>() < 0 ? d.get<std::int64_t>() + rank : d.get<std::int64_t>();
    if (v < 0 || v >= rank) return std::nullopt;
    dims.push_back(v);
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  for (size_t k = 1; k < dims.size(); ++k)
    if (dims[k] != dims[k - 1] + 1) return dims;
  return std::nullopt;
}

// A reduction over dims that are not adjacent: a permute that moves them to the end (the others
// keep their order), the reduction over the last dims, and for keepdim a reshape to the shape
// with ones where the reduced dims were (a view of the result).
void lower_scattered_reduction(const spec::Spec& s, const spec::Node& n,
                               const std::vector<std::int64_t>& dims,
                               std::vector<spec::Node>& out) {
  const spec::Shape& in = *s.shape_of(n.args[0].node);
  std::vector<std::int64_t> perm;
  spec::Shape moved, kept;
  for (size_t d = 0; d < in.size(); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), static_cast<std::int64_t>(d))) {
      perm.push_back(static_cast<std::int64_t>(d));
      kept.push_back(in[d]);
    }
  for (std::int64_t d : dims) perm.push_back(d);
  for (std::int64_t d : perm) moved.push_back(in[static_cast<size_t>(d)]);
  const std::string p = n.name + "__";
  out.push_back(part(n, p + "moved", "permute", {n.args[0]}, {{"dims", perm}}, moved,
                     *s.dtype_of(n.args[0].node)));
  nlohmann::json attrs = n.attrs;
  std::vector<std::int64_t> last;
  for (size_t k = 0; k < dims.size(); ++k)
    last.push_back(static_cast<std::int64_t>(kept.size() + k));
  attrs["dim"] = last;
  attrs["keepdim"] = false;
  std::vector<spec::Arg> args = n.args;
  args[0] = node_arg(p + "moved");
  const bool keepdim = n.attrs.value("keepdim", false);
  out.push_back(part(n, keepdim ? p + "reduced" : n.name, n.op, args, attrs, kept, n.dtype));
  if (keepdim)
    out.push_back(part(n, n.name, "reshape", {node_arg(p + "reduced")}, {{"shape", n.shape}},
                       n.shape, n.dtype));
}

// How many nodes read `name` (each argument, list items too), plus one per graph output of it.
int uses(const spec::Spec& s, const std::string& name) {
  int n = 0;
  for (const auto& o : s.outputs) n += o.node == name ? 1 : 0;
  for (const auto& node : s.nodes)
    for (const auto& a : node.args) {
      if (a.kind == spec::Arg::Kind::node && a.node == name) ++n;
      if (a.kind == spec::Arg::Kind::list)
        for (const auto& item : a.items)
          n += item.kind == spec::Arg::Kind::node && item.node == name;
    }
  return n;
}

// `dim` of a node (an integer attribute) as a non-negative dim of a rank-`rank` value.
std::optional<std::int64_t> dim_attr(const spec::Node& n, size_t rank) {
  const nlohmann::json& d = n.attrs.value("dim", nlohmann::json());
  if (!d.is_number_integer()) return std::nullopt;
  const std::int64_t v = d.get<std::int64_t>() < 0 ? d.get<std::int64_t>() + std::int64_t(rank)
                                                   : d.get<std::int64_t>();
  if (v < 0 || v >= std::int64_t(rank)) return std::nullopt;
  return v;
}

// An exclusive scan as PyTorch code writes it (there is no exclusive cumsum):
// cat([full(identity), cumsum(y, d)], d), the block of the scan's identity (0 for cumsum, 1 for
// cumprod) in front along the scanned dim, the scan read by the cat alone. The scan node, or
// nullptr.
const spec::Node* exclusive_scan(const spec::Spec& s, const spec::Node& n) {
  if (n.op != "cat" || n.args.size() != 1 || n.args[0].kind != spec::Arg::Kind::list ||
      n.args[0].items.size() != 2)
    return nullptr;
  const auto& items = n.args[0].items;
  if (items[0].kind != spec::Arg::Kind::node || items[1].kind != spec::Arg::Kind::node)
    return nullptr;
  const spec::Node* fill = s.find_node(items[0].node);
  const spec::Node* scan = s.find_node(items[1].node);
  if (!fill || !scan || fill->op != "full" || !fill->args.empty()) return nullptr;
  if (scan->op != "cumsum" && scan->op != "cumprod") return nullptr;
  if (scan->args.empty() || scan->args[0].kind != spec::Arg::Kind::node) return nullptr;
  const auto& dtype = scan->attrs.value("dtype", nlohmann::json());
  if (!dtype.is_null() || scan->dtype != n.dtype || fill->dtype != n.dtype) return nullptr;
  const nlohmann::json& value = fill->attrs.value("fill_value", nlohmann::json());
  if (!value.is_number() || value.get<double>() != (scan->op == "cumsum" ? 0.0 : 1.0))
    return nullptr;
  const size_t rank = n.shape.size();
  const auto d = dim_attr(n, rank), sd = dim_attr(*scan, rank);
  if (!d || !sd || *d != *sd || fill->shape.size() != rank || scan->shape.size() != rank)
    return nullptr;
  for (size_t k = 0; k < rank; ++k)
    if (std::int64_t(k) != *d && (fill->shape[k] != n.shape[k] || scan->shape[k] != n.shape[k]))
      return nullptr;
  if (uses(s, scan->name) != 1) return nullptr;
  return scan;
}

// The exclusive scan's input as a shift: y = x[..., :L-1, ...] along the scanned dim of an x as
// long as the cat's result (L), y read by the scan alone. Then the cat is the exclusive scan of x
// itself (position i the running value of x before element i). The slice node, or nullptr.
const spec::Node* shifted_input(const spec::Spec& s, const spec::Node& cat,
                                const spec::Node& scan) {
  if (scan.args[0].kind != spec::Arg::Kind::node) return nullptr;
  const spec::Node* slice = s.find_node(scan.args[0].node);
  if (!slice || slice->op != "slice" || slice->args.size() != 1 ||
      slice->args[0].kind != spec::Arg::Kind::node || uses(s, slice->name) != 1)
    return nullptr;
  const spec::Shape* src = s.shape_of(slice->args[0].node);
  const size_t rank = cat.shape.size();
  const auto d = dim_attr(cat, rank), sd = dim_attr(*slice, rank);
  if (!src || *src != cat.shape || !d || !sd || *d != *sd) return nullptr;
  const auto int_attr = [&](const char* key) {
    const nlohmann::json& v = slice->attrs.value(key, nlohmann::json());
    return v.is_number_integer() ? std::optional<std::int64_t>(v.get<std::int64_t>())
                                 : std::nullopt;
  };
  const std::int64_t extent = cat.shape[size_t(*d)];
  if (int_attr("start") != 0 || int_attr("step").value_or(1) != 1 ||
      (int_attr("end") != extent - 1 && int_attr("end") != -1))
    return nullptr;
  return slice;
}

// cat([full(identity), scan(y)], d) as scan(cat([full(identity), y]), d): the same values (the
// identity leaves every running value unchanged), one kernel with the cat as the scan's prologue;
// where y is x without its last element (shifted_input), the exclusive scan of x (read aligned,
// the running value before each element written).
void lower_exclusive_scan(const spec::Spec& s, const spec::Node& n, const spec::Node& scan,
                          std::vector<spec::Node>& out) {
  if (const spec::Node* slice = shifted_input(s, n, scan)) {
    nlohmann::json attrs = scan.attrs;
    attrs["dim"] = n.attrs.at("dim");
    attrs["exclusive"] = true;
    out.push_back(part(n, n.name, scan.op, {slice->args[0]}, attrs, n.shape, n.dtype));
    return;
  }
  std::vector<spec::Arg> args = n.args;
  args[0].items[1] = scan.args[0];
  out.push_back(part(n, n.name + "__shifted", "cat", args, n.attrs, n.shape, n.dtype));
  std::vector<spec::Arg> scan_args = scan.args;
  scan_args[0] = node_arg(n.name + "__shifted");
  nlohmann::json attrs = scan.attrs;
  attrs["dim"] = n.attrs.at("dim");
  out.push_back(part(n, n.name, scan.op, scan_args, attrs, n.shape, n.dtype));
}

// A pool whose one window covers its whole input plane: adaptive pooling to size 1, or a window
// the size of the input with no padding (and, for max, no dilation). It is the reduction over the
// pooled dims with keepdim, which the reduction family runs as one row per plane at memory
// bandwidth, where the pool family gives each output one thread and its window to walk.
struct GlobalPool {
  std::string reduce;  // mean, amax or (with a divisor_override) sum
  std::int64_t dims = 0;
  std::optional<std::int64_t> divisor;  // a divisor_override: the sum divided by it
};

std::optional<GlobalPool> global_pool(const spec::Spec& s, const spec::Node& n) {
  static const std::set<std::string> pools = {
      "max_pool1d",          "max_pool2d",          "max_pool3d",          "avg_pool1d",
      "avg_pool2d",          "avg_pool3d",          "adaptive_max_pool1d", "adaptive_max_pool2d",
      "adaptive_max_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"};
  if (!pools.count(n.op) || n.args.empty() || n.args[0].kind != spec::Arg::Kind::node)
    return std::nullopt;
  for (size_t k = 1; k < n.args.size(); ++k)
    if (n.args[k].kind == spec::Arg::Kind::node) return std::nullopt;
  const spec::Shape* in = s.shape_of(n.args[0].node);
  const int d = n.op[n.op.size() - 2] - '0';
  if (!in || (in->size() != size_t(d) + 1 && in->size() != size_t(d) + 2) ||
      n.shape.size() != in->size() || spec::numel(*in) == 0)
    return std::nullopt;
  const size_t lead = in->size() - size_t(d);
  if (!std::equal(in->begin(), in->begin() + std::ptrdiff_t(lead), n.shape.begin()))
    return std::nullopt;
  for (size_t k = lead; k < n.shape.size(); ++k)
    if (n.shape[k] != 1) return std::nullopt;
  const nlohmann::json& at = n.attrs;
  if (at.value("return_indices", false)) return std::nullopt;
  const bool max = n.op.find("max_pool") != std::string::npos;
  GlobalPool g{max ? "amax" : "mean", d, std::nullopt};
  if (n.op.rfind("adaptive_", 0) == 0) return g;
  Dims3 kernel{1, 1, 1}, pad{0, 0, 0}, dilation{1, 1, 1};
  if (!at.contains("kernel_size") || !spread(at["kernel_size"], d, kernel) ||
      !spread(at.value("padding", nlohmann::json(0)), d, pad) ||
      (max && !spread(at.value("dilation", nlohmann::json(1)), d, dilation)))
    return std::nullopt;
  for (int k = 0; k < d; ++k) {
    const size_t axis = size_t(3 - d + k);
    if (kernel[axis] != (*in)[lead + size_t(k)] || pad[axis] != 0 || dilation[axis] != 1)
      return std::nullopt;
  }
  const nlohmann::json& over = at.value("divisor_override", nlohmann::json());
  if (!max && !over.is_null()) {
    if (!over.is_number_integer() || over.get<std::int64_t>() == 0) return std::nullopt;
    g.reduce = "sum";
    g.divisor = over.get<std::int64_t>();
  }
  return g;
}

// The global pool as its reduction over the last dims with keepdim (same shape as the pool's), and
// for a divisor_override the division after it.
void lower_global_pool(const spec::Node& n, const GlobalPool& g, std::vector<spec::Node>& out) {
  std::vector<std::int64_t> dims;
  for (std::int64_t k = -g.dims; k < 0; ++k) dims.push_back(k);
  const std::string reduced = g.divisor ? n.name + "__sum" : n.name;
  nlohmann::json attrs = {{"dim", dims}, {"keepdim", true}};
  if (g.reduce == "mean" || g.reduce == "sum") attrs["dtype"] = nullptr;
  out.push_back(part(n, reduced, g.reduce, {n.args[0]}, attrs, n.shape, n.dtype));
  if (g.divisor)
    out.push_back(part(n, n.name, "div", {node_arg(reduced), scalar_arg(double(*g.divisor))},
                       nlohmann::json::object(), n.shape, n.dtype));
}

// The cummax/cummin whose indices `n` reads (getitem(scan, 1)) along a dim of at most 2^24
// float elements, or null.
const spec::Node* scan_indices(const spec::Spec& s, const spec::Node& n) {
  if (n.op != "getitem" || n.args.size() < 2 || n.args[0].kind != spec::Arg::Kind::node ||
      n.args[1].kind != spec::Arg::Kind::scalar || n.args[1].scalar != 1)
    return nullptr;
  const spec::Node* scan = s.find_node(n.args[0].node);
  if (!scan || (scan->op != "cummax" && scan->op != "cummin") || scan->args.empty() ||
      scan->args[0].kind != spec::Arg::Kind::node)
    return nullptr;
  const spec::Shape* in = s.shape_of(scan->args[0].node);
  const auto type = s.dtype_of(scan->args[0].node);
  const auto dim = scan->attrs.value("dim", nlohmann::json());
  if (!in || in->empty() || !type || !float_storage(*type) || !dim.is_number_integer())
    return nullptr;
  std::int64_t d = dim.get<std::int64_t>();
  if (d < 0) d += static_cast<std::int64_t>(in->size());
  if (d < 0 || d >= static_cast<std::int64_t>(in->size()) ||
      (*in)[static_cast<size_t>(d)] > (std::int64_t{1} << 24))
    return nullptr;
  return scan;
}

// getitem(scan, 0) of a cummax/cummin whose indices are lowered: the scan node is its values, so
// it is a copy of it (an element-wise epilogue of the scan); false otherwise.
bool scan_values(const spec::Spec& s, const spec::Node& n) {
  if (n.op != "getitem" || n.args.size() < 2 || n.args[0].kind != spec::Arg::Kind::node ||
      n.args[1].kind != spec::Arg::Kind::scalar || n.args[1].scalar != 0)
    return false;
  for (const auto& m : s.nodes)
    if (const spec::Node* scan = scan_indices(s, m); scan && scan->name == n.args[0].node)
      return true;
  return false;
}

// The indices of a cummax/cummin as torch's kernel defines them (a tie takes the later element;
// from a NaN on, the latest NaN): every element equal to the running value at its place, or NaN,
// offers its position along the dim, the others -1; the running maximum of the offers is the
// index (positions exact in float), cast to int64. Two scans and an element-wise kernel where
// PyTorch runs one scan of (value, index) pairs.
void lower_scan_indices(const spec::Spec& s, const spec::Node& n, const spec::Node& scan,
                        std::vector<spec::Node>& out) {
  const spec::Shape& in = *s.shape_of(scan.args[0].node);
  std::int64_t d = scan.attrs["dim"].get<std::int64_t>();
  if (d < 0) d += static_cast<std::int64_t>(in.size());
  const std::int64_t len = in[static_cast<size_t>(d)];
  const std::string p = n.name + "__";
  const auto none = nlohmann::json::object();
  // The scan node is its values (getitem 1 reads the indices beside them).
  out.push_back(part(n, p + "same", "eq", {scan.args[0], node_arg(scan.name)}, none, in,
                     spec::DType::boolean));
  out.push_back(part(n, p + "nan", "isnan", {scan.args[0]}, none, in, spec::DType::boolean));
  out.push_back(part(n, p + "pick", "logical_or", {node_arg(p + "same"), node_arg(p + "nan")}, none,
                     in, spec::DType::boolean));
  out.push_back(part(n, p + "pos", "arange", {},
                     {{"start", 0}, {"end", len}, {"step", 1}, {"dtype", "float32"}},
                     spec::Shape{len}, spec::DType::float32));
  // The positions along dim d, broadcast over the dims after it.
  spec::Shape column(in.size() - static_cast<size_t>(d), 1);
  column[0] = len;
  std::string pos = p + "pos";
  if (column.size() > 1) {
    out.push_back(part(n, p + "column", "reshape", {node_arg(pos)}, {{"shape", column}}, column,
                       spec::DType::float32));
    pos = p + "column";
  }
  out.push_back(part(n, p + "offer", "where",
                     {node_arg(p + "pick"), node_arg(pos), scalar_arg(-1.0)}, none, in,
                     spec::DType::float32));
  out.push_back(part(n, p + "running", "cummax", {node_arg(p + "offer")}, {{"dim", d}}, in,
                     spec::DType::float32));
  out.push_back(part(n, n.name, "cast", {node_arg(p + "running")}, {{"dtype", "int64"}}, n.shape,
                     spec::DType::int64));
}

// A forward convolution of one input position to one output position (every spatial size 1),
// its weight and bias params or inputs, in a float dtype: its input's shape and its weight, or
// nullopt.
struct OnePosition {
  const spec::Shape* in = nullptr;
  const spec::Tensor* weight = nullptr;
};
std::optional<OnePosition> conv_of_one_position(const spec::Spec& s, const spec::Node& n) {
  if ((n.op != "conv1d" && n.op != "conv2d" && n.op != "conv3d") || n.args.size() < 2 ||
      n.args[0].kind != spec::Arg::Kind::node || n.args[1].kind != spec::Arg::Kind::node)
    return std::nullopt;
  const spec::Shape* in = s.shape_of(n.args[0].node);
  const spec::Tensor* w = s.find_tensor(n.args[1].node);
  if (!in || !w || in->size() != n.shape.size() || w->shape.size() != n.shape.size() ||
      n.shape.size() < 3 || !float_storage(n.dtype) || w->dtype != n.dtype)
    return std::nullopt;
  for (size_t d = 2; d < n.shape.size(); ++d)
    if ((*in)[d] != 1 || n.shape[d] != 1) return std::nullopt;
  if (n.args.size() > 2 && n.args[2].kind == spec::Arg::Kind::node &&
      !s.find_tensor(n.args[2].node))
    return std::nullopt;  // a bias computed in forward: the conv family's error names it
  return OnePosition{in, w};
}

// A convolution that is a matrix product: groups 1, every kernel size 1 and a single input and
// output position (a squeeze-excitation's convolution of a pooled [N, C, 1, 1]), any stride and
// dilation, no padding.
bool pointwise_conv(const spec::Spec& s, const spec::Node& n) {
  const auto one = conv_of_one_position(s, n);
  if (!one || n.attrs.value("groups", 1) != 1) return false;
  const auto pad = n.attrs.value("padding", nlohmann::json());
  if (pad.is_array()) {
    for (const auto& p : pad)
      if (!p.is_number_integer() || p.get<std::int64_t>() != 0) return false;
  } else if (!(pad.is_string() && pad.get<std::string>() == "valid")) {
    return false;
  }
  for (size_t d = 2; d < n.shape.size(); ++d)
    if (one->weight->shape[d] != 1) return false;
  return true;
}

// The convolution as linear(x [N, C], W [K, C]) of views (the input and the weight reshaped, no
// copies) whose result keeps the convolution's shape [N, K, 1, ...] (the same elements in the same
// order as [N, K]), so what follows fuses into the product's epilogue, the bias first.
void lower_pointwise_conv(const spec::Spec& s, const spec::Node& n, std::vector<spec::Node>& out) {
  const spec::Shape& in = *s.shape_of(n.args[0].node);
  const spec::Shape& w = s.find_tensor(n.args[1].node)->shape;
  const std::string p = n.name + "__";
  const auto shape = [](std::int64_t a, std::int64_t b) { return spec::Shape{a, b}; };
  out.push_back(part(n, p + "rows", "reshape", {n.args[0]}, {{"shape", shape(in[0], in[1])}},
                     shape(in[0], in[1]), n.dtype));
  out.push_back(part(n, p + "weight", "reshape", {n.args[1]}, {{"shape", shape(w[0], w[1])}},
                     shape(w[0], w[1]), n.dtype));
  const bool bias = n.args.size() > 2 && n.args[2].kind == spec::Arg::Kind::node;
  const std::string product = bias ? p + "product" : n.name;
  out.push_back(part(n, product, "linear", {node_arg(p + "rows"), node_arg(p + "weight")},
                     nlohmann::json::object(), n.shape, n.dtype));
  if (!bias) return;
  // The bias [K] as [K, 1, ...], which broadcasts over the result's shape.
  spec::Shape column(n.shape.size() - 1, 1);
  column[0] = w[0];
  out.push_back(part(n, p + "bias", "reshape", {n.args[2]}, {{"shape", column}}, column, n.dtype));
  out.push_back(part(n, n.name, "add", {node_arg(product), node_arg(p + "bias")},
                     nlohmann::json::object(), n.shape, n.dtype));
}

// The kernel tap of each spatial dim that a depthwise convolution of one input position to one
// output position reads (the others fall in the padding), or nullopt: groups = channels, one
// channel a group, numeric padding.
std::optional<std::vector<std::int64_t>> depthwise_taps(const spec::Spec& s, const spec::Node& n) {
  const auto one = conv_of_one_position(s, n);
  if (!one) return std::nullopt;
  const spec::Shape& in = *one->in;
  const spec::Tensor* w = one->weight;
  const size_t rank = n.shape.size();
  if (in[1] != n.shape[1] || w->shape[0] != n.shape[1] || w->shape[1] != 1 ||
      n.attrs.value("groups", 1) != in[1])
    return std::nullopt;
  const auto pad = n.attrs.value("padding", nlohmann::json());
  const auto dil = n.attrs.value("dilation", nlohmann::json());
  if (!pad.is_array() || pad.size() != rank - 2 || (!dil.is_array() && !dil.is_null()))
    return std::nullopt;
  std::vector<std::int64_t> taps;
  for (size_t d = 2; d < rank; ++d) {
    if (!pad[d - 2].is_number_integer()) return std::nullopt;
    const std::int64_t p = pad[d - 2].get<std::int64_t>();
    const std::int64_t g = dil.is_array() && d - 2 < dil.size() && dil[d - 2].is_number_integer()
                               ? dil[d - 2].get<std::int64_t>()
                               : 1;
    // Output 0 reads input -p + k g, which is the input's one position 0 for k = p / g.
    if (g <= 0 || p % g != 0 || p / g >= w->shape[d]) return std::nullopt;
    taps.push_back(p / g);
  }
  return taps;
}

// The depthwise convolution of one position as x * w[:, 0, taps] (+ bias), each channel's weight
// selected from the param and reshaped to [C, 1, ...]: element-wise work a norm or reduction after
// it takes as its prologue.
void lower_depthwise_one_position(const spec::Spec& s, const spec::Node& n,
                                  const std::vector<std::int64_t>& taps,
                                  std::vector<spec::Node>& out) {
  const spec::Shape& w = s.find_tensor(n.args[1].node)->shape;
  const std::string p = n.name + "__";
  spec::Shape shape = w;
  spec::Arg cur = n.args[1];
  for (size_t d = w.size(); d-- > 1;) {  // the last dims first, so each index is still in place
    shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(d));
    const std::string name = p + "tap" + std::to_string(d);
    const std::int64_t index = d >= 2 ? taps[d - 2] : 0;
    out.push_back(part(n, name, "select", {cur}, {{"dim", d}, {"index", index}}, shape, n.dtype));
    cur = node_arg(name);
  }
  spec::Shape column(n.shape.size() - 1, 1);
  column[0] = n.shape[1];
  out.push_back(part(n, p + "weight", "reshape", {cur}, {{"shape", column}}, column, n.dtype));
  const bool bias = n.args.size() > 2 && n.args[2].kind == spec::Arg::Kind::node;
  const std::string scaled = bias ? p + "scaled" : n.name;
  out.push_back(part(n, scaled, "mul", {n.args[0], node_arg(p + "weight")},
                     nlohmann::json::object(), n.shape, n.dtype));
  if (!bias) return;
  out.push_back(part(n, p + "bias", "reshape", {n.args[2]}, {{"shape", column}}, column, n.dtype));
  out.push_back(part(n, n.name, "add", {node_arg(scaled), node_arg(p + "bias")},
                     nlohmann::json::object(), n.shape, n.dtype));
}

}  // namespace

spec::Spec lower_composites(const spec::Spec& s, bool keep_attention) {
  bool any = false;
  std::set<std::string> folded;  // scans an exclusive scan's cat takes over
  for (const auto& n : s.nodes) {
    any = any || (!keep_attention && n.op == "scaled_dot_product_attention") ||
          scattered_dims(s, n) || global_pool(s, n) || scan_indices(s, n) || pointwise_conv(s, n) ||
          depthwise_taps(s, n);
    if (const auto* scan = exclusive_scan(s, n)) {
      folded.insert(scan->name);
      if (const auto* slice = shifted_input(s, n, *scan)) {
        folded.insert(slice->name);
        const std::string& fill = n.args[0].items[0].node;  // read by the cat alone: dropped too
        if (uses(s, fill) == 1) folded.insert(fill);
      }
    }
  }
  if (!any && folded.empty()) return s;
  spec::Spec out = s;
  out.nodes.clear();
  for (const auto& n : s.nodes) {
    if (folded.count(n.name)) continue;
    if (n.op == "scaled_dot_product_attention" && !keep_attention)
      lower_attention(s, n, out.nodes);
    else if (const auto dims = scattered_dims(s, n))
      lower_scattered_reduction(s, n, *dims, out.nodes);
    else if (const auto* scan = exclusive_scan(s, n))
      lower_exclusive_scan(s, n, *scan, out.nodes);
    else if (const auto g = global_pool(s, n))
      lower_global_pool(n, *g, out.nodes);
    else if (const auto* scan = scan_indices(s, n))
      lower_scan_indices(s, n, *scan, out.nodes);
    else if (pointwise_conv(s, n))
      lower_pointwise_conv(s, n, out.nodes);
    else if (const auto taps = depthwise_taps(s, n))
      lower_depthwise_one_position(s, n, *taps, out.nodes);
    else if (scan_values(s, n))
      out.nodes.push_back(
          part(n, n.name, "clone", {n.args[0]}, nlohmann::json::object(), n.shape, n.dtype));
    else
      out.nodes.push_back(n);
  }
  return out;
}

}  // namespace egg::backend::builtin
