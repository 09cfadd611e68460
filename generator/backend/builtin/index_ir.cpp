#include "backend/builtin/index_ir.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <numeric>

#include "backend/builtin/plan_util.h"

namespace egg::backend::builtin {
namespace {

using spec::Shape;

// The layout ops, by how the IR evaluates them.
const std::set<std::string>& reshapes() {
  static const std::set<std::string> ops = {"reshape", "flatten", "squeeze", "unsqueeze"};
  return ops;
}
const std::set<std::string>& layout_ops() {
  static const std::set<std::string> ops = {"reshape",
                                            "flatten",
                                            "squeeze",
                                            "unsqueeze",
                                            "permute",
                                            "transpose",
                                            "expand",
                                            "slice",
                                            "select",
                                            "flip",
                                            "cat",
                                            "stack",
                                            "split",
                                            "getitem",
                                            "triu",
                                            "tril",
                                            "full",
                                            "unfold",
                                            "pad",
                                            "index_select",
                                            "embedding",
                                            "gather",
                                            "arange",
                                            "dropout",
                                            "repeat",
                                            "index",
                                            "diagonal",
                                            "upsample_nearest",
                                            "upsample_linear",
                                            "upsample_cubic"};
  return ops;
}

// An integer literal of IndexT arithmetic.
std::string num(std::int64_t v) {
  return std::to_string(v) + (v > INT_MAX || v < INT_MIN ? "LL" : "");
}

bool is_literal(const std::string& e) {
  if (e.empty()) return false;
  size_t k = e[0] == '-' ? 1 : 0;
  return k < e.size() &&
         std::all_of(e.begin() + static_cast<std::ptrdiff_t>(k), e.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::int64_t int_attr(const spec::Node& n, const std::string& key, std::int64_t dflt) {
  const auto it = n.attrs.find(key);
  if (it == n.attrs.end() || it->is_null()) return dflt;
  if (!it->is_number())
    throw UserError(n.where, quote(n) + ": attribute " + key + " is not an integer");
  return it->get<std::int64_t>();
}

std::vector<std::int64_t> int_list(const spec::Node& n, const std::string& key) {
  const auto it = n.attrs.find(key);
  if (it == n.attrs.end() || it->is_null()) return {};
  if (it->is_number()) return {it->get<std::int64_t>()};
  std::vector<std::int64_t> out;
  for (const auto& v : *it) out.push_back(v.get<std::int64_t>());
  return out;
}

// An index vector: one IndexT expression per dim of the value it indexes.
struct Index {
  std::vector<std::string> dims;
  bool linear = false;  // the dims are element i delinearized over the value's (contiguous) shape
  std::string guard;    // the C condition under which the value is needed; "" = always
};

std::string conj(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + " && " + b;
}

// The dtypes the IR computes as int64 values (long long); every other value is a float (bool as
// 0 or 1).
bool integer_dtype(spec::DType d) { return d == spec::DType::int64 || d == spec::DType::int32; }

class Builder {
 public:
  Builder(const spec::Spec& s, const OpTable& ops, const std::map<std::string, std::string>& ptr)
      : s_(s), ops_(ops), ptr_(ptr) {}

  IndexProgram run() {
    for (const auto& o : s_.outputs) {
      prog_.max_numel = std::max(prog_.max_numel, spec::numel(o.shape));
      prog_.results.push_back(value(o.node, delinearize(shape_of(o.node))));
    }
    return std::move(prog_);
  }

 private:
  const spec::Shape& shape_of(const std::string& name) const {
    if (const spec::Shape* shape = s_.shape_of(name)) return *shape;
    throw InternalError("index IR: no value `" + name + "`");
  }

  // `expr` as an IndexT variable (a literal or a variable stays as it is).
  std::string idx(const std::string& expr) {
    const bool variable = expr.rfind("egg_i", 0) == 0 && is_literal(expr.substr(5));
    if (is_literal(expr) || expr == "i" || variable) return expr;
    auto [it, fresh] = index_vars_.emplace(expr, "");
    if (fresh) {
      it->second = "egg_i" + std::to_string(index_vars_.size() - 1);
      prog_.statements.push_back("const IndexT " + it->second + " = " + expr + ";");
    }
    return it->second;
  }
  std::string plus(const std::string& a, std::int64_t c) {
    if (c == 0) return a;
    if (is_literal(a)) return num(std::stoll(a) + c);
    return idx("(" + a + (c > 0 ? " + " + num(c) : " - " + num(-c)) + ")");
  }
  std::string times(const std::string& a, std::int64_t c) {
    if (c == 1 || a == "0") return a;
    if (is_literal(a)) return num(std::stoll(a) * c);
    return a + " * " + num(c);
  }

  // Element i of a contiguous tensor of `shape`, as a multi-index.
  Index delinearize(const Shape& shape) {
    Index at;
    at.linear = true;
    std::int64_t stride = 1;
    at.dims.assign(shape.size(), "0");
    for (size_t k = shape.size(); k-- > 0;) {
      if (shape[k] != 1) {
        std::string e = stride == 1 ? "i" : "(i / " + num(stride) + ")";
        bool outer = true;  // every dim before k has size 1: i / stride < shape[k]
        for (size_t j = 0; j < k; ++j) outer = outer && shape[j] == 1;
        if (!outer) e = "(" + e + " % " + num(shape[k]) + ")";
        at.dims[k] = idx(e);
        origin_.emplace(at.dims[k], Origin{stride, shape[k], outer});
      }
      stride *= shape[k];
    }
    return at;
  }

  static std::string key(const std::string& value, const Index& at) {
    std::string k = value + "@";
    for (const auto& d : at.dims) k += d + ",";
    return k + "?" + at.guard;
  }
  static std::string context(const Index& at) { return key("", at); }

  // A temporary holding `expr`: a long long where the value being computed is an integer (an
  // int64 node, or a load of an integer tensor), else a float.
  std::string emit(const std::string& expr) {
    const std::string var = "egg_v" + std::to_string(vars_++);
    prog_.statements.push_back((integer_ ? "const long long " : "const float ") + var + " = " +
                               expr + ";");
    return var;
  }
  // The zero of the value being computed.
  std::string zero() const { return integer_ ? "0LL" : "0.0f"; }
  // A number as a literal of the value being computed.
  std::string literal(double v) const {
    return integer_ ? std::to_string(static_cast<long long>(std::llround(v))) + "LL"
                    : float_literal(v);
  }
  bool integer_value(const std::string& name) const {
    const auto d = s_.dtype_of(name);
    return d && integer_dtype(*d);
  }

  IndexRead& read_of(const std::string& tensor) {
    for (auto& r : prog_.reads)
      if (r.tensor == tensor) return r;
    prog_.reads.push_back(IndexRead{tensor, false, false});
    return prog_.reads.back();
  }

  // The operand index of a broadcast: `at` indexes a value of `shape`, the operand has `operand`.
  static Index broadcast(const Index& at, const Shape& shape, const Shape& operand) {
    Index out;
    out.guard = at.guard;
    out.linear = at.linear && operand == shape;
    const size_t lead = shape.size() - operand.size();
    for (size_t k = 0; k < operand.size(); ++k)
      out.dims.push_back(operand[k] == 1 ? "0" : at.dims[lead + k]);
    return out;
  }

  // The float expression of `name` at `at`.
  std::string value(const std::string& name, const Index& at) {
    const std::string k = key(name, at);
    if (const auto it = memo_.find(k); it != memo_.end()) return it->second;
    // What the emits below compute has this value's type (restored for the caller's own emits).
    const bool outer = integer_;
    integer_ = integer_value(name);
    std::string v = s_.find_tensor(name) ? load(*s_.find_tensor(name), at) : node(name, at);
    integer_ = outer;
    memo_[k] = v;
    by_context_[context(at)][name] = v;
    return v;
  }

  // The element offset of `at` in a contiguous value of `shape`: i where `at` is i's own
  // multi-index, else the digits times their strides (dims that are adjacent digits of i merged
  // into one).
  std::string offset_of(const Index& at, const Shape& shape) {
    if (at.linear) return "i";
    std::string off;
    std::int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      if (shape[d] == 1 || at.dims[d] == "0") {
        stride *= shape[d];
        continue;
      }
      // Dims d0..d that are adjacent digits of i (a broadcast over the leading dims) are one
      // digit: (i / s) % (n0 * .. * nd).
      std::string term = at.dims[d];
      size_t d0 = d;
      for (auto o = origin_.find(term); o != origin_.end() && o->second.size == shape[d];) {
        std::int64_t span = o->second.size;
        bool outer = o->second.outer;
        while (d0 > 0) {
          const auto up = origin_.find(at.dims[d0 - 1]);
          if (up == origin_.end() || up->second.size != shape[d0 - 1] ||
              up->second.stride != o->second.stride * span)
            break;
          span *= up->second.size;
          outer = up->second.outer;
          --d0;
        }
        if (d0 == d) break;
        std::string e = o->second.stride == 1 ? "i" : "(i / " + num(o->second.stride) + ")";
        term = idx(outer ? e : "(" + e + " % " + num(span) + ")");
        break;
      }
      off = times(term, stride) + (off.empty() ? "" : " + " + off);
      for (size_t k = d0; k <= d; ++k) stride *= shape[k];
      d = d0;
    }
    return off.empty() ? "0" : off;
  }

  std::string load(const spec::Tensor& t, const Index& at) {
    prog_.max_numel = std::max(prog_.max_numel, spec::numel(t.shape));
    IndexRead& r = read_of(t.name);
    const std::string& ptr = ptr_.at(t.name);
    // Read at element i itself: the schedule loads it (a vector where it can) and passes it in,
    // an integer tensor as long long, exactly.
    if (at.linear && at.guard.empty()) {
      r.full = true;
      r.integer = integer_;
      return full_value(ptr);
    }
    r.indexed = true;
    const std::string off = offset_of(at, t.shape);
    const std::string element = integer_ ? "static_cast<long long>(" + ptr + "[" + off + "])"
                                         : "egg_to_float(" + ptr + "[" + off + "])";
    return emit(at.guard.empty() ? element : "(" + at.guard + ") ? " + element + " : " + zero());
  }

  std::string node(const std::string& name, const Index& at) {
    const spec::Node& n = *s_.find_node(name);
    if (ops_.knows(n.op)) return pointwise(n, at);
    const Shape& in_shape = n.args.empty() || n.args[0].kind != spec::Arg::Kind::node
                                ? n.shape
                                : shape_of(n.args[0].node);
    const std::string src = n.args.empty() ? "" : n.args[0].node;
    if (reshapes().count(n.op)) return value(src, reshape(at, n.shape, in_shape));
    if (n.op == "permute") {
      const auto p = int_list(n, "dims");
      Index in = at;
      in.linear = false;
      for (size_t k = 0; k < p.size(); ++k)
        in.dims[static_cast<size_t>(dim_of(p[k], p.size()))] = at.dims[k];
      return value(src, in);
    }
    if (n.op == "transpose") {
      Index in = at;
      in.linear = false;
      std::swap(in.dims[static_cast<size_t>(dim_of(int_attr(n, "dim0", 0), n.shape.size()))],
                in.dims[static_cast<size_t>(dim_of(int_attr(n, "dim1", 1), n.shape.size()))]);
      return value(src, in);
    }
    if (n.op == "expand") return value(src, broadcast(at, n.shape, in_shape));
    if (n.op == "slice") {
      const auto d = static_cast<size_t>(dim_of(int_attr(n, "dim", 0), in_shape.size()));
      std::int64_t start = int_attr(n, "start", 0);
      if (start < 0) start += in_shape[d];
      start = std::clamp<std::int64_t>(start, 0, in_shape[d]);
      Index in = at;
      in.linear = false;
      in.dims[d] = plus(idx(times(at.dims[d], int_attr(n, "step", 1))), start);
      return value(src, in);
    }
    if (n.op == "select") {
      const auto d = static_cast<size_t>(dim_of(int_attr(n, "dim", 0), in_shape.size()));
      std::int64_t index = int_attr(n, "index", 0);
      if (index < 0) index += in_shape[d];
      Index in = at;
      in.linear = false;
      in.dims.insert(in.dims.begin() + static_cast<std::ptrdiff_t>(d), num(index));
      return value(src, in);
    }
    if (n.op == "flip") {
      Index in = at;
      in.linear = false;
      for (auto d : int_list(n, "dims")) {
        const auto k = static_cast<size_t>(dim_of(d, n.shape.size()));
        if (n.shape[k] > 1) in.dims[k] = idx("(" + num(n.shape[k] - 1) + " - " + at.dims[k] + ")");
      }
      return value(src, in);
    }
    if (n.op == "unfold") {
      // x.unfold(d, size, step): out[..., j, ..., k] = x[..., j * step + k, ...], k the new last
      // dim.
      const auto d = static_cast<size_t>(dim_of(int_attr(n, "dim", 0), in_shape.size()));
      Index in = at;
      in.linear = false;
      in.dims.pop_back();
      in.dims[d] = idx(times(at.dims[d], int_attr(n, "step", 1)) + " + " + at.dims.back());
      return value(src, in);
    }
    if (n.op == "index_select") {
      // out[..., j, ...] = x[..., index[j], ...] along `dim`.
      const auto d = static_cast<size_t>(dim_of(int_attr(n, "dim", 0), in_shape.size()));
      Index in = at;
      in.linear = false;
      in.dims[d] = gathered(n.args[1].node, Index{{at.dims[d]}, false, at.guard});
      return value(src, in);
    }
    if (n.op == "gather") {
      // out[..., j, ...] = x[..., index[..., j, ...], ...] along `dim`: the index has the
      // output's shape and is read at the output's own index.
      const auto d = static_cast<size_t>(dim_of(int_attr(n, "dim", 0), in_shape.size()));
      Index in = at;
      in.linear = false;
      in.dims[d] = gathered(n.args[1].node, at);
      return value(src, in);
    }
    if (n.op == "embedding") {
      // out[p..., k] = weight[indices[p...], k]: the leading dims index `indices`.
      Index where;
      where.guard = at.guard;
      where.dims.assign(at.dims.begin(), at.dims.end() - 1);
      return value(src, Index{{gathered(n.args[1].node, where), at.dims.back()}, false, at.guard});
    }
    if (n.op == "pad") return pad(n, at, in_shape);
    if (n.op == "upsample_nearest") return upsample_nearest(n, at, in_shape);
    if (n.op == "upsample_linear") return upsample_linear(n, at, in_shape);
    if (n.op == "upsample_cubic") return upsample_cubic(n, at, in_shape);
    if (n.op == "getitem") return split_piece(n, at);
    if (n.op == "cat") return cat(n, at);
    if (n.op == "stack") return stack(n, at);
    if (n.op == "triu" || n.op == "tril") {
      const size_t r = n.shape.size();
      const std::string v = value(src, at);
      const std::string diff = "(" + at.dims[r - 1] + " - " + at.dims[r - 2] + ")";
      const std::string keep =
          diff + (n.op == "triu" ? " >= " : " <= ") + num(int_attr(n, "diagonal", 0));
      return emit("(" + keep + ") ? " + v + " : " + zero());
    }
    if (n.op == "arange") {
      // start + step * i along its one dim (long long for an int64 arange, exact).
      const auto number = [&](const char* key, double dflt) {
        const auto it = n.attrs.find(key);
        return it == n.attrs.end() || !it->is_number() ? dflt : it->get<double>();
      };
      const double start = number("start", 0.0), step = number("step", 1.0);
      const std::string i =
          (integer_ ? "static_cast<long long>(" : "static_cast<float>(") + at.dims.at(0) + ")";
      const std::string scaled = step == 1.0 ? i : literal(step) + " * " + i;
      return emit(start == 0.0 ? scaled : literal(start) + " + " + scaled);
    }
    if (n.op == "dropout") return dropout(n, at);
    if (n.op == "repeat") {
      // out[..., j, ...] = x[..., j % size, ...]; the extra leading dims of the repeats are
      // dropped.
      Index in;
      in.guard = at.guard;
      const size_t lead = n.shape.size() - in_shape.size();
      for (size_t k = 0; k < in_shape.size(); ++k) {
        const std::string& d = at.dims[lead + k];
        const bool tiled = n.shape[lead + k] != in_shape[k];
        in.dims.push_back(in_shape[k] == 1 ? "0"
                          : tiled          ? idx("(" + d + " % " + num(in_shape[k]) + ")")
                                           : d);
      }
      return value(src, in);
    }
    if (n.op == "index") return advanced_index(n, at, in_shape);
    if (n.op == "diagonal") {
      // out[rest..., j] = x[.., j + max(-offset, 0) at dim1, .., j + max(offset, 0) at dim2, ..].
      const auto d1 = static_cast<size_t>(dim_of(int_attr(n, "dim1", 0), in_shape.size()));
      const auto d2 = static_cast<size_t>(dim_of(int_attr(n, "dim2", 1), in_shape.size()));
      const std::int64_t offset = int_attr(n, "offset", 0);
      Index in;
      in.guard = at.guard;
      size_t next = 0;
      for (size_t k = 0; k < in_shape.size(); ++k)
        in.dims.push_back(k == d1   ? plus(at.dims.back(), std::max<std::int64_t>(-offset, 0))
                          : k == d2 ? plus(at.dims.back(), std::max<std::int64_t>(offset, 0))
                                    : at.dims[next++]);
      return value(src, in);
    }
    if (n.op == "full") {
      const auto it = n.attrs.find("fill_value");
      const double fill = it == n.attrs.end() ? 0.0
                          : it->is_boolean()  ? (it->get<bool>() ? 1.0 : 0.0)
                                              : it->get<double>();
      return literal(fill);
    }
    throw InternalError("index IR: no rule for `" + n.op + "`");
  }

  // Dropout in training mode: the element, at its own position `n` in the value's contiguous
  // layout, kept (times 1 / (1 - p)) where Philox4x32-10 draws below the keep threshold from the
  // [seed, offset] input (python/egg_frontend/rng.py has the same draws in PyTorch).
  std::string dropout(const spec::Node& n, const Index& at) {
    const std::string v = value(n.args[0].node, at);
    const std::string flat = idx(offset_of(at, n.shape));
    const std::string& rng = n.args[1].node;
    read_of(rng).indexed = true;
    const double p = n.attrs.at("p").get<double>();
    const auto threshold = static_cast<std::uint32_t>(std::llround((1.0 - p) * 16777216.0));
    const float scale = p >= 1.0 ? 0.0f : static_cast<float>(1.0 / (1.0 - p));
    return emit("egg_dropout(" + v + ", " + ptr_.at(rng) + ", " +
                std::to_string(int_attr(n, "stream", 0)) + "u, static_cast<std::int64_t>(" + flat +
                "), " + std::to_string(threshold) + "u, " + float_literal(scale) + ")");
  }

  // x[i0, i1, ...] (PyTorch's advanced indexing by integer tensors, None for a whole dim): the
  // index tensors broadcast to one shape B, which takes the first indexed dim's place when the
  // indexed dims are adjacent, else comes first; a negative index counts from the end.
  std::string advanced_index(const spec::Node& n, const Index& at, const Shape& in_shape) {
    const auto& items = n.args[1].items;
    std::vector<size_t> indexed;
    Shape b;
    for (size_t d = 0; d < items.size(); ++d) {
      if (items[d].kind != spec::Arg::Kind::node) continue;
      indexed.push_back(d);
      const Shape& is = shape_of(items[d].node);
      if (is.size() > b.size()) b.insert(b.begin(), is.size() - b.size(), 1);
      for (size_t k = 0; k < is.size(); ++k) {
        std::int64_t& slot = b[b.size() - is.size() + k];
        slot = slot == 1 ? is[k] : slot;
      }
    }
    const bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
    const size_t first = adjacent ? indexed.front() : 0;
    Index b_at;
    b_at.guard = at.guard;
    b_at.dims.assign(at.dims.begin() + static_cast<std::ptrdiff_t>(first),
                     at.dims.begin() + static_cast<std::ptrdiff_t>(first + b.size()));
    Index in;
    in.guard = at.guard;
    size_t next = 0;
    for (size_t d = 0; d < in_shape.size(); ++d) {
      if (d < items.size() && items[d].kind == spec::Arg::Kind::node) {
        const std::string raw =
            gathered(items[d].node, broadcast(b_at, b, shape_of(items[d].node)));
        in.dims.push_back(
            idx("(" + raw + " < 0 ? " + raw + " + " + num(in_shape[d]) + " : " + raw + ")"));
        continue;
      }
      in.dims.push_back(at.dims[next < first ? next : next + b.size()]);
      ++next;
    }
    return value(n.args[0].node, in);
  }

  // The IndexT value of the integer tensor `index` at `at` (an int64 value of the IR: exact).
  std::string gathered(const std::string& index, const Index& at) {
    return idx("static_cast<IndexT>(" + value(index, at) + ")");
  }

  std::string pointwise(const spec::Node& n, const Index& at) {
    std::map<std::string, std::string> direct;
    bool integer_operand = false;
    for (const auto& a : n.args)
      if (a.kind == spec::Arg::Kind::node) {
        direct[a.node] = value(a.node, broadcast(at, n.shape, shape_of(a.node)));
        integer_operand = integer_operand || integer_value(a.node);
      }
    // On integers the table's integer form, exactly: an int64 result, or a comparison of
    // integers. A floating result converts its integer operands as PyTorch promotes them.
    if (integer_ || (integer_operand && !float_storage(n.dtype) && ops_.has_integer_form(n))) {
      // A bool operand (a mask's 1 or 0, a float here) joins as the integer it is (`mask & 1`).
      for (auto& [name, v] : direct)
        if (!integer_value(name)) v = "static_cast<long long>(" + v + ")";
      const std::string expr = ops_.integer_expression(n, direct);
      for (const auto& [_, v] : direct)
        if (expr == v) return v;
      return emit(expr);
    }
    for (auto& [name, v] : direct)
      if (integer_value(name)) v = "static_cast<float>(" + v + ")";
    // The values computed at this index too, so that chains of scalings fold (OpTable).
    std::map<std::string, std::string> operands = by_context_[context(at)];
    for (const auto& [name, v] : direct) operands[name] = v;
    const std::string expr = ops_.expression(s_, n, operands);
    // A value the table passes through (clone, x * 1) needs no temporary of its own.
    for (const auto& [_, v] : direct)
      if (expr == v) return v;
    return emit(expr);
  }

  // A reshape's source index: dims grouped where the sizes' products meet, each group
  // relinearized (a dim kept, merged as a sum or split by division).
  Index reshape(const Index& at, const Shape& out, const Shape& in) {
    if (at.linear) {
      Index lin = delinearize(in);
      lin.guard = at.guard;
      return lin;
    }
    Index src;
    src.guard = at.guard;
    src.dims.assign(in.size(), "0");
    std::vector<size_t> a, b;
    for (size_t k = 0; k < out.size(); ++k)
      if (out[k] != 1) a.push_back(k);
    for (size_t k = 0; k < in.size(); ++k)
      if (in[k] != 1) b.push_back(k);
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
      const size_t i0 = i, j0 = j;
      std::int64_t pa = out[a[i++]], pb = in[b[j++]];
      while (pa != pb) {
        if (pa < pb && i < a.size())
          pa *= out[a[i++]];
        else if (pb < pa && j < b.size())
          pb *= in[b[j++]];
        else
          throw InternalError("index IR: reshape of " + spec::shape_string(in) + " to " +
                              spec::shape_string(out) + " changes the element count");
      }
      if (i - i0 == 1 && j - j0 == 1) {
        src.dims[b[j0]] = at.dims[a[i0]];
        continue;
      }
      std::string lin;
      std::int64_t stride = 1;
      for (size_t k = i; k-- > i0;) {
        lin = times(at.dims[a[k]], stride) + (lin.empty() ? "" : " + " + lin);
        stride *= out[a[k]];
      }
      lin = idx(lin);
      std::int64_t inner = 1;
      for (size_t k = j; k-- > j0;) {
        std::string e = inner == 1 ? lin : "(" + lin + " / " + num(inner) + ")";
        if (k != j0) e = "(" + e + " % " + num(in[b[k]]) + ")";
        src.dims[b[k]] = idx(e);
        inner *= in[b[k]];
      }
    }
    return src;
  }

  // F.pad(x, pad, "constant", value): pad holds (before, after) per dim from the last; an output
  // index inside the input reads it (guarded), any other is the value. Negative pads crop.
  // Modes reflect, replicate and circular read an index inside instead: mirrored about the edge
  // element (reflect), the edge element itself (replicate), or wrapped around (circular).
  std::string pad(const spec::Node& n, const Index& at, const Shape& in) {
    const auto widths = int_list(n, "pad");
    const std::string mode = n.attrs.value("mode", std::string("constant"));
    Index src = at;
    src.linear = false;
    std::string inside;
    for (size_t j = 0; 2 * j < widths.size() && j < in.size(); ++j) {
      const size_t d = in.size() - 1 - j;
      const std::int64_t before = widths[2 * j], after = widths[2 * j + 1];
      if (before == 0 && after == 0) continue;
      if (mode != "constant") {
        const std::string k = plus(at.dims[d], -before), last = num(in[d] - 1);
        const std::string n_in = num(in[d]);
        src.dims[d] = idx(
            mode == "reflect" ? "(" + k + " < 0 ? -" + k + " : " + k + " > " + last + " ? " +
                                    num(2 * (in[d] - 1)) + " - " + k + " : " + k + ")"
            : mode == "circular"
                ? "((" + k + " % " + n_in + " + " + n_in + ") % " + n_in + ")"
                : "min(max(" + k + ", static_cast<IndexT>(0)), static_cast<IndexT>(" + last + "))");
        continue;
      }
      src.dims[d] = plus(at.dims[d], -before);
      if (before > 0) inside = conj(inside, src.dims[d] + " >= 0");
      if (after > 0) inside = conj(inside, src.dims[d] + " < " + num(in[d]));
    }
    src.guard = conj(at.guard, inside);
    const std::string v = value(n.args[0].node, src);
    const auto fill = n.attrs.find("value");
    const double value_attr = fill == n.attrs.end() || fill->is_null() ? 0.0 : fill->get<double>();
    return inside.empty() ? v : emit("(" + inside + ") ? " + v + " : " + literal(value_attr));
  }

  // PyTorch's float scale from output to input coordinates along spatial dim `k` (0 = the first
  // after N and C): 1 / the caller's scale factor where one was given, else in / out; with
  // align_corners (linear modes) (in - 1) / (out - 1). As float, as its kernels compute it.
  static float upsample_scale(const spec::Node& n, size_t k, std::int64_t in, std::int64_t out,
                              bool align_corners) {
    if (align_corners)
      return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
    const auto it = n.attrs.find("scales");
    if (it != n.attrs.end() && it->is_array() && k < it->size() && (*it)[k].is_number() &&
        (*it)[k].get<double>() > 0)
      return static_cast<float>(1.0 / (*it)[k].get<double>());
    return static_cast<float>(in) / static_cast<float>(out);
  }

  // F.interpolate(mode="nearest" or "nearest-exact"): each spatial output index reads the source
  // index min(floor(o * scale), in - 1) (exact: floor((o + 0.5) * scale)), in float as PyTorch.
  std::string upsample_nearest(const spec::Node& n, const Index& at, const Shape& in) {
    const bool exact = n.attrs.value("exact", false);
    Index src = at;
    src.linear = false;
    for (size_t d = 2; d < in.size(); ++d) {
      if (in[d] == n.shape[d] && !exact) continue;
      const float scale = upsample_scale(n, d - 2, in[d], n.shape[d], false);
      const std::string o = "static_cast<float>(" + at.dims[d] + ")" + (exact ? " + 0.5f" : "");
      src.dims[d] = idx("min(static_cast<IndexT>(floorf((" + o + ") * " + float_literal(scale) +
                        ")), static_cast<IndexT>(" + num(in[d] - 1) + "))");
    }
    return value(n.args[0].node, src);
  }

  // F.interpolate(mode="linear", "bilinear" or "trilinear"): per spatial dim the source
  // coordinate r (align_corners: o * scale, else max((o + 0.5) * scale - 0.5, 0)), its floor i0,
  // the next row i1 (i0 itself at the edge) and the weight of i1, r - i0; the value is the lerp
  // over the dims from the first, in the order of PyTorch's CUDA kernels.
  std::string upsample_linear(const spec::Node& n, const Index& at, const Shape& in) {
    const bool align = n.attrs.value("align_corners", false);
    std::vector<Taps> axes;
    for (size_t d = 2; d < in.size(); ++d) {
      const float scale = upsample_scale(n, d - 2, in[d], n.shape[d], align);
      const std::string o = "static_cast<float>(" + at.dims[d] + ")";
      const std::string r =
          align ? emit(float_literal(scale) + " * " + o)
                : emit("fmaxf(" + float_literal(scale) + " * (" + o + " + 0.5f) - 0.5f, 0.0f)");
      const std::string i0 = idx("static_cast<IndexT>(" + r + ")");
      const std::string i1 = idx("(" + i0 + " + (" + i0 + " < " + num(in[d] - 1) + " ? 1 : 0))");
      const std::string w1 = emit(r + " - static_cast<float>(" + i0 + ")");
      axes.push_back(Taps{d, {i0, i1}, {emit("1.0f - " + w1), w1}});
    }
    Index src = at;
    src.linear = false;
    return interpolate(n.args[0].node, axes, 0, src);
  }

  // Bicubic (upsample_bicubic2d): per spatial dim PyTorch's unclamped source index, its floor and
  // the cubic convolution weights (A = -0.75) of the 4 taps around it, the taps clamped to the
  // input; the last dim interpolated first, then the one before, as ATen sums them.
  std::string upsample_cubic(const spec::Node& n, const Index& at, const Shape& in) {
    const bool align = n.attrs.value("align_corners", false);
    std::vector<Taps> axes;
    for (size_t d = 2; d < in.size(); ++d) {
      const float scale = upsample_scale(n, d - 2, in[d], n.shape[d], align);
      const std::string o = "static_cast<float>(" + at.dims[d] + ")";
      const std::string r = align ? emit(float_literal(scale) + " * " + o)
                                  : emit(float_literal(scale) + " * (" + o + " + 0.5f) - 0.5f");
      const std::string f = emit("floorf(" + r + ")");
      const std::string t = emit(r + " - " + f);
      const std::string base = idx("static_cast<IndexT>(" + f + ")");
      Taps a{d, {}, {}};
      for (int k = 0; k < 4; ++k) {
        const std::string tap = "(" + base + " + " + std::to_string(k - 1) + ")";
        a.at.push_back(idx("(" + tap + " < 0 ? IndexT(0) : " + tap + " > " + num(in[d] - 1) +
                           " ? IndexT(" + num(in[d] - 1) + ") : " + tap + ")"));
      }
      a.weight = {emit("egg_cubic_far(" + t + " + 1.0f)"), emit("egg_cubic_near(" + t + ")"),
                  emit("egg_cubic_near(1.0f - " + t + ")"),
                  emit("egg_cubic_far((1.0f - " + t + ") + 1.0f)")};
      axes.push_back(a);
    }
    Index src = at;
    src.linear = false;
    return interpolate(n.args[0].node, axes, 0, src);
  }

  // The taps of one dim of an interpolation: the source indices read and their weights.
  struct Taps {
    size_t d;
    std::vector<std::string> at, weight;
  };

  // The weighted sum over the taps of axes[k], each the interpolation over the axes after it
  // (the last axis innermost), w0 * v0 + w1 * v1 + ... in tap order.
  std::string interpolate(const std::string& source, const std::vector<Taps>& axes, size_t k,
                          Index& src) {
    if (k == axes.size()) return value(source, src);
    const Taps& a = axes[k];
    std::string sum;
    for (size_t j = 0; j < a.at.size(); ++j) {
      src.dims[a.d] = a.at[j];
      const std::string v = interpolate(source, axes, k + 1, src);
      sum += (j ? " + " : "") + a.weight[j] + " * " + v;
    }
    return emit(sum);
  }

  // getitem(split(x), k): the k-th piece of x along the split dim.
  std::string split_piece(const spec::Node& n, const Index& at) {
    const spec::Node& sp = *s_.find_node(n.args[0].node);
    const Shape& in = shape_of(sp.args[0].node);
    const auto d = static_cast<size_t>(dim_of(int_attr(sp, "dim", 0), in.size()));
    const auto k = static_cast<std::int64_t>(n.args[1].scalar);
    const auto sizes = int_list(sp, "split_size");
    std::int64_t offset = 0;
    if (sizes.size() == 1 && sp.attrs.at("split_size").is_number())
      offset = k * sizes[0];
    else
      for (std::int64_t p = 0; p < k; ++p) offset += sizes.at(static_cast<size_t>(p));
    Index src = at;
    src.linear = false;
    src.dims[d] = plus(at.dims[d], offset);
    return value(sp.args[0].node, src);
  }

  std::string cat(const spec::Node& n, const Index& at) {
    const auto d = static_cast<size_t>(dim_of(int_attr(n, "dim", 0), n.shape.size()));
    const std::string x = at.dims[d];
    std::vector<std::pair<std::string, std::string>> parts;  // (upper bound, value)
    std::vector<const spec::Arg*> items;
    for (const auto& a : n.args[0].items)
      if (spec::numel(shape_of(a.node)) > 0) items.push_back(&a);
    std::int64_t lo = 0;
    for (size_t j = 0; j < items.size(); ++j) {
      const Shape& shape = shape_of(items[j]->node);
      const std::int64_t hi = lo + shape[d];
      Index src = at;
      src.linear = false;
      src.dims[d] = plus(x, -lo);
      const std::string below = x + " < " + num(hi), above = x + " >= " + num(lo);
      src.guard = conj(at.guard, items.size() == 1       ? ""
                                 : j == 0                ? below
                                 : j + 1 == items.size() ? above
                                                         : above + " && " + below);
      parts.emplace_back(x + " < " + num(hi), value(items[j]->node, src));
      lo = hi;
    }
    if (parts.empty()) return zero();  // every operand empty: so is the result (never read)
    std::string expr = parts.back().second;
    for (size_t j = parts.size() - 1; j-- > 0;)
      expr = "(" + parts[j].first + ") ? " + parts[j].second + " : " + expr;
    return parts.size() == 1 ? expr : emit(expr);
  }

  std::string stack(const spec::Node& n, const Index& at) {
    const auto d = static_cast<size_t>(dim_of(int_attr(n, "dim", 0), n.shape.size()));
    const std::string x = at.dims[d];
    const auto& items = n.args[0].items;
    std::vector<std::string> vals;
    for (size_t j = 0; j < items.size(); ++j) {
      Index src = at;
      src.linear = false;
      src.dims.erase(src.dims.begin() + static_cast<std::ptrdiff_t>(d));
      src.guard =
          conj(at.guard, items.size() == 1 ? "" : x + " == " + num(static_cast<std::int64_t>(j)));
      vals.push_back(value(items[j].node, src));
    }
    std::string expr = vals.back();
    for (size_t j = vals.size() - 1; j-- > 0;)
      expr = "(" + x + " == " + num(static_cast<std::int64_t>(j)) + ") ? " + vals[j] + " : " + expr;
    return vals.size() == 1 ? expr : emit(expr);
  }

  // An index variable that is a digit of i: (i / stride) % size (no modulo when outer).
  struct Origin {
    std::int64_t stride = 1, size = 1;
    bool outer = false;
  };

  const spec::Spec& s_;
  const OpTable& ops_;
  const std::map<std::string, std::string>& ptr_;
  IndexProgram prog_;
  std::map<std::string, Origin> origin_;
  bool integer_ = false;  // the value being computed is an int64 (value() sets it per value)
  std::map<std::string, std::string> memo_;
  std::map<std::string, std::map<std::string, std::string>> by_context_;
  std::map<std::string, std::string> index_vars_;
  int vars_ = 0;
};

}  // namespace

bool is_layout_op(const std::string& op) { return layout_ops().count(op) > 0; }

std::string full_value(const std::string& var) { return "egg_e_" + var; }
std::string full_type(const IndexRead& r) { return r.integer ? "long long" : "float"; }
std::string full_load(const IndexRead& r) {
  return r.integer ? "static_cast<long long>" : "egg_to_float";
}

std::optional<UserError> index_ir_check(const spec::Spec& s, const spec::Node& n,
                                        const OpTable& ops) {
  if (ops.knows(n.op) || !is_layout_op(n.op)) {
    // Integer values are int64 in the kernels, computed by the ops with an integer form.
    if (integer_dtype(n.dtype) && ops.knows(n.op) && !ops.has_integer_form(n))
      return UserError(n.where,
                       quote(n) + " computes " + spec::dtype_name(n.dtype) +
                           "; the builtin kernels compute integers with add, sub, mul, floor or "
                           "truncating division, remainder, minimum, maximum, clamp, abs, neg, "
                           "sign, bitwise and logical ops, shifts, where, comparisons and casts "
                           "only",
                       "compute it in float (.float())");
    return ops.check(s, n);
  }
  for (const auto& a : n.args)
    if (a.kind == spec::Arg::Kind::node && !s.shape_of(a.node))
      return UserError(n.where, quote(n) + " reads `" + a.node +
                                    "`, which is not an input, "
                                    "parameter or earlier op");
  const bool lists = n.op == "cat" || n.op == "stack";
  const bool reads_value = !n.args.empty() && (lists ? n.args[0].kind == spec::Arg::Kind::list
                                                     : n.args[0].kind == spec::Arg::Kind::node);
  if (n.op == "arange") {
    const bool integral = n.dtype == spec::DType::int64 || n.dtype == spec::DType::int32;
    if (n.shape.size() != 1 || (integral && n.shape[0] > (std::int64_t{1} << 24)))
      return UserError(n.where, quote(n) +
                                    ": the builtin backend computes an arange of one dim "
                                    "and, for integers, of at most 2^24 elements");
    return std::nullopt;
  }
  if (n.op == "dropout") {
    const auto p = n.attrs.find("p");
    const auto stream = n.attrs.find("stream");
    const bool rng = n.args.size() == 2 && n.args[1].kind == spec::Arg::Kind::node &&
                     s.find_tensor(n.args[1].node) && s.find_tensor(n.args[1].node)->kind == "rng";
    if (!reads_value || !rng || p == n.attrs.end() || !p->is_number() || p->get<double>() < 0.0 ||
        p->get<double>() > 1.0 || stream == n.attrs.end() || !stream->is_number_integer() ||
        stream->get<std::int64_t>() < 0 || stream->get<std::int64_t>() > INT_MAX)
      return UserError(n.where, quote(n) +
                                    ": the builtin backend expected dropout(x, egg_rng) with p in "
                                    "[0, 1] and a stream number (spec schema 2, docs/SPEC.md)");
    return std::nullopt;
  }
  if (n.op != "full" && !reads_value)
    return UserError(n.where, quote(n) + ": the builtin backend expected a tensor operand here");
  if (lists)
    for (const auto& item : n.args[0].items)
      if (item.kind != spec::Arg::Kind::node)
        return UserError(n.where, quote(n) + " of a non-tensor item is not supported");
  if ((reshapes().count(n.op) || n.op == "permute" || n.op == "transpose" || n.op == "flip" ||
       n.op == "triu" || n.op == "tril")) {
    const spec::Shape& in = *s.shape_of(n.args[0].node);
    if (spec::numel(in) != spec::numel(n.shape))
      return UserError(n.where, quote(n) + " changes the element count (" + spec::shape_string(in) +
                                    " to " + spec::shape_string(n.shape) + ")");
    if ((n.op == "triu" || n.op == "tril") && n.shape.size() < 2)
      return UserError(n.where, quote(n) + " needs a tensor of two or more dims");
  }
  if (n.op == "expand") {
    if (!broadcasts_to(*s.shape_of(n.args[0].node), n.shape))
      return UserError(
          n.where, quote(n) + " does not broadcast its operand to " + spec::shape_string(n.shape));
  }
  try {
    if (n.op == "pad" && int_list(n, "pad").size() % 2 != 0)
      return UserError(n.where, quote(n) + ": the pad widths are not (before, after) pairs");
    if (n.op == "pad") {
      const std::string mode = n.attrs.value("mode", std::string("constant"));
      const auto widths = int_list(n, "pad");
      const spec::Shape& src = *s.shape_of(n.args[0].node);
      if (mode != "constant" && mode != "reflect" && mode != "replicate" && mode != "circular")
        return UserError(n.where, quote(n) + ": pad mode " + mode + " is not supported");
      for (size_t j = 0; mode != "constant" && 2 * j + 1 < widths.size() && j < src.size(); ++j) {
        const std::int64_t size = src[src.size() - 1 - j];
        const std::int64_t most = mode == "reflect"    ? size - 1
                                  : mode == "circular" ? size
                                                       : INT64_MAX;
        if (std::min(widths[2 * j], widths[2 * j + 1]) < 0 ||
            std::max(widths[2 * j], widths[2 * j + 1]) > most)
          return UserError(n.where, quote(n) + ": a " + mode + " pad must be non-negative" +
                                        (mode == "replicate" ? "" : " and below the dim's size"));
      }
    }
    if (n.op == "gather") {
      const bool has_index = n.args.size() > 1 && n.args[1].kind == spec::Arg::Kind::node;
      const spec::Shape* is = has_index ? s.shape_of(n.args[1].node) : nullptr;
      if (!is)
        return UserError(n.where, quote(n) + ": the builtin backend expected an index tensor");
      const spec::DType t = *s.dtype_of(n.args[1].node);
      if (t != spec::DType::int64 && t != spec::DType::int32)
        return UserError(n.where, quote(n) + ": the indices are " + spec::dtype_name(t) +
                                      ", not int64 or int32");
      const spec::Shape& src = *s.shape_of(n.args[0].node);
      const auto d = dim_of(int_attr(n, "dim", 0), src.size());
      if (*is != n.shape || is->size() != src.size() || d < 0 ||
          d >= static_cast<std::int64_t>(src.size()))
        return UserError(n.where, quote(n) + ": index " + spec::shape_string(*is) +
                                      " does not match the gathered " + spec::shape_string(src));
      if (src[static_cast<size_t>(d)] > (std::int64_t{1} << 24))
        return UserError(n.where, quote(n) + " gathers from a dim of more than 2^24 elements");
    }
    if (n.op == "index_select" || n.op == "embedding") {
      const bool indices = n.args.size() > 1 && n.args[1].kind == spec::Arg::Kind::node;
      const spec::Shape* index_shape = indices ? s.shape_of(n.args[1].node) : nullptr;
      if (!index_shape)
        return UserError(n.where, quote(n) + ": the builtin backend expected a tensor of indices");
      const spec::DType t = *s.dtype_of(n.args[1].node);
      const spec::Shape& is = *index_shape;
      if (t != spec::DType::int64 && t != spec::DType::int32)
        return UserError(n.where, quote(n) + ": the indices are " + spec::dtype_name(t) +
                                      ", not int64 or int32");
      const spec::Shape& src = *s.shape_of(n.args[0].node);
      const size_t d =
          n.op == "embedding" ? 0 : static_cast<size_t>(dim_of(int_attr(n, "dim", 0), src.size()));
      if ((n.op == "embedding" && src.size() != 2) || (n.op == "index_select" && is.size() > 1))
        return UserError(n.where, quote(n) +
                                      ": the builtin backend gathers rows of a 2-D "
                                      "weight (embedding) or along one dim by a 1-D index");
      // Indices travel through the kernel as float: exact below 2^24, and a valid index is below
      // the gathered dim's size.
      if (d >= src.size() || src[d] > (std::int64_t{1} << 24))
        return UserError(n.where, quote(n) + " gathers from a dim of more than 2^24 elements");
    }
    if (n.op == "upsample_cubic" && n.shape.size() != 4)
      return UserError(n.where, quote(n) +
                                    ": bicubic upsampling is of the 2 spatial dims of an "
                                    "(N, C, H, W) tensor");
    if (n.op == "upsample_nearest" || n.op == "upsample_linear" || n.op == "upsample_cubic") {
      const spec::Shape& src = *s.shape_of(n.args[0].node);
      if (src.size() < 3 || src.size() > 5 || src.size() != n.shape.size() ||
          src[0] != n.shape[0] || src[1] != n.shape[1])
        return UserError(n.where, quote(n) +
                                      ": the builtin backend upsamples the 1 to 3 spatial "
                                      "dims after (N, C), from " +
                                      spec::shape_string(src) + " to " +
                                      spec::shape_string(n.shape));
      for (size_t d = 2; d < src.size(); ++d)
        if (src[d] < 1 || n.shape[d] > (std::int64_t{1} << 24))
          return UserError(n.where, quote(n) + " upsamples a dim to more than 2^24 elements");
    }
    if (n.op == "repeat") {
      const spec::Shape& src = *s.shape_of(n.args[0].node);
      const auto reps = int_list(n, "repeats");
      bool fits = reps.size() == n.shape.size() && reps.size() >= src.size();
      for (size_t k = 0; fits && k < src.size(); ++k)
        fits = n.shape[reps.size() - src.size() + k] == src[k] * reps[reps.size() - src.size() + k];
      if (!fits)
        return UserError(n.where, quote(n) + ": the repeats do not give " +
                                      spec::shape_string(n.shape) + " from " +
                                      spec::shape_string(src));
    }
    if (n.op == "index") {
      const spec::Shape& src = *s.shape_of(n.args[0].node);
      bool any = false;
      const bool list = n.args.size() == 2 && n.args[1].kind == spec::Arg::Kind::list &&
                        n.args[1].items.size() <= src.size();
      for (size_t d = 0; list && d < n.args[1].items.size(); ++d) {
        const auto& item = n.args[1].items[d];
        if (item.kind == spec::Arg::Kind::none) continue;
        const std::optional<spec::DType> t = item.kind == spec::Arg::Kind::node
                                                 ? s.dtype_of(item.node)
                                                 : std::optional<spec::DType>();
        if (!t) return UserError(n.where, quote(n) + ": an index is neither a tensor nor None");
        if (*t == spec::DType::boolean || *t == spec::DType::uint8)
          return UserError(n.where,
                           quote(n) +
                               " indexes by a boolean mask, whose result's size depends "
                               "on the mask's values",
                           "use torch.where(mask, x, 0) (or masked_fill) to keep the shape");
        if (*t != spec::DType::int64 && *t != spec::DType::int32)
          return UserError(n.where, quote(n) + ": an index tensor is " + spec::dtype_name(*t) +
                                        ", not int64 or int32");
        if (src[d] > (std::int64_t{1} << 24))
          return UserError(n.where, quote(n) + " indexes a dim of more than 2^24 elements");
        any = true;
      }
      if (!list || !any)
        return UserError(n.where, quote(n) +
                                      ": the builtin backend expected a list of index "
                                      "tensors (or None) for the tensor's dims");
    }
    if (n.op == "diagonal") {
      const spec::Shape& src = *s.shape_of(n.args[0].node);
      const auto d1 = dim_of(int_attr(n, "dim1", 0), src.size());
      const auto d2 = dim_of(int_attr(n, "dim2", 1), src.size());
      const auto rank = static_cast<std::int64_t>(src.size());
      if (d1 < 0 || d2 < 0 || d1 >= rank || d2 >= rank || d1 == d2 ||
          n.shape.size() + 1 != src.size() || n.shape.empty())
        return UserError(n.where, quote(n) +
                                      ": the builtin backend takes the diagonal of two "
                                      "different dims of a tensor");
    }
    if (n.op == "unfold" && (int_attr(n, "step", 1) < 1 || n.shape.empty()))
      return UserError(n.where, quote(n) + ": an unfold step below 1 is not supported");
    if (n.op == "slice" && int_attr(n, "step", 1) < 1)
      return UserError(n.where, quote(n) + ": a slice step below 1 is not supported",
                       "use torch.flip for a reversed slice");
    if (n.op == "split")
      for (const auto& m : s.nodes)
        for (const auto& r : node_args(m))
          if (r == n.name && m.op != "getitem")
            return UserError(
                m.where,
                quote(m) + " reads the pieces of " + quote(n) + " other than one at a time",
                "index the pieces (a, b = x.split(...))");
    if (n.op == "getitem") {
      const spec::Node* src = s.find_node(n.args[0].node);
      if (!src || src->op != "split" || n.args.size() < 2 ||
          n.args[1].kind != spec::Arg::Kind::scalar)
        return UserError(n.where, quote(n) +
                                      ": the builtin element-wise kernels take an item of "
                                      "a split or chunk only");
    }
    (void)int_list(n, "dims");
  } catch (const std::exception&) {
    return UserError(n.where, quote(n) + " has an attribute the builtin backend cannot read");
  }
  for (const auto& o : s.outputs)
    if (o.node == n.name && n.op == "split")
      return UserError(n.where, quote(n) + ": return its pieces, not the tuple");
  return std::nullopt;
}

IndexProgram build_index_program(const spec::Spec& s, const OpTable& ops,
                                 const std::map<std::string, std::string>& ptr_var) {
  for (const auto& n : s.nodes)
    if (auto e = index_ir_check(s, n, ops)) throw *e;
  return Builder(s, ops, ptr_var).run();
}

}  // namespace egg::backend::builtin
