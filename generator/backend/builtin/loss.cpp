#include "backend/builtin/loss.h"
#include "backend/builtin/gpu_target.h"
#include "backend/builtin/plan_util.h"

#include <algorithm>
#include <map>
#include <set>

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

bool loss_params_valid(const LossPlan& plan, const LossParams& p) {
  if (p.block < 64 || p.block > 1024 || p.block % 32) return false;
  if (p.grid < 0 || p.blocks_per_sm < 1) return false;
  if (plan.gather) return p.tpr == 1;
  if (plan.rows && (p.tpr < 32 || p.tpr > p.block || p.block % p.tpr || (p.tpr & (p.tpr - 1))))
    return false;
  return true;
}

// Losses whose mean divides by the rows not ignored (their class weights' sum, for weighted nll).
bool counted_mean(const LossPlan& plan) {
  return plan.reduction == "mean" && (plan.kind == "cross_entropy" || plan.kind == "nll");
}

std::string divide_text(const LossPlan& plan) {
  if (plan.reduction == "sum") return "the sum";
  if (counted_mean(plan))
    return plan.weight.empty() ? "the sum over the rows not ignored"
                               : "the sum over the weights of the targets not ignored";
  return "the sum / " + std::to_string(static_cast<std::int64_t>(plan.divisor));
}

}  // namespace

json LossParams::to_json() const {
  return {{"block", block},
          {"tpr", tpr},
          {"grid", grid},
          {"blocks_per_sm", blocks_per_sm},
          {"vectorized", vectorized}};
}

LossFamily::LossFamily(const std::filesystem::path& data_dir)
    : ops_(data_dir),
      losses_table_(data_dir),
      losses_(render::load_template(data_dir, "loss/losses.cuh")),
      common_(render::load_template(data_dir, "loss/common.cuh.tmpl")),
      pointwise_(render::load_template(data_dir, "loss/pointwise.cuh.tmpl")),
      rows_(render::load_template(data_dir, "loss/rows.cuh.tmpl")),
      launch_(render::load_template(data_dir, "loss/launch.tmpl")) {}

std::vector<std::pair<std::string, std::string>> LossFamily::key_inputs() const {
  auto inputs = ops_.key_inputs();
  inputs.push_back(losses_table_.key_input());
  for (const auto* t : {&losses_, &common_, &pointwise_, &rows_, &launch_})
    inputs.push_back({t->name, t->text});
  return inputs;
}

std::variant<LossPlan, UserError> LossFamily::analyze(const spec::Spec& s) const {
  return plan_loss(s, ops_, losses_table_);
}

LossParams LossParams::from_json(const json& j) {
  LossParams p;
  p.block = j.value("block", p.block);
  p.tpr = j.value("tpr", p.tpr);
  p.grid = j.value("grid", p.grid);
  p.blocks_per_sm = j.value("blocks_per_sm", p.blocks_per_sm);
  p.vectorized = j.value("vectorized", p.vectorized);
  return p;
}

