#include "backend/builtin/sort.h"
#include "backend/builtin/gpu_target.h"

#include <algorithm>

#include "backend/builtin/plan_util.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

// Rows up to this padded length fit the block's shared memory (a float key and an int index per
// element: 128 KiB, within the 227 KiB an sm_90 block may opt into).
constexpr std::int64_t kMaxPadded = 16384;

bool flag(const json& attrs, const char* key, bool fallback) {
  const auto it = attrs.find(key);
  return it != attrs.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

bool valid(const SortPlan& plan, const SortParams& p) {
  // At most a thread per compare-exchange of a stage (half the padded row), but a whole warp.
  return p.block >= 32 && p.block <= 1024 && p.block % 32 == 0 &&
         p.block <= std::max<std::int64_t>(32, plan.padded() / 2);
}

}  // namespace

std::int64_t SortPlan::padded() const { return std::max<std::int64_t>(2, next_pow2(len)); }

namespace {

// The one topk, sort, kthvalue or median of the graph.
std::variant<const spec::Node*, UserError> sort_anchor(const spec::Spec& s) {
  const spec::Node* anchor = nullptr;
  for (const auto& n : s.nodes) {
    if (n.op != "topk" && n.op != "sort" && n.op != "kthvalue" && n.op != "median") continue;
    if (anchor)
      return UserError(n.where, quote(n) + " is a second sort after `" + anchor->target + "`" +
                                    at_line(*anchor) +
                                    "; the builtin sort family runs one per kernel");
    anchor = &n;
  }
  if (!anchor)
    return UserError({s.op_file, 0, "output"},
                     "the graph has no topk, sort, kthvalue or median (the sort family's anchor)");
  return anchor;
}

// The sorted tensor, a float type the kernel reads, and its rows: the dims before the sorted one
// (outer), the sorted dim (len) and those after (inner); the whole tensor for torch.median(x).
std::optional<UserError> sort_input(const spec::Spec& s, SortPlan& plan, bool whole) {
  const spec::Node& an = *plan.anchor;
  const spec::Tensor* in = an.args.empty() || an.args[0].kind != spec::Arg::Kind::node
                               ? nullptr
                               : s.find_tensor(an.args[0].node);
  if (!in)
    return UserError(an.where, quote(an) +
                                   ": the builtin sort family sorts a tensor the kernel "
                                   "reads (its producer runs as a kernel of its own)");
  if (!float_storage(in->dtype))
    return UserError(an.where,
                     quote(an) + " sorts " + spec::dtype_name(in->dtype) +
                         "; the builtin sort family sorts float32, float16 and bfloat16",
                     "convert the tensor to a floating type first");
  plan.input = in->name;
  const auto rank = static_cast<std::int64_t>(in->shape.size());
  std::int64_t dim = whole ? 0 : an.attrs.value("dim", std::int64_t{-1});
  if (dim < 0) dim += std::max<std::int64_t>(rank, 1);
  if (dim < 0 || dim >= std::max<std::int64_t>(rank, 1))
    return UserError(an.where, quote(an) + ": dim " + an.attrs.value("dim", json()).dump() +
                                   " is outside the tensor's " + std::to_string(rank) + " dims");
  for (std::int64_t d = 0; d < rank; ++d) {
    const std::int64_t size = in->shape[static_cast<size_t>(d)];
    if (whole) {
      plan.len *= size;
      continue;
    }
    if (d < dim) plan.outer *= size;
    if (d == dim) plan.len = size;
    if (d > dim) plan.inner *= size;
  }
  return std::nullopt;
}

// The elements a row keeps: all (sort), k (topk), or the one at `first` (kthvalue, median);
// rows that fit the block's shared memory.
std::optional<UserError> sort_selection(SortPlan& plan) {
  const spec::Node& an = *plan.anchor;
  plan.k = an.op == "sort" ? plan.len : 1;
  if (an.op == "median") plan.first = (plan.len - 1) / 2;
  if (an.op == "kthvalue") {
    const auto k = an.attrs.find("k");
    if (k == an.attrs.end() || !k->is_number_integer() || k->get<std::int64_t>() < 1 ||
        k->get<std::int64_t>() > plan.len)
      return UserError(
          an.where, quote(an) + ": k must be an integer in [1, " + std::to_string(plan.len) + "]");
    plan.first = k->get<std::int64_t>() - 1;
  }
  if (an.op == "topk") {
    const auto k = an.attrs.find("k");
    if (k == an.attrs.end() || !k->is_number_integer() || k->get<std::int64_t>() < 0 ||
        k->get<std::int64_t>() > plan.len)
      return UserError(
          an.where, quote(an) + ": k must be an integer in [0, " + std::to_string(plan.len) + "]");
    plan.k = k->get<std::int64_t>();
  }
  if (plan.len == 0 || plan.rows() == 0 || plan.k == 0)
    return UserError(an.where, quote(an) + " of an empty tensor is not supported");
  if (plan.padded() > kMaxPadded)
    return UserError(an.where,
                     quote(an) + " sorts rows of " + std::to_string(plan.len) +
                         " elements; the builtin sort family keeps a row in shared memory, up to " +
                         std::to_string(kMaxPadded),
                     "sort shorter rows (reshape the dim into several), or generate the kernel "
                     "with an LLM backend");
  return std::nullopt;
}

// The (values, indices) pair is read through getitem nodes; nothing else fuses.
std::optional<UserError> sort_outputs(const spec::Spec& s, SortPlan& plan, bool whole) {
  const spec::Node& an = *plan.anchor;
  for (const auto& n : s.nodes) {
    if (&n == &an) continue;
    const bool item = n.op == "getitem" && n.args.size() == 2 &&
                      n.args[0].kind == spec::Arg::Kind::node && n.args[0].node == an.name &&
                      n.args[1].kind == spec::Arg::Kind::scalar;
    if (!item)
      return UserError(n.where, quote(n) +
                                    ": the builtin sort family writes the values and "
                                    "indices of " +
                                    quote(an) +
                                    " as they are; other ops run as kernels of their own");
    (n.args[1].scalar == 0 ? plan.values : plan.indices).push_back(n.name);
  }
  for (const auto& o : s.outputs) {
    if (o.node != an.name) continue;
    if (whole) {
      plan.values.push_back(an.name);  // torch.median(x): one value, no indices
      continue;
    }
    return UserError(an.where, quote(an) + " is returned as a tuple",
                     "return its values and indices (v, i = torch.topk(...); return v, i)");
  }
  return std::nullopt;
}

}  // namespace

