#include "backend/builtin/pool.h"
#include "backend/builtin/plan_util.h"
#include "backend/builtin/window.h"

#include <algorithm>
#include <map>
#include <set>

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

// Bytes of the narrowest output element (sets the vector-store width).
int out_elem_size(const contract::Contract& c) {
  int size = 16;
  for (const auto& a : c.args)
    if (a.role == contract::Role::output) size = std::min(size, spec::dtype_size(a.dtype));
  return size;
}

// True when params suit the plan.
bool pool_params_valid(const PoolPlan& plan, const PoolParams& p) {
  if (p.block < 32 || p.block > 1024 || p.block % 32) return false;
  if (p.opt != 1 && p.opt != 2 && p.opt != 4 && p.opt != 8) return false;
  if (p.tile && (p.opt != 1 || p.reuse || !pool_tile(plan))) return false;
  // A span in registers: several windows per thread, at most 32 input columns.
  if (p.reuse && (p.opt == 1 || pool_span(plan, p.opt) > 32)) return false;
  return p.opt <= plan.out[2];
}

}  // namespace

// Static shared memory the tiled structure's two tiles may take.
constexpr std::int64_t kTileBytes = 40 * 1024;

std::optional<PoolTile> pool_tile(const PoolPlan& plan) {
  const auto reach = [&](int d) { return (plan.kernel[d] - 1) * plan.dilation[d] + 1; };
  if (plan.dims == 1) {
    // 1-d windows that overlap: a row of up to 1024 outputs, its input span read once (coalesced)
    // instead of a window's taps per output through L1.
    if (plan.stride[2] >= reach(2)) return std::nullopt;
    PoolTile t;
    t.h = 1;
    for (t.w = std::min<std::int64_t>(1024, ceil_div(plan.out[2], 32) * 32); t.w >= 32; t.w /= 2) {
      t.bytes = ((t.w - 1) * plan.stride[2] + reach(2) + t.w) * 4;
      if (t.bytes <= kTileBytes) return t;
    }
    return std::nullopt;
  }
  if (plan.dims != 2 || plan.stride[1] >= reach(1)) return std::nullopt;
  PoolTile t;
  t.w = std::min<std::int64_t>(128, ceil_div(plan.out[2], 32) * 32);
  const std::int64_t in_w = (t.w - 1) * plan.stride[2] + reach(2);
  for (t.h = std::min<std::int64_t>(32, plan.out[1]); t.h >= 1; t.h /= 2) {
    const std::int64_t in_h = (t.h - 1) * plan.stride[1] + reach(1);
    t.bytes = (in_h * in_w + in_h * t.w) * 4;
    if (t.bytes <= kTileBytes) return t;
  }
  return std::nullopt;
}

json PoolParams::to_json() const {
  json j = {{"block", block}, {"opt", opt}, {"unroll", unroll}, {"vectorized", vectorized}};
  if (reuse) j["reuse"] = true;  // absent: each window reads its own inputs
  if (tile) j["tile"] = true;    // absent: a thread per output (or opt outputs), no shared tile
  return j;
}

PoolFamily::PoolFamily(const std::filesystem::path& data_dir)
    : ops_(data_dir),
      kernel_(render::load_template(data_dir, "pool/kernel.cuh.tmpl")),
      launch_(render::load_template(data_dir, "pool/launch.tmpl")) {}

std::vector<std::pair<std::string, std::string>> PoolFamily::key_inputs() const {
  auto inputs = ops_.key_inputs();
  inputs.push_back({kernel_.name, kernel_.text});
  inputs.push_back({launch_.name, launch_.text});
  return inputs;
}

std::variant<PoolPlan, UserError> PoolFamily::analyze(const spec::Spec& s) const {
  return plan_pool(s, ops_);
}

PoolParams PoolParams::from_json(const json& j) {
  PoolParams p;
  p.block = j.value("block", p.block);
  p.opt = j.value("opt", p.opt);
  p.unroll = j.value("unroll", p.unroll);
  p.vectorized = j.value("vectorized", p.vectorized);
  p.reuse = j.value("reuse", p.reuse);
  p.tile = j.value("tile", p.tile);
  return p;
}