Candidate LossFamily::render(const spec::Spec& s, const contract::Contract& c, const LossPlan& plan,
                             const LossParams& p) const {
  const spec::Node& an = *plan.anchor;
  const std::string fn = "egg_" + c.name;
  const bool reduce = plan.reduction != "none";
  const std::int64_t elem_numel = spec::numel(plan.elem_shape),
                     out_numel = spec::numel(plan.out_shape);

  std::set<std::string> pro_leaves, epi_leaves;
  for (const auto& v : plan.operands)
    if (s.find_tensor(v)) pro_leaves.insert(v);
  add_tensor_leaves(s, plan.prologue, pro_leaves);
  add_tensor_leaves(s, plan.epilogue, epi_leaves);

  // Kernel parameters: every leaf once (launch() order), then the outputs.
  std::map<std::string, std::string> pro_value, epi_value;
  json params = json::array(), args = json::array(), full_leaves = json::array(),
       full_ptrs = json::array(), pro_args = json::array(), pro_loads = json::array(),
       epi_leaf_list = json::array(), epi_loads = json::array();
  int min_size = 16;
  for (const auto& a : c.args) {
    if (a.role == contract::Role::output) continue;
    const bool is_target = a.source == plan.target || a.source == plan.weight;
    if (!(pro_leaves.count(a.source) || epi_leaves.count(a.source) || is_target)) continue;
    const std::string ctype = contract::c_type(a.dtype);
    params.push_back({{"ptr", a.var}, {"ctype", ctype}, {"out", false}});
    args.push_back(a.var);
    if (pro_leaves.count(a.source)) {
      const bool full = spec::numel(a.shape) == elem_numel;
      const std::string v = "egg_a" + std::to_string(pro_args.size());
      const std::string off = full ? "egg_e" : broadcast_offset(a.shape, plan.elem_shape, "egg_e");
      const std::string sload = "egg_to_float(" + a.var + "[" + off + "])";
      pro_args.push_back({{"value", v}});
      pro_loads.push_back(
          {{"sload", sload}, {"vload", full ? "egg_to_float(" + a.var + "_v.v[egg_j])" : sload}});
      pro_value[a.source] = v;
      if (full) {
        full_leaves.push_back({{"ptr", a.var}, {"ctype", ctype}});
        full_ptrs.push_back(a.var);
        min_size = std::min(min_size, spec::dtype_size(a.dtype));
      }
    }
    if (epi_leaves.count(a.source)) {
      const std::string v = "egg_b" + std::to_string(epi_loads.size());
      const std::string off = spec::numel(a.shape) == out_numel
                                  ? "egg_o"
                                  : broadcast_offset(a.shape, plan.out_shape, "egg_o");
      epi_loads.push_back({{"value", v}, {"load", "egg_to_float(" + a.var + "[" + off + "])"}});
      epi_leaf_list.push_back({{"ptr", a.var}, {"ctype", ctype}});
      epi_value[a.source] = v;
    }
  }
  json pro_steps = json::array(), epi_steps = json::array(), operand_values = json::array();
  for (const auto* n : plan.prologue) {
    const std::string v = "egg_p" + std::to_string(pro_steps.size());
    pro_steps.push_back({{"value", v}, {"expr", ops_.expression(s, *n, pro_value)}});
    pro_value[n->name] = v;
  }
  for (size_t k = 0; k < plan.operands.size(); ++k)
    operand_values.push_back({{"k", k}, {"value", pro_value.at(plan.operands[k])}});
  epi_value[an.name] = "egg_r";
  for (const auto* n : plan.epilogue) {
    const std::string v = "egg_e" + std::to_string(epi_steps.size());
    epi_steps.push_back({{"value", v}, {"expr", ops_.expression(s, *n, epi_value)}});
    epi_value[n->name] = v;
  }
  json outs = json::array(), results = json::array();
  std::vector<int> out_sizes;  // bytes per element of each output
  for (const auto& o : s.outputs) {
    const contract::LaunchArg* arg = nullptr;
    for (const auto& a : c.args)
      if (a.role == contract::Role::output && a.tensor_name == o.name) arg = &a;
    if (!arg) throw InternalError("loss family: output " + o.name + " is not in the contract");
    const std::string ctype = contract::c_type(arg->dtype);
    outs.push_back({{"ptr", arg->var}, {"ctype", ctype}});
    out_sizes.push_back(spec::dtype_size(arg->dtype));
    params.push_back({{"ptr", arg->var}, {"ctype", ctype}, {"out", true}});
    results.push_back({{"ptr", arg->var}, {"ctype", ctype}, {"value", epi_value.at(o.node)}});
    args.push_back(arg->var);
  }

  // Layout: vector width, threads per row, a fixed grid (the partials' count is static).
  int vec = p.vectorized && !full_leaves.empty() ? 16 / min_size : 1;
  if (plan.gather || (plan.rows && plan.len % vec != 0)) vec = 1;
  // reduction='none': each output stored as whole 16-byte words per step when VEC of its elements
  // make whole words (then its pointer must be aligned too).
  bool vec_store = !reduce && !plan.rows && vec > 1;
  for (const int size : out_sizes)
    if (vec * size % 16 != 0) vec_store = false;
  if (vec_store)
    for (const auto& o : outs) full_ptrs.push_back(o.at("ptr"));
  const int tpr = plan.rows ? p.tpr : 1;
  const int groups = plan.rows ? p.block / tpr : 1;
  const std::int64_t work =
      plan.rows ? ceil_div(plan.n, groups) : ceil_div(ceil_div(plan.n, vec), p.block);
  const std::int64_t cap = static_cast<std::int64_t>(kSms) * p.blocks_per_sm;
  const std::int64_t grid = std::max<std::int64_t>(
      1, p.grid > 0 ? std::min<std::int64_t>(p.grid, work) : std::min(work, cap));
  const bool small =
      elem_numel + static_cast<std::int64_t>(grid) * p.block * 16 < (std::int64_t(1) << 31);

  std::string result = "egg_t.x";
  if (counted_mean(plan))
    result = "egg_t.x / egg_t.y";
  else if (plan.reduction == "mean" || plan.reduction == "batchmean")
    result = "egg_t.x / " + float_literal(plan.divisor);

  const std::string structure =
      (plan.gather ? std::string("row loss reading each row's target element, a thread per row")
       : plan.rows ? "row loss, " + std::to_string(tpr) + " threads per row"
                   : std::string("element-wise loss")) +
      ", " + std::to_string(vec) + "-wide vectors, grid " + std::to_string(grid) + "x" +
      std::to_string(p.block) +
      (reduce ? ", per-block partials added in a fixed order by the last block (" +
                    divide_text(plan) + ")"
              : std::string(", every loss written") + (vec_store ? " as 16-byte vectors" : ""));
  json ctx = {{"fn", fn},
              {"summary", std::to_string(plan.prologue.size()) + " prologue ops → " + an.target +
                              " (reduction='" + plan.reduction + "') → " +
                              std::to_string(plan.epilogue.size()) + " epilogue ops"},
              {"structure", structure},
              {"helpers", ops_.helpers()},
              {"losses", losses_.text},
              {"index_t", small ? "int" : "long long"},
              {"pro_args", pro_args},
              {"pro_steps", pro_steps},
              {"operand_values", operand_values},
              {"num_operands", plan.operands.size()},
              {"pro_loads", pro_loads},
              {"full_leaves", full_leaves},
              {"full_ptrs", full_ptrs},
              {"epi_leaves", epi_leaf_list},
              {"epi_loads", epi_loads},
              {"epi_steps", epi_steps},
              {"results", results},
              {"outs", outs},
              {"params", params},
              {"reduce", reduce},
              {"vec_store", vec_store},
              {"result", result},
              {"divide", divide_text(plan)},
              {"loss", plan.loss_expr},
              {"n", plan.n},
              {"elem_shape", spec::shape_string(plan.elem_shape)},
              {"rows", plan.n},
              {"len", plan.len},
              {"tpr", tpr},
              {"groups", groups},
              {"multi_warp", tpr > 32},
              {"state", plan.state},
              {"push", plan.push_expr},
              {"ce", plan.kind == "cross_entropy"},
              {"gather", plan.gather},
              {"target_rows", plan.kind == "cross_entropy" || plan.kind == "nll"},
              {"weight", ""},
              {"triplet", plan.kind == "triplet"},
              {"swap", plan.swap},
              {"target", c.args.empty() ? "" : contract::c_identifier(plan.target)},
              {"ignore_index", std::to_string(plan.ignore_index)},
              {"ce_loss", plan.row_loss_expr},
              {"margin", float_literal(plan.margin)},
              {"block", p.block},
              {"grid", grid},
              // Blocks that must be resident on an SM at once for the fixed grid to run in one
              // wave (the register cap __launch_bounds__ then sets); a second partial wave would
              // double the time of a short loss.
              {"min_blocks", std::clamp<std::int64_t>(ceil_div(grid, kSms), 1, 2048 / p.block)},
              {"vec", vec},
              {"kernel", plan.rows ? "rows" : "pointwise"},
              {"args", args}};
  for (const auto& a : c.args) {
    if (a.source == plan.target && a.role != contract::Role::output) ctx["target"] = a.var;
    if (a.source == plan.weight && a.role != contract::Role::output) ctx["weight"] = a.var;
  }
  std::string device = render::render(common_.text, ctx, common_.name);
  device += plan.rows ? render::render(rows_.text, ctx, rows_.name)
                      : render::render(pointwise_.text, ctx, pointwise_.name);

  Candidate cand;
  cand.id = "loss." + plan.kind +
            (plan.rows ? ".rows:t" + std::to_string(tpr) : std::string(".pointwise")) + ":b" +
            std::to_string(p.block) + ":g" + std::to_string(grid) + ":v" + std::to_string(vec) +
            (reduce ? ":" + plan.reduction : ":none");
  cand.summary = an.target + ": " + structure;
  cand.params = p.to_json();
  cand.params["vec"] = vec;
  cand.params["grid_blocks"] = grid;
  cand.code.device_code = device;
  cand.code.launch_body = render::render(launch_.text, ctx, launch_.name);
  return cand;
}