std::variant<SortPlan, UserError> plan_sort(const spec::Spec& s) {
  const auto anchor = sort_anchor(s);
  if (const auto* e = std::get_if<UserError>(&anchor)) return *e;
  SortPlan plan;
  plan.anchor = std::get<const spec::Node*>(anchor);
  const spec::Node& an = *plan.anchor;
  plan.op = an.op;
  plan.descending = an.op == "topk"   ? flag(an.attrs, "largest", true)
                    : an.op == "sort" ? flag(an.attrs, "descending", false)
                                      : false;
  // PyTorch's NaN is the largest value; the median is NaN where its row has one (found first).
  plan.nan_first = plan.descending || an.op == "median";
  const bool whole = an.op == "median" && an.attrs.value("dim", json()).is_null();
  if (auto e = sort_input(s, plan, whole)) return *e;
  if (auto e = sort_selection(plan)) return *e;
  if (auto e = sort_outputs(s, plan, whole)) return *e;
  return plan;
}

json SortParams::to_json() const { return {{"block", block}}; }

SortParams SortParams::from_json(const json& j) {
  SortParams p;
  p.block = j.value("block", p.block);
  return p;
}

SortFamily::SortFamily(const std::filesystem::path& data_dir)
    : ops_(data_dir),
      kernel_(render::load_template(data_dir, "sort/kernel.cuh.tmpl")),
      launch_(render::load_template(data_dir, "sort/launch.tmpl")) {}

std::vector<std::pair<std::string, std::string>> SortFamily::key_inputs() const {
  auto inputs = ops_.key_inputs();
  inputs.push_back({kernel_.name, kernel_.text});
  inputs.push_back({launch_.name, launch_.text});
  return inputs;
}

std::variant<SortPlan, UserError> SortFamily::analyze(const spec::Spec& s) const {
  return plan_sort(s);
}