Candidate PoolFamily::render(const spec::Spec& s, const contract::Contract& c, const PoolPlan& plan,
                             const PoolParams& p) const {
  const spec::Node& an = *plan.anchor;
  const std::string fn = "egg_" + c.name;
  const std::int64_t in_numel = spec::numel(plan.in_shape), out_numel = spec::numel(plan.out_shape);

  std::set<std::string> pro_leaves, epi_leaves;
  if (s.find_tensor(plan.input)) pro_leaves.insert(plan.input);
  add_tensor_leaves(s, plan.prologue, pro_leaves);
  add_tensor_leaves(s, plan.epilogue, epi_leaves);

  // Leaves once each in launch() order; loads at the input element (egg_e) or output element
  // (egg_o).
  std::map<std::string, std::string> pro_value, epi_value;
  json leaves = json::array(), pro_loads = json::array(), epi_loads = json::array(),
       args = json::array();
  for (const auto& a : c.args) {
    if (a.role == contract::Role::output ||
        !(pro_leaves.count(a.source) || epi_leaves.count(a.source)))
      continue;
    leaves.push_back({{"ptr", a.var}, {"ctype", contract::c_type(a.dtype)}});
    args.push_back(a.var);
    if (pro_leaves.count(a.source)) {
      const std::string v = "egg_a" + std::to_string(pro_loads.size());
      const std::string off = spec::numel(a.shape) == in_numel
                                  ? "egg_e"
                                  : broadcast_offset(a.shape, plan.in_shape, "egg_e");
      pro_loads.push_back({{"value", v}, {"load", "egg_to_float(" + a.var + "[" + off + "])"}});
      pro_value[a.source] = v;
    }
    if (epi_leaves.count(a.source)) {
      const std::string v = "egg_b" + std::to_string(epi_loads.size());
      const std::string off = spec::numel(a.shape) == out_numel
                                  ? "egg_o"
                                  : broadcast_offset(a.shape, plan.out_shape, "egg_o");
      epi_loads.push_back({{"value", v}, {"load", "egg_to_float(" + a.var + "[" + off + "])"}});
      epi_value[a.source] = v;
    }
  }
  json pro_steps = json::array(), epi_steps = json::array();
  for (const auto* n : plan.prologue) {
    const std::string v = "egg_p" + std::to_string(pro_steps.size());
    pro_steps.push_back({{"value", v}, {"expr", ops_.expression(s, *n, pro_value)}});
    pro_value[n->name] = v;
  }
  epi_value[an.name] = "egg_r";
  for (const auto* n : plan.epilogue) {
    const std::string v = "egg_e" + std::to_string(epi_steps.size());
    epi_steps.push_back({{"value", v}, {"expr", ops_.expression(s, *n, epi_value)}});
    epi_value[n->name] = v;
  }
  json outs = json::array(), results = json::array();
  int slot = 0;
  for (const auto& o : s.outputs) {
    const contract::LaunchArg* arg = nullptr;
    for (const auto& a : c.args)
      if (a.role == contract::Role::output && a.tensor_name == o.name) arg = &a;
    if (!arg) throw InternalError("pool family: output " + o.name + " is not in the contract");
    outs.push_back({{"ptr", arg->var}, {"ctype", contract::c_type(arg->dtype)}, {"slot", slot}});
    results.push_back({{"slot", slot}, {"value", epi_value.at(o.node)}});
    args.push_back(arg->var);
    ++slot;
  }

  const int esize = out_elem_size(c);
  const std::optional<PoolTile> tile = p.tile ? pool_tile(plan) : std::nullopt;
  if (p.tile && !tile) throw InternalError("pool family: tiled params for a plan without a tile");
  const PoolTile tile_shape = tile.value_or(PoolTile{});
  const bool vstore = !tile && p.vectorized && p.opt * esize == 16 && plan.out[2] % p.opt == 0;
  const std::int64_t grid =
      tile ? plan.planes * ceil_div(plan.out[1], tile->h) * ceil_div(plan.out[2], tile->w)
           : ceil_div(plan.planes * plan.out[0] * plan.out[1] * ceil_div(plan.out[2], p.opt),
                      static_cast<std::int64_t>(p.block));
  const bool small = std::max(in_numel, out_numel) + 64 < (std::int64_t(1) << 31);
  const bool unroll = p.unroll && plan.window() <= 64;
  const std::string structure =
      tile ? "a block per " + std::to_string(tile->h) + " x " + std::to_string(tile->w) +
                 " output tile, its input tile read once into shared memory (" +
                 std::to_string(tile->bytes / 1024) +
                 " KiB with the W-reduced tile), windows reduced along W then H" +
                 (unroll ? ", window unrolled" : ", window loop") + ", fp32 accumulation"
           : "one thread per " +
                 (p.opt == 1 ? std::string("output") : std::to_string(p.opt) + " outputs along W") +
                 (unroll ? ", window unrolled" : ", window loop") +
                 (p.reuse ? ", each window row's span of " +
                                std::to_string(pool_span(plan, p.opt)) + " inputs read once"
                          : "") +
                 (vstore ? ", 16-byte output stores" : "") + ", fp32 accumulation";
  json ctx = {{"fn", fn},
              {"summary", std::to_string(plan.prologue.size()) + " prologue ops → " + an.target +
                              " → " + std::to_string(plan.epilogue.size()) + " epilogue ops"},
              {"structure", structure},
              {"helpers", ops_.helpers()},
              {"index_t", small ? "int" : "long long"},
              {"in_shape", spec::shape_string(plan.in_shape)},
              {"out_shape", spec::shape_string(plan.out_shape)},
              {"planes", plan.planes},
              {"max", plan.max},
              {"divisor", plan.divisor != 0 ? json(plan.divisor) : json(false)},
              {"count_include_pad", plan.count_include_pad},
              {"unroll", unroll ? "" : "1"},
              {"leaves", leaves},
              {"pro_loads", pro_loads},
              {"pro_steps", pro_steps},
              {"pro_result", pro_value.at(plan.input)},
              {"epi_loads", epi_loads},
              {"epi_steps", epi_steps},
              {"results", results},
              {"outs", outs},
              {"num_outs", outs.size()},
              {"block", p.block},
              {"opt", p.opt},
              {"vstore", vstore},
              {"reuse", p.reuse},
              {"tile", tile.has_value()},
              {"tile_h", tile_shape.h},
              {"tile_w", tile_shape.w},
              {"grid", grid},
              {"args", args}};
  add_window_context(ctx, plan.in, plan.out, plan.kernel, plan.stride, plan.pad, plan.dilation);
  Candidate cand;
  cand.id = std::string("pool.") + (plan.max ? "max" : "avg") + std::to_string(plan.dims) + "d:b" +
            std::to_string(p.block) + ":o" + std::to_string(p.opt) + (unroll ? ":unrolled" : "") +
            (p.reuse ? ":reuse" : "") + (tile ? ":tile" : "") + (vstore ? ":v" : "");
  cand.summary = an.target + ": " + structure + ", block " + std::to_string(p.block);
  cand.params = p.to_json();
  cand.params["vstore"] = vstore;
  cand.code.device_code = render::render(kernel_.text, ctx, kernel_.name);
  cand.code.launch_body = render::render(launch_.text, ctx, launch_.name);
  return cand;
}

