// Graph analysis of the reduction family: finds the one anchor, its prologue and epilogue, the
// reduced dims and the mode, or the reason (op and line) the family cannot implement the spec.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "backend/builtin/index_ir.h"
#include "backend/builtin/plan_util.h"
#include "backend/builtin/reduction.h"

namespace egg::backend::builtin {
namespace {

using spec::Shape;

// The order p of a vector norm: a number (inf and -inf arrive as +-DBL_MAX)
// or 'fro' (torch.norm's default: 2 over the reduced dims); anything else is an error.
std::variant<double, UserError> norm_order(const spec::Node& n) {
  const char* key = n.op == "vector_norm" ? "ord" : "p";
  const nlohmann::json p = n.attrs.value(key, nlohmann::json(n.op == "norm" ? "fro" : "2"));
  if (p.is_number()) {  // the frontend writes inf as +-DBL_MAX (JSON has no inf)
    const double v = p.get<double>();
    if (std::fabs(v) >= std::numeric_limits<double>::max())
      return std::copysign(std::numeric_limits<double>::infinity(), v);
    return v;
  }
  if (p.is_string()) {
    const std::string v = p.get<std::string>();
    if (v == "fro" || v == "2") return 2.0;
    if (v == "inf" || v == "Infinity") return std::numeric_limits<double>::infinity();
    if (v == "-inf" || v == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  return UserError(n.where,
                   quote(n) + " with " + key + "=" + p.dump() +
                       " is not supported by the builtin backend (vector norms only)",
                   "use a numeric order (2, 1, inf, -inf, 0 or any p), or 'fro'");
}
// The reduced dims of the anchor (sorted, non-negative), or an error.
std::variant<std::vector<int>, UserError> reduced_dims(const spec::Node& n,
                                                       const ReductionAnchor& entry, size_t rank) {
  const nlohmann::json dim = n.attrs.contains("dim") ? n.attrs["dim"] : nlohmann::json();
  std::vector<int> dims;
  const bool all = dim.is_null() || (dim.is_array() && dim.empty());
  if (all) {
    if (entry.mode != ReductionMode::reduce)
      return UserError(n.where, quote(n) + " needs an explicit dim for the builtin backend",
                       "pass dim=-1 (or the dim you mean)");
    for (size_t d = 0; d < rank; ++d) dims.push_back(static_cast<int>(d));
    return dims;
  }
  std::vector<nlohmann::json> items;
  if (dim.is_array())
    items.assign(dim.begin(), dim.end());
  else
    items.push_back(dim);
  for (const auto& d : items) {
    if (!d.is_number_integer())
      return UserError(n.where, quote(n) + " has dim " + dim.dump() +
                                    "; the builtin backend needs integer dims");
    std::int64_t v = d.get<std::int64_t>();
    const std::int64_t r = std::max<std::int64_t>(static_cast<std::int64_t>(rank), 1);
    if (v < 0) v += r;
    if (v < 0 || v >= r)
      return UserError(n.where, quote(n) + " has dim " + dim.dump() + " out of range");
    if (rank > 0) dims.push_back(static_cast<int>(v));
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  for (size_t k = 1; k < dims.size(); ++k)
    if (dims[k] != dims[k - 1] + 1)
      return UserError(n.where,
                       quote(n) + " reduces over dims " + dim.dump() +
                           " that are not adjacent; the builtin reduction family reduces one run "
                           "of adjacent dims",
                       "permute the input so the reduced dims are adjacent, or reduce in two ops "
                       "in two op.py files");
  return dims;
}

// The extent along the scanned dim of a value of this shape (right-aligned broadcasting against
// the anchor's input); 1 when the plan is not a scan.
std::int64_t scan_extent(const Shape& shape, const ReductionPlan& plan) {
  if (plan.scan_dim < 0) return 1;
  const auto k = static_cast<std::int64_t>(shape.size()) -
                 static_cast<std::int64_t>(plan.in_shape.size()) + plan.scan_dim;
  return k >= 0 && k < static_cast<std::int64_t>(shape.size()) ? shape[static_cast<size_t>(k)] : 1;
}

// A torch.flip fuses only along the scanned dim of a scan, on a value of the input's shape.
std::optional<UserError> check_flip(const spec::Node& n, const ReductionPlan& plan) {
  const std::string hint =
      "compute the flip in a separate op.py, or flip only along the scanned dim";
  if (plan.mode != ReductionPlan::Mode::scan || plan.scan_dim < 0)
    return UserError(
        n.where,
        quote(n) +
            ": the builtin reduction family fuses torch.flip only around cumsum/cumprod "
            "along the scanned dim (a reverse scan), not around `" +
            plan.anchor->target + "`",
        hint);
  if (node_args(n).size() != 1 || n.shape != plan.in_shape)
    return UserError(
        n.where,
        quote(n) + " flips a value of shape " + spec::shape_string(n.shape) +
            "; the builtin reduction family fuses a flip only of a value of the scan's shape " +
            spec::shape_string(plan.in_shape),
        hint);
  nlohmann::json dims = n.attrs.contains("dims") ? n.attrs["dims"] : nlohmann::json();
  if (dims.is_number_integer()) dims = nlohmann::json::array({dims});
  bool scanned = false;
  const auto rank = static_cast<std::int64_t>(n.shape.size());
  for (const auto& d : dims.is_array() ? dims : nlohmann::json::array()) {
    if (!d.is_number_integer())
      return UserError(n.where, quote(n) + " has dims " + dims.dump() +
                                    "; the builtin backend needs integer dims");
    std::int64_t v = d.get<std::int64_t>();
    if (v < 0) v += rank;
    if (v < 0 || v >= rank)
      return UserError(n.where, quote(n) + " has dims " + dims.dump() + " out of range");
    if (v == plan.scan_dim)
      scanned = true;
    else if (n.shape[static_cast<size_t>(v)] != 1)
      return UserError(n.where,
                       quote(n) + " flips dim " + std::to_string(v) +
                           ", but the scan runs along dim " + std::to_string(plan.scan_dim) +
                           "; the builtin reduction family fuses a flip only "
                           "along the scanned dim",
                       hint);
  }
  if (!scanned)
    return UserError(n.where,
                     quote(n) + " with dims " + dims.dump() + " does not flip the scanned dim " +
                         std::to_string(plan.scan_dim),
                     hint);
  return std::nullopt;
}

}  // namespace

std::variant<ReductionPlan, UserError> plan_reduction(const spec::Spec& s, const OpTable& ops,
                                                      const ReductionOps& anchors) {
  const SourceLocation file_only{s.op_file, 0, "output"};
  ReductionPlan plan;
  const ReductionAnchor* entry = nullptr;
  for (const auto& n : s.nodes) {
    if (!anchors.anchor(n.op)) continue;
    if (plan.anchor)
      return UserError(n.where,
                       quote(n) + " is a second reduction/softmax/scan after `" +
                           plan.anchor->target + "`" + at_line(*plan.anchor) +
                           "; the builtin reduction family fuses exactly one",
                       "split the op into two op.py files (one reduction each)");
    plan.anchor = &n;
    entry = anchors.anchor(n.op);
  }
  if (!plan.anchor)
    return UserError(
        file_only,
        "the graph has no reduction, softmax or scan op (the reduction family's anchor)");
  const spec::Node& an = *plan.anchor;
  if (s.outputs.empty()) return UserError(file_only, "the op has no outputs");
  if (an.args.empty() || an.args[0].kind != spec::Arg::Kind::node)
    return UserError(an.where, quote(an) + " does not read a tensor");
  plan.input = an.args[0].node;
  if (const auto* t = s.find_tensor(plan.input))
    plan.in_shape = t->shape;
  else if (const auto* p = s.find_node(plan.input))
    plan.in_shape = p->shape;
  else
    return UserError(an.where,
                     "operand `" + plan.input + "` is not an input, parameter or earlier op");
  for (size_t k = 1; k < an.args.size(); ++k)
    if (an.args[k].kind == spec::Arg::Kind::node)
      return UserError(an.where,
                       quote(an) + " with a tensor option is not supported by the builtin backend");

  // Reduced dims → [outer, R, inner].
  auto dims_or = reduced_dims(an, *entry, plan.in_shape.size());
  if (auto* e = std::get_if<UserError>(&dims_or)) return *e;
  const auto dims = std::get<std::vector<int>>(dims_or);
  for (size_t d = 0; d < plan.in_shape.size(); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), static_cast<int>(d)) != dims.end();
    if (reduced)
      plan.R *= plan.in_shape[d];
    else if (dims.empty() || static_cast<int>(d) < dims.front())
      plan.outer *= plan.in_shape[d];
    else
      plan.inner *= plan.in_shape[d];
  }
  if (spec::numel(plan.in_shape) == 0)
    return UserError(an.where, quote(an) + " reads an empty tensor");
  if (entry->mode == ReductionMode::scan && dims.size() == 1) plan.scan_dim = dims.front();
  const bool keepdim = an.attrs.value("keepdim", false);

  // Mode, reducer and expressions (the table's).
  const std::string& op = an.op;
  const bool with_indices =
      !entry->with_indices.empty() && an.attrs.contains("dim") && !an.attrs["dim"].is_null();
  plan.mode = entry->mode;
  plan.reducer = with_indices ? entry->with_indices : entry->reducer;
  plan.in_expr = entry->in;
  std::string row = entry->row;
  double eps = 0.0;  // F.normalize's lower bound of the norm (x / max(norm, eps))
  if (entry->norm) {
    auto p_or = norm_order(an);
    if (auto* e = std::get_if<UserError>(&p_or)) return *e;
    const NormCase c = anchors.norm_case(std::get<double>(p_or));
    plan.in_expr = c.in;
    if (!c.row.empty()) row = c.row;
    if (!c.reducer.empty()) plan.reducer = c.reducer;
    if (op == "normalize") eps = an.attrs.value("eps", 1e-12);
  }
  const std::map<std::string, std::string> fields = {{"R", std::to_string(plan.R)}};
  plan.row_expr = fill_fields(row, fields);
  plan.element_expr =
      entry->element.empty()
          ? plan.row_expr
          : fill_fields(entry->element, {{"row", plan.row_expr}, {"eps", float_literal(eps)}});
  plan.element_exp_expr = entry->element_exp;
  plan.scan_op = entry->scan_op;
  plan.scan_identity = entry->scan_identity;
  plan.exclusive = entry->mode == ReductionMode::scan && an.attrs.value("exclusive", false);
  // An index below 2^31 is carried in 32 bits (two registers and a 64-bit compare fewer per step).
  if (plan.reducer.starts_with("EggRedArg") && plan.R < std::numeric_limits<std::int32_t>::max())
    plan.reducer += "32";
  // Integer and bool inputs (and results: sum(dtype=torch.int64)) are reduced exactly, as long
  // long values, where the table offers the op for them; their prologue is evaluated by index (the
  // index IR computes integers exactly).
  const std::optional<spec::DType> in_dtype = s.dtype_of(plan.input);
  auto integral = [](spec::DType d) {
    return d == spec::DType::int64 || d == spec::DType::int32 || d == spec::DType::boolean;
  };
  plan.integer = in_dtype && integral(*in_dtype) && entry->integer && integral(an.dtype);
  if (plan.integer) {
    plan.reducer += "I";
    plan.scan_op = entry->int_scan_op;
    plan.scan_identity = entry->int_scan_identity;
    plan.gather = true;
  }
  if (an.attrs.contains("dtype") && !an.attrs["dtype"].is_null() && !float_storage(an.dtype) &&
      !plan.integer)
    return UserError(an.where,
                     quote(an) + " with dtype " + spec::dtype_name(an.dtype) +
                         " is not supported by the builtin backend",
                     "accumulate in float32, float16 or bfloat16");
  if (entry->indices) plan.index_values.push_back(an.name);

  // Prologue: the anchor's ancestors.
  const std::set<std::string> pro = ancestors(s, {plan.input});
  auto check_leaf = [](const spec::Tensor& t, const Shape& shape, const spec::Node& at) {
    return check_leaf_tensor(t, shape, at, "the builtin reduction kernels read");
  };
  if (const auto* t = s.find_tensor(plan.input); t && !plan.integer)
    if (auto e = check_leaf(*t, plan.in_shape, an)) return *e;
  // Layout ops (slices, cat, views, ...) before a row scan: its input is evaluated by index at each
  // element (the index IR), so an exclusive scan's shifted input is no pass of its own.
  bool layout = false;
  for (const auto& n : s.nodes)
    layout =
        layout || (pro.count(n.name) && n.op != "flip" && !ops.knows(n.op) && is_layout_op(n.op));
  plan.gather = plan.gather || (layout && entry->mode == ReductionMode::scan && plan.inner == 1);
  for (const auto& n : s.nodes) {
    if (!pro.count(n.name)) continue;
    if (plan.gather) {
      if (auto e = index_ir_check(s, n, ops)) return *e;
      plan.prologue.push_back(&n);
      continue;
    }
    if (n.op == "flip") {
      if (auto e = check_flip(n, plan)) return *e;
    } else if (auto e = ops.check(s, n)) {
      return *e;
    }
    if (!broadcasts_to(n.shape, plan.in_shape))
      return UserError(n.where, quote(n) + " produces shape " + spec::shape_string(n.shape) +
                                    " that does not broadcast to the input of `" + an.target + "`");
    for (const auto& a : node_args(n))
      if (const auto* t = s.find_tensor(a))
        if (auto e = check_leaf(*t, plan.in_shape, n)) return *e;
    plan.prologue.push_back(&n);
  }

  // Directions along the scanned dim (torch.flip): the frame of a value that varies along it is 0
  // when it is known at logical position i of the scan and 1 when at R-1-i. The anchor's input is
  // in frame 0; a flip's operand is in the other frame than the flip; every tensor that varies
  // along the scanned dim must be read in one frame (in_rev).
  std::map<std::string, int> frame;
  auto shape_of = [&](const std::string& v) -> const Shape* {
    if (const auto* t = s.find_tensor(v)) return &t->shape;
    if (const auto* n = s.find_node(v)) return &n->shape;
    return nullptr;
  };
  auto varying = [&](const std::string& v) {
    const Shape* sh = shape_of(v);
    return sh && scan_extent(*sh, plan) > 1;
  };
  if (varying(plan.input) && !plan.gather) frame[plan.input] = 0;  // the IR reads flips by index
  for (auto it = s.nodes.rbegin(); it != s.nodes.rend(); ++it) {
    const spec::Node& n = *it;
    const auto f = frame.find(n.name);
    if (!pro.count(n.name) || f == frame.end()) continue;
    const int fa = f->second ^ (n.op == "flip" ? 1 : 0);
    for (const auto& a : node_args(n)) {
      if (!varying(a)) continue;
      const auto [at, inserted] = frame.emplace(a, fa);
      if (!inserted && at->second != fa)
        return UserError(n.where,
                         "`" + a + "` reaches " + quote(an) +
                             " both flipped and unflipped along the scanned dim " +
                             "(through torch.flip); the builtin reduction family reads each value "
                             "in one direction",
                         "flip every operand of the scan, or flip its input once");
    }
  }
  std::string first_leaf;
  for (const auto& [name, f] : frame) {
    if (!s.find_tensor(name)) continue;
    if (first_leaf.empty()) {
      first_leaf = name;
      plan.in_rev = f == 1;
    } else if ((f == 1) != plan.in_rev) {
      return UserError(
          an.where,
          "tensors " + first_leaf + " and " + name + " reach " + quote(an) +
              " in opposite directions along the scanned dim (one through torch.flip); the builtin "
              "reduction family reads every input of a scan in one direction",
          "flip the scan's input once (torch.flip(x * mask, [d]) rather than torch.flip(x, [d]) * "
          "mask)");
    }
  }

  // Outputs: one shape; that shape decides reduce (a value per row) or normalize (every element).
  plan.out_shape = s.outputs.front().shape;
  for (const auto& o : s.outputs)
    if (o.shape != plan.out_shape)
      return UserError(file_only,
                       "outputs have different shapes (" + spec::shape_string(plan.out_shape) +
                           " and " + spec::shape_string(o.shape) + ")",
                       "return outputs of one shape, or split the op into two op.py files");
  const std::int64_t out_numel = spec::numel(plan.out_shape);
  if (plan.mode == ReductionPlan::Mode::reduce && out_numel != plan.rows()) {
    if (out_numel == spec::numel(plan.in_shape) && plan.out_shape == plan.in_shape && keepdim &&
        !with_indices && op != "argmax" && op != "argmin")
      plan.mode = ReductionPlan::Mode::normalize;
    else
      return UserError(
          an.where,
          "the outputs have shape " + spec::shape_string(plan.out_shape) + ", but " + quote(an) +
              " makes " + std::to_string(plan.rows()) +
              " values; the builtin reduction family writes either one value per reduced row or, "
              "after a keepdim=True reduction, every element of the input shape",
          "use keepdim=True when the result is broadcast back over the input");
  }
  if (plan.mode != ReductionPlan::Mode::reduce && plan.out_shape != plan.in_shape)
    return UserError(an.where,
                     "the outputs have shape " + spec::shape_string(plan.out_shape) + ", but " +
                         quote(an) + " produces " + spec::shape_string(plan.in_shape),
                     "return a tensor of the input's shape");
  const Shape& epi_shape = plan.out_shape;

  // Epilogue: everything else, element-wise, evaluated per output element.
  const std::string after = "after " + quote(an) + at_line(an) + " only element-wise ops fuse";
  std::set<std::string> index_values(plan.index_values.begin(), plan.index_values.end());
  for (const auto& n : s.nodes) {
    if (&n == &an || pro.count(n.name)) continue;
    if (n.op == "getitem") {
      const bool on_anchor =
          !n.args.empty() && n.args[0].kind == spec::Arg::Kind::node && n.args[0].node == an.name;
      if (!on_anchor || !with_indices || n.args.size() < 2 ||
          n.args[1].kind != spec::Arg::Kind::scalar)
        return UserError(
            n.where,
            quote(n) + ": " + after +
                "; indexing fuses only as the (values, indices) result of max/min with a dim",
            "compute the indexing in a separate op.py");
      if (n.args[1].scalar == 0)
        plan.value_aliases.push_back(n.name);
      else {
        plan.index_values.push_back(n.name);
        index_values.insert(n.name);
      }
      continue;
    }
    if (plan.integer)
      return UserError(n.where,
                       quote(n) + " computes on the integer result of " + quote(an) + at_line(an) +
                           "; the builtin reduction family writes integer results as they are",
                       "the planner runs it as an element-wise kernel of its own; to fuse it, "
                       "reduce a floating-point tensor (x.float())");
    if (n.op == "flip") {
      if (auto e = check_flip(n, plan)) return *e;
    } else if (auto e = ops.check(s, n)) {
      return UserError(n.where, std::string(e->what()) + "; " + after, e->hint());
    }
    for (const auto& a : node_args(n)) {
      if (a == an.name && with_indices)
        return UserError(
            n.where, quote(n) + " reads the (values, indices) pair of " + quote(an) + " directly",
            "index it: torch.max(x, dim)[0] for the values");
      if (index_values.count(a))
        return UserError(n.where,
                         quote(n) + " computes on the indices of " + quote(an) +
                             "; the builtin reduction family writes indices only as they are",
                         "return the indices and compute on them in a separate op.py");
      if (plan.gather && pro.count(a) && a != plan.input)
        return UserError(n.where,
                         quote(n) + " reads `" + a + "`, a value " + quote(an) +
                             " reads through layout ops; the epilogue of a scan with such a "
                             "prologue reads the scan's input, its result and tensors",
                         "compute it from the tensors again, or split the op");
      if (plan.mode == ReductionPlan::Mode::reduce && (pro.count(a) || a == plan.input))
        return UserError(
            n.where,
            quote(n) + " reads `" + a + "` per element after " + quote(an) +
                " reduced it; the epilogue of a reduction sees one value per row",
            "use keepdim=True and return a tensor of the input's shape, or split the op");
      if (const auto* t = s.find_tensor(a))
        if (auto e = check_leaf(*t, epi_shape, n)) return *e;
    }
    if (!broadcasts_to(n.shape, epi_shape))
      return UserError(n.where, quote(n) + " produces shape " + spec::shape_string(n.shape) +
                                    " that does not broadcast to the output " +
                                    spec::shape_string(epi_shape));
    if (plan.mode == ReductionPlan::Mode::scan) {
      // The frame of each value this node reads (the anchor's: 0; a tensor's: in_rev); one for all.
      std::optional<int> fe;
      for (const auto& a : node_args(n)) {
        if (!varying(a)) continue;
        const auto f = frame.find(a);
        const int fa = a == an.name ? 0 : f != frame.end() ? f->second : plan.in_rev ? 1 : 0;
        if (fe && *fe != fa)
          return UserError(
              n.where,
              quote(n) +
                  " combines values in opposite directions along the scanned dim (one "
                  "through torch.flip); the builtin reduction family computes each output element "
                  "from values at one position",
              "flip the scan's result back before combining it with unflipped tensors");
        fe = fa;
      }
      if (fe && varying(n.name)) frame[n.name] = *fe ^ (n.op == "flip" ? 1 : 0);
    }
    plan.epilogue.push_back(&n);
  }
  // max/min with a dim whose indices nobody reads: the values alone, with the value reducer (the
  // same values, NaN included, without an index compared and carried per element).
  if (with_indices && plan.index_values.empty())
    plan.reducer = entry->reducer + (plan.integer ? "I" : "");
  if (plan.mode == ReductionPlan::Mode::scan) {
    std::optional<int> fo;
    for (const auto& o : s.outputs) {
      if (scan_extent(o.shape, plan) <= 1) continue;
      const auto f = frame.find(o.node);
      const int fv = o.node == an.name || f == frame.end() ? 0 : f->second;
      if (fo && *fo != fv)
        return UserError(
            file_only,
            "the outputs run in opposite directions along the scanned dim (one through torch.flip)",
            "return outputs flipped alike, or split the op into two op.py files");
      fo = fv;
    }
    plan.out_rev = fo.value_or(0) == 1;
  }
  std::set<std::string> epi;
  for (const auto* n : plan.epilogue) epi.insert(n->name);
  const std::set<std::string> aliases(plan.value_aliases.begin(), plan.value_aliases.end());
  for (const auto& o : s.outputs) {
    const bool is_index = index_values.count(o.node) > 0;
    const bool ok = is_index || aliases.count(o.node) || epi.count(o.node) ||
                    (o.node == an.name && !with_indices);
    if (!ok)
      return UserError(file_only,
                       "output " + o.name + " (`" + o.node + "`) is not computed from " + quote(an),
                       "return the reduction's result or element-wise ops of it");
    if (!is_index && !float_storage(o.dtype) && !plan.integer)
      return UserError(file_only,
                       "output " + o.name + " is " + spec::dtype_name(o.dtype) +
                           "; the builtin reduction kernels write float32, float16 or bfloat16 "
                           "values or int64 indices",
                       "return a floating-point tensor (e.g. .float())");
  }
  return plan;
}

}  // namespace egg::backend::builtin