Candidate SortFamily::render(const spec::Spec& s, const contract::Contract& c, const SortPlan& plan,
                             const SortParams& p) const {
  const std::string fn = "egg_" + c.name;
  json args = json::array(), ins = json::array(), outs = json::array();
  int slot = 0;
  for (const auto& a : c.args)
    if (a.role != contract::Role::output && a.source == plan.input) {
      ins.push_back(host_input(c, a));
      args.push_back(a.var);
    }
  for (const auto& o : s.outputs) {
    const contract::LaunchArg* arg = nullptr;
    for (const auto& a : c.args)
      if (a.role == contract::Role::output && a.tensor_name == o.name) arg = &a;
    if (!arg) throw InternalError("sort family: output " + o.name + " is not in the contract");
    const bool index =
        std::find(plan.indices.begin(), plan.indices.end(), o.node) != plan.indices.end();
    outs.push_back({{"ptr", arg->var},
                    {"ctype", contract::c_type(arg->dtype)},
                    {"slot", slot++},
                    {"index", index}});
    args.push_back(arg->var);
  }
  if (ins.size() != 1) throw InternalError("sort family: the sorted tensor is not in the contract");
  const std::int64_t padded = plan.padded();
  const std::int64_t smem = padded * 8;
  const std::int64_t grid = std::min<std::int64_t>(plan.rows(), kSms * 16);
  const std::string order = plan.descending ? "largest first" : "smallest first";
  const std::string structure =
      "a block of " + std::to_string(p.block) + " threads per row of " + std::to_string(plan.len) +
      (plan.inner > 1 ? " (stride " + std::to_string(plan.inner) + ")" : "") +
      ", bitonic network over " + std::to_string(padded) + " keys in shared memory, " + order +
      ", " +
      (plan.op == "topk"       ? "the first " + std::to_string(plan.k)
       : plan.op == "sort"     ? std::string("all")
       : plan.op == "kthvalue" ? "the " + std::to_string(plan.first + 1) + "-th smallest"
                               : std::string("the lower middle one (a NaN if any)")) +
      " written";
  const json ctx = {{"fn", fn},
                    {"helpers", ops_.helpers()},
                    {"summary", quote(*plan.anchor) + " over " + std::to_string(plan.rows()) +
                                    " rows of " + std::to_string(plan.len)},
                    {"structure", structure},
                    {"in", ins[0]},
                    {"outs", outs},
                    {"args", args},
                    {"descending", plan.descending},
                    {"nan_first", plan.nan_first},
                    {"first", plan.first},
                    {"median", plan.op == "median"},
                    {"padded", padded},
                    {"len", plan.len},
                    {"inner", plan.inner},
                    {"k", plan.k},
                    {"rows", plan.rows()},
                    {"block", p.block},
                    {"grid", grid},
                    {"smem", smem},
                    {"big_smem", smem > 48 * 1024}};
  Candidate cand;
  cand.id = "sort.bitonic:b" + std::to_string(p.block) + ":p" + std::to_string(padded);
  cand.summary = plan.anchor->target + ": " + structure;
  cand.params = p.to_json();
  cand.code.device_code = render::render(kernel_.text, ctx, kernel_.name);
  cand.code.launch_body = render::render(launch_.text, ctx, launch_.name);
  return cand;
}

std::vector<SortParams> SortFamily::structure_params(const spec::Spec&, const contract::Contract&,
                                                     const SortPlan& plan) const {
  // A thread per compare-exchange of a stage, up to 1024 (half the padded row); 256 as the
  // second structure for long rows.
  std::vector<SortParams> out;
  for (std::int64_t b :
       {std::clamp<std::int64_t>(plan.padded() / 2, 32, 1024), std::int64_t{256}}) {
    SortParams p;
    p.block = static_cast<int>(b);
    if (valid(plan, p) && (out.empty() || out.back().block != p.block)) out.push_back(p);
  }
  return out;
}

std::vector<SortParams> SortFamily::tuning_params(const spec::Spec&, const contract::Contract&,
                                                  const SortPlan& plan, const SortParams& incumbent,
                                                  const std::string&) const {
  std::vector<SortParams> out = {incumbent};
  for (int b : {128, 512, 1024}) {
    SortParams p;
    p.block = b;
    if (valid(plan, p) && p.block != incumbent.block) out.push_back(p);
  }
  return out;
}

std::optional<SortParams> SortFamily::fallback_params(const spec::Spec&, const contract::Contract&,
                                                      const SortPlan&, const SortParams&) const {
  SortParams p;
  p.block = 32;  // the fewest threads: every stage loops over its pairs
  return p;
}

}  // namespace egg::backend::builtin