// ---- stage 1 and stage 2 ------------------------------------------------------------------

std::vector<PoolParams> pool_structures(const PoolPlan& plan, int out_elem_size) {
  std::vector<PoolParams> out;
  auto add = [&](PoolParams p) {
    if (!pool_params_valid(plan, p)) return;
    for (const auto& q : out)
      if (q.to_json() == p.to_json()) return;
    out.push_back(p);
  };
  // Prior: a thread per output, window unrolled (overlapping windows hit L1); then a thread per
  // 16 bytes of output along W (stored as one vector where the width allows), reading each window
  // row's input span once for its windows when they overlap (a stride below the window), which
  // the first structure reads again per window.
  PoolParams one;
  add(one);
  // 2-d windows overlapping along H: a thread per output fetches each input row once per output
  // row that reads it (from L2: rows of other blocks); the tiled structure reads it about once.
  PoolParams tiled;
  tiled.tile = true;
  add(tiled);
  PoolParams wide;
  wide.opt = std::min(16 / out_elem_size, 8);
  while (wide.opt > 1 && wide.opt > plan.out[2]) wide.opt /= 2;
  const bool overlap = plan.stride[2] < (plan.kernel[2] - 1) * plan.dilation[2] + 1;
  if (overlap) {
    PoolParams reuse = wide;
    reuse.reuse = true;
    add(reuse);
  }
  add(wide);
  return out;
}

std::vector<PoolParams> pool_tuning_space(const PoolPlan& plan, int out_elem_size,
                                          const PoolParams& inc, const std::string& bottleneck) {
  std::vector<PoolParams> out;
  auto add = [&](PoolParams p) {
    if (!pool_params_valid(plan, p)) return;
    for (const auto& q : out)
      if (q.to_json() == p.to_json()) return;
    out.push_back(p);
  };
  add(inc);
  const bool latency = bottleneck == "latency" || bottleneck == "launch";
  for (int block : latency ? std::vector<int>{128, 64, 256} : std::vector<int>{128, 512, 256}) {
    PoolParams p = inc;
    p.block = block;
    add(p);
  }
  for (int opt : {1, 2, 4, std::min(16 / out_elem_size, 8)}) {
    PoolParams p = inc;
    p.opt = opt;
    add(p);
  }
  PoolParams loop = inc;
  loop.unroll = !inc.unroll;
  add(loop);
  PoolParams span = inc;  // each window's own reads, or a row's span read once
  span.reuse = !inc.reuse;
  if (span.reuse && span.opt == 1) span.opt = std::min(16 / out_elem_size, 8);
  add(span);
  PoolParams tiled = inc;  // a shared-memory tile per block, or a thread per output
  tiled.tile = !inc.tile;
  tiled.opt = 1;
  tiled.reuse = false;
  add(tiled);
  if (out.size() > 10) out.resize(10);
  return out;
}

std::vector<PoolParams> PoolFamily::structure_params(const spec::Spec&, const contract::Contract& c,
                                                     const PoolPlan& pl) const {
  return pool_structures(pl, out_elem_size(c));
}

std::vector<PoolParams> PoolFamily::tuning_params(const spec::Spec&, const contract::Contract& c,
                                                  const PoolPlan& pl, const PoolParams& incumbent,
                                                  const std::string& bottleneck) const {
  return pool_tuning_space(pl, out_elem_size(c), incumbent, bottleneck);
}

std::optional<PoolParams> PoolFamily::fallback_params(const spec::Spec&, const contract::Contract&,
                                                      const PoolPlan&, const PoolParams&) const {
  // The simplest structure: a thread per output, a plain window loop, scalar stores.
  PoolParams p;
  p.opt = 1;
  p.unroll = false;
  p.vectorized = false;
  return p;
}

}  // namespace egg::backend::builtin