// ---- stage 1 and stage 2 ------------------------------------------------------------------

std::vector<LossParams> loss_structures(const LossPlan& plan) {
  std::vector<LossParams> out;
  auto add = [&](LossParams p) {
    if (!loss_params_valid(plan, p)) return;
    for (const auto& q : out)
      if (q.to_json() == p.to_json()) return;
    out.push_back(p);
  };
  LossParams p;
  if (plan.gather) {
    p.tpr = 1;  // one element per row: a thread per row, nothing to combine
    add(p);
    LossParams small = p;
    small.block = 128;
    add(small);
  } else if (plan.rows) {
    // Threads per row: a warp for rows up to ~4K elements, more for longer rows.
    p.tpr = plan.len <= 4096 ? 32 : plan.len <= 16384 ? 128 : 256;
    p.block = std::max(p.tpr, 256);
    add(p);
    LossParams other = p;
    other.tpr = p.tpr == 32 ? 128 : 32;
    other.block = 256;
    add(other);
  } else {
    add(p);  // 16-byte vectors, 8 blocks per SM striding over the tensor
    LossParams scalar = p;
    scalar.vectorized = false;
    add(scalar);
  }
  return out;
}

std::vector<LossParams> loss_tuning_space(const LossPlan& plan, const LossParams& inc,
                                          const std::string& bottleneck) {
  std::vector<LossParams> out;
  auto add = [&](LossParams p) {
    if (!loss_params_valid(plan, p)) return;
    for (const auto& q : out)
      if (q.to_json() == p.to_json()) return;
    out.push_back(p);
  };
  add(inc);
  const bool latency = bottleneck == "latency" || bottleneck == "launch";
  for (int bps : latency ? std::vector<int>{16, 4} : std::vector<int>{4, 16}) {
    LossParams p = inc;
    p.blocks_per_sm = bps;
    add(p);
  }
  for (int block : {128, 512}) {
    LossParams p = inc;
    p.block = block;
    if (plan.rows) p.tpr = std::min(p.tpr, block);
    add(p);
  }
  if (plan.rows)
    for (int tpr : {32, 64, 128, 256}) {
      LossParams p = inc;
      p.tpr = tpr;
      p.block = std::max(tpr, inc.block);
      add(p);
    }
  if (out.size() > 10) out.resize(10);
  return out;
}

std::vector<LossParams> LossFamily::structure_params(const spec::Spec&, const contract::Contract&,
                                                     const LossPlan& pl) const {
  return loss_structures(pl);
}

std::vector<LossParams> LossFamily::tuning_params(const spec::Spec&, const contract::Contract&,
                                                  const LossPlan& pl, const LossParams& incumbent,
                                                  const std::string& bottleneck) const {
  return loss_tuning_space(pl, incumbent, bottleneck);
}

std::optional<LossParams> LossFamily::fallback_params(const spec::Spec&, const contract::Contract&,
                                                      const LossPlan& plan,
                                                      const LossParams&) const {
  // The simplest structure: scalar loads, a warp (or, gathering, a thread) per row, 256 threads,
  // default grid.
  LossParams p;
  p.vectorized = false;
  if (plan.gather) p.tpr = 1;
  return p;
}

}  // namespace egg::backend::builtin
