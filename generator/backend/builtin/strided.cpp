#include "backend/builtin/strided.h"

#include <algorithm>
#include <iterator>

#include "backend/builtin/plan_util.h"

namespace egg::backend::builtin {
namespace {

std::int64_t int_attr(const spec::Node& n, const char* key, std::int64_t fallback) {
  const auto it = n.attrs.find(key);
  return it != n.attrs.end() && it->is_number_integer() ? it->get<std::int64_t>() : fallback;
}

StridedView contiguous(const std::string& base, const spec::Shape& shape) {
  StridedView v;
  v.base = base;
  v.shape = shape;
  v.strides.assign(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) v.strides[d - 1] = v.strides[d] * shape[d];
  return v;
}

// The strides of `v` viewed as `shape` without a copy (torch's computeStride), or false.
bool reshape(StridedView& v, const spec::Shape& shape) {
  if (spec::numel(shape) != spec::numel(v.shape)) return false;
  if (spec::numel(shape) == 0 || v.shape.empty()) {
    const StridedView c = contiguous(v.base, shape);
    v.shape = shape;
    v.strides = c.strides;
    return true;
  }
  std::vector<std::int64_t> strides(shape.size(), 1);
  auto view_d = static_cast<std::int64_t>(shape.size()) - 1;
  std::int64_t chunk = v.strides.back(), tensor_numel = 1, view_numel = 1;
  for (auto d = static_cast<std::int64_t>(v.shape.size()) - 1; d >= 0; --d) {
    const auto ud = static_cast<size_t>(d);
    tensor_numel *= v.shape[ud];
    if (d == 0 || (v.shape[ud - 1] != 1 && v.strides[ud - 1] != tensor_numel * chunk)) {
      while (view_d >= 0 &&
             (view_numel < tensor_numel || shape[static_cast<size_t>(view_d)] == 1)) {
        strides[static_cast<size_t>(view_d)] = view_numel * chunk;
        view_numel *= shape[static_cast<size_t>(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk = v.strides[ud - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return false;
  v.shape = shape;
  v.strides = std::move(strides);
  return true;
}

// `v` narrowed to [start, start + size) with `step` along dim d.
void narrow(StridedView& v, size_t d, std::int64_t start, std::int64_t size, std::int64_t step) {
  v.offset += start * v.strides[d];
  v.shape[d] = size;
  v.strides[d] *= step;
}

// Applies view node `n` (reading the value `v` is) to `v`; false where it is no strided view.
bool apply(const spec::Spec& s, const spec::Node& n, StridedView& v) {
  const size_t rank = v.shape.size();
  if (n.op == "reshape" || n.op == "view" || n.op == "flatten" || n.op == "_unsafe_view")
    return reshape(v, n.shape);
  if (n.op == "clone" || n.op == "contiguous" || n.op == "alias") return true;  // same values
  if (n.op == "expand") {
    // Broadcast dims read one element: stride 0 (new leading dims too).
    if (n.shape.size() < rank) return false;
    const size_t lead = n.shape.size() - rank;
    StridedView e = v;
    e.shape = n.shape;
    e.strides.assign(lead, 0);
    for (size_t d = 0; d < rank; ++d) {
      const std::int64_t to = n.shape[lead + d];
      if (v.shape[d] != to && v.shape[d] != 1) return false;
      e.strides.push_back(v.shape[d] == to ? v.strides[d] : 0);
    }
    v = std::move(e);
    return true;
  }
  if (n.op == "permute") {
    const auto& dims = n.attrs.value("dims", nlohmann::json());
    if (!dims.is_array() || dims.size() != rank) return false;
    StridedView p = v;
    for (size_t k = 0; k < rank; ++k) {
      if (!dims[k].is_number_integer()) return false;
      const auto d = dim_of(dims[k].get<std::int64_t>(), rank);
      if (d < 0 || d >= static_cast<std::int64_t>(rank)) return false;
      p.shape[k] = v.shape[static_cast<size_t>(d)];
      p.strides[k] = v.strides[static_cast<size_t>(d)];
    }
    v = std::move(p);
    return true;
  }
  if (n.op == "transpose") {
    const auto a = dim_of(int_attr(n, "dim0", 0), rank), b = dim_of(int_attr(n, "dim1", 1), rank);
    if (a < 0 || b < 0 || a >= static_cast<std::int64_t>(rank) ||
        b >= static_cast<std::int64_t>(rank))
      return false;
    std::swap(v.shape[static_cast<size_t>(a)], v.shape[static_cast<size_t>(b)]);
    std::swap(v.strides[static_cast<size_t>(a)], v.strides[static_cast<size_t>(b)]);
    return true;
  }
  if (n.op == "slice") {
    const auto d = dim_of(int_attr(n, "dim", 0), rank);
    if (d < 0 || d >= static_cast<std::int64_t>(rank)) return false;
    const auto ud = static_cast<size_t>(d);
    std::int64_t start = int_attr(n, "start", 0);
    if (start < 0) start += v.shape[ud];
    start = std::clamp<std::int64_t>(start, 0, v.shape[ud]);
    const std::int64_t step = int_attr(n, "step", 1);
    if (step < 1 || n.shape.size() != rank) return false;
    narrow(v, ud, start, n.shape[ud], step);
    return true;
  }
  if (n.op == "select") {
    const auto d = dim_of(int_attr(n, "dim", 0), rank);
    if (d < 0 || d >= static_cast<std::int64_t>(rank)) return false;
    const auto ud = static_cast<size_t>(d);
    std::int64_t index = int_attr(n, "index", 0);
    if (index < 0) index += v.shape[ud];
    v.offset += index * v.strides[ud];
    v.shape.erase(v.shape.begin() + d);
    v.strides.erase(v.strides.begin() + d);
    return true;
  }
  if (n.op == "squeeze" || n.op == "unsqueeze") {
    // The result's shape says which size-1 dims come or go; their strides do not matter.
    StridedView r = v;
    r.shape.clear();
    r.strides.clear();
    size_t k = 0;
    for (const auto size : n.shape) {
      while (k < rank && v.shape[k] == 1 && size != 1) ++k;  // squeezed away
      if (k < rank && v.shape[k] == size) {
        r.shape.push_back(size);
        r.strides.push_back(v.strides[k]);
        ++k;
      } else if (size == 1) {
        r.shape.push_back(1);
        r.strides.push_back(0);  // unsqueezed
      } else {
        return false;
      }
    }
    for (; k < rank; ++k)
      if (v.shape[k] != 1) return false;
    v = std::move(r);
    return true;
  }
  if (n.op == "getitem") {
    // A split's piece: a narrow of the split's operand along its dim.
    const spec::Node* sp = n.args.empty() || n.args[0].kind != spec::Arg::Kind::node
                               ? nullptr
                               : s.find_node(n.args[0].node);
    if (!sp || sp->op != "split" || n.args.size() < 2 || n.args[1].kind != spec::Arg::Kind::scalar)
      return false;
    const auto d = dim_of(int_attr(*sp, "dim", 0), rank);
    if (d < 0 || d >= static_cast<std::int64_t>(rank) || n.shape.size() != rank) return false;
    const auto k = static_cast<std::int64_t>(n.args[1].scalar);
    const auto& sizes = sp->attrs.value("split_size", nlohmann::json());
    std::int64_t start = 0;
    if (sizes.is_number_integer()) {
      start = k * sizes.get<std::int64_t>();
    } else if (sizes.is_array()) {
      for (std::int64_t p = 0; p < k && p < static_cast<std::int64_t>(sizes.size()); ++p)
        start += sizes[static_cast<size_t>(p)].get<std::int64_t>();
    } else {
      return false;
    }
    narrow(v, static_cast<size_t>(d), start, n.shape[static_cast<size_t>(d)], 1);
    return true;
  }
  return false;
}

bool is_view(const spec::Node& n) {
  static const char* const views[] = {"reshape",    "view",    "flatten",   "_unsafe_view", "clone",
                                      "contiguous", "alias",   "permute",   "transpose",    "slice",
                                      "select",     "squeeze", "unsqueeze", "expand"};
  return std::any_of(std::begin(views), std::end(views), [&](const char* v) { return n.op == v; });
}

// `v` reshaped to `shape` by regrouping its dims before the last two (which stay as they are):
// the leading dims become `batch` digits. False where the last two dims change.
bool regroup(StridedView& v, const spec::Shape& shape) {
  const size_t r = v.shape.size();
  if (r < 2 || shape.size() < 2 || shape[shape.size() - 1] != v.shape[r - 1] ||
      shape[shape.size() - 2] != v.shape[r - 2] || spec::numel(shape) != spec::numel(v.shape))
    return false;
  std::vector<std::pair<std::int64_t, std::int64_t>> batch;
  for (size_t d = 0; d + 2 < r; ++d)
    if (v.shape[d] != 1) batch.emplace_back(v.shape[d], v.strides[d]);
  std::vector<std::int64_t> strides(shape.size(), 0);
  strides[shape.size() - 2] = v.strides[r - 2];
  strides[shape.size() - 1] = v.strides[r - 1];
  v.shape = shape;
  v.strides = std::move(strides);
  v.batch = std::move(batch);
  return true;
}

std::optional<StridedView> walk(const spec::Spec& s, const std::string& value, bool outermost) {
  if (const spec::Tensor* t = s.find_tensor(value)) return contiguous(value, t->shape);
  const spec::Node* n = s.find_node(value);
  if (!n) return std::nullopt;
  const bool split_piece =
      n->op == "getitem" && !n->args.empty() && n->args[0].kind == spec::Arg::Kind::node &&
      s.find_node(n->args[0].node) && s.find_node(n->args[0].node)->op == "split";
  if ((!is_view(*n) && !split_piece) || n->args.empty() || n->args[0].kind != spec::Arg::Kind::node)
    return contiguous(value, n->shape);
  // The source the view reads: a split's piece reads the split's operand.
  const spec::Node* sp = split_piece ? s.find_node(n->args[0].node) : nullptr;
  if (sp && (sp->args.empty() || sp->args[0].kind != spec::Arg::Kind::node)) return std::nullopt;
  const std::string& source = sp ? sp->args[0].node : n->args[0].node;
  auto v = walk(s, source, false);
  if (!v) return std::nullopt;
  const bool reshaping =
      n->op == "reshape" || n->op == "view" || n->op == "flatten" || n->op == "_unsafe_view";
  StridedView before = *v;
  if (!apply(s, *n, *v)) {
    // A last reshape that no strides express may still regroup the leading dims alone.
    *v = std::move(before);
    if (!outermost || !reshaping || !regroup(*v, n->shape)) return std::nullopt;
  }
  if (v->shape != n->shape) return std::nullopt;
  v->nodes.insert(v->nodes.begin(), n->name);
  if (sp) v->nodes.insert(v->nodes.begin() + 1, sp->name);
  return v;
}

}  // namespace

std::optional<StridedView> strided_view(const spec::Spec& s, const std::string& value) {
  return walk(s, value, true);
}

}  // namespace egg::backend::builtin
