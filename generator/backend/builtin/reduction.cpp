#include "backend/builtin/reduction.h"
#include "backend/builtin/gpu_target.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "backend/builtin/index_ir.h"
#include "backend/builtin/on_chip.h"
#include "backend/builtin/plan_util.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;
using Mode = ReductionPlan::Mode;

// The most elements one thread of a row reduction adds up in a row (fp32 state): beyond it the
// running sum is so much larger than each term that rounding loses the terms. Measured on the
// H200: a mean over 2^30 elements by 32 threads (2^25 each) was 1 % off PyTorch's; split over
// 528 blocks of 512 threads (about 4 K each) it verified.
constexpr std::int64_t kMaxSerialPerThread = std::int64_t{1} << 14;
// The longest column a column normalize keeps in registers (a float each, every step unrolled):
// its input is read once instead of twice.
constexpr std::int64_t kColCacheMax = 64;

// True when the kernels read the input side in vectors: always without a gather; with one (a
// prologue by index), in reductions, whose kernels load the tensors the program reads at the
// element itself as vectors and pass their values in (never reversed: a flip's reads are
// indexed).
bool vector_reads(const ReductionPlan& plan) {
  return !plan.gather || (plan.mode == Mode::reduce && !plan.in_rev);
}

// Elements per 16-byte vector for the plan's narrowest streamed tensor.
// Rows: along the reduced dim. Column reductions: across VEC adjacent columns (the inner dim).
int vec_width(const ReductionPlan& plan, int elem_size, const ReductionParams& p) {
  if (!p.vectorized || !vector_reads(plan)) return 1;
  const int vec = 16 / elem_size;
  if (!plan.row()) return (plan.mode == Mode::reduce && plan.inner % vec == 0) ? vec : 1;
  if (plan.R % vec != 0) return 1;
  if (plan.mode == Mode::scan && p.items % vec != 0) return 1;
  return vec;
}

// A row kept on chip by a cluster of blocks (ReductionParams::cluster): each block's chunk of the
// row, a multiple of the vector width, and the dynamic shared memory it takes (the chunk as floats,
// with room for a chunk whose first element is not on a vector boundary, per array of
// ReductionPlan::on_chip_arrays).
struct SmemLayout {
  int vec = 1;
  std::int64_t chunk = 0, stride = 0, bytes = 0;  // stride: floats per array
};

SmemLayout smem_layout(const ReductionPlan& plan, int elem_size, const ReductionParams& p) {
  SmemLayout l;
  // 16-byte vectors of the streamed type whose float copies are whole 16-byte words too.
  l.vec = p.vectorized && 16 / elem_size >= 4 ? 16 / elem_size : 1;
  l.chunk = ceil_div(ceil_div(plan.R, std::max(1, p.cluster)), l.vec) * l.vec;
  l.stride = l.chunk + l.vec;
  l.bytes = ceil_div(plan.on_chip_arrays * l.stride * 4, 16) * 16;
  return l;
}

std::string mode_name(Mode m) {
  return m == Mode::reduce ? "reduce" : m == Mode::normalize ? "normalize" : "scan";
}

}  // namespace

json ReductionParams::to_json() const {
  json j = {{"block", block}, {"tpr", tpr},     {"vectorized", vectorized}, {"cache", cache},
            {"split", split}, {"items", items}, {"unroll", unroll}};
  if (cgroups != 1) j["cgroups"] = cgroups;  // absent: the layout before shared columns
  if (spread != 1) j["spread"] = spread;     // absent: a column per thread (or a vector's)
  if (cluster != 0) j["cluster"] = cluster;  // absent: no row kept on chip by a cluster
  if (transpose) j["transpose"] = true;      // absent: a scan's own loads and stores
  return j;
}

ReductionFamily::ReductionFamily(const std::filesystem::path& data_dir)
    : ops_(data_dir),
      anchors_(data_dir),
      reducers_(render::load_template(data_dir, "reduction/reducers.cuh")),
      common_(render::load_template(data_dir, "reduction/common.cuh.tmpl")),
      row_(render::load_template(data_dir, "reduction/row.cuh.tmpl")),
      row_smem_(render::load_template(data_dir, "reduction/row_smem.cuh.tmpl")),
      col_(render::load_template(data_dir, "reduction/col.cuh.tmpl")),
      scan_(render::load_template(data_dir, "reduction/scan.cuh.tmpl")),
      launch_(render::load_template(data_dir, "reduction/launch.tmpl")),
      clusters_(render::load_template(data_dir, "reduction/clusters.cuh")) {}

std::vector<std::pair<std::string, std::string>> ReductionFamily::key_inputs() const {
  auto inputs = ops_.key_inputs();
  inputs.push_back(anchors_.key_input());
  for (const auto* t :
       {&reducers_, &common_, &row_, &row_smem_, &col_, &scan_, &launch_, &clusters_})
    inputs.push_back({t->name, t->text});
  return inputs;
}

namespace {

// The tensors a normalize or scan kernel reads per element: the anchor's input, the prologue's
// and the epilogue's leaves.
std::set<std::string> element_leaves(const spec::Spec& s, const ReductionPlan& plan) {
  std::set<std::string> leaves;
  if (s.find_tensor(plan.input)) leaves.insert(plan.input);
  add_tensor_leaves(s, plan.prologue, leaves);
  add_tensor_leaves(s, plan.epilogue, leaves);
  return leaves;
}

// Whether a normalize epilogue reads the prologue's values or operands other than the anchor's
// input x (so the write pass needs the operands again).
bool epilogue_reads_operands(const spec::Spec& s, const ReductionPlan& plan) {
  std::set<std::string> pro_names;
  for (const auto* n : plan.prologue) pro_names.insert(n->name);
  const std::set<std::string> leaves = element_leaves(s, plan);
  for (const auto* n : plan.epilogue)
    for (const auto& a : n->args)
      if (a.kind == spec::Arg::Kind::node && a.node != plan.input &&
          (pro_names.count(a.node) || leaves.count(a.node)))
        return true;
  return false;
}

// ReductionPlan::on_chip_arrays: x alone, or every full-size operand the kernel reads.
int on_chip_arrays(const spec::Spec& s, const ReductionPlan& plan) {
  if (plan.mode != Mode::normalize || !epilogue_reads_operands(s, plan)) return 1;
  int arrays = 0;
  for (const auto& name : element_leaves(s, plan))
    if (const auto* t = s.find_tensor(name);
        t && spec::numel(t->shape) == spec::numel(plan.in_shape))
      ++arrays;
  return std::max(arrays, 1);
}

}  // namespace

std::variant<ReductionPlan, UserError> ReductionFamily::analyze(const spec::Spec& s) const {
  auto result = plan_reduction(s, ops_, anchors_);
  if (auto* plan = std::get_if<ReductionPlan>(&result))
    plan->on_chip_arrays = on_chip_arrays(s, *plan);
  return result;
}

namespace {

// Size of the narrowest element the kernel streams (inputs read per element and, for normalize
// and scan, the outputs), which sets the vector width.
int stream_elem_size(const spec::Spec& s, const contract::Contract& c, const ReductionPlan& plan) {
  int size = 16;
  const std::int64_t n = spec::numel(plan.in_shape);
  std::set<std::string> read;
  for (const auto* node : plan.prologue)
    for (const auto& a : node->args)
      if (a.kind == spec::Arg::Kind::node) read.insert(a.node);
  read.insert(plan.input);
  if (plan.mode != Mode::reduce)
    for (const auto* node : plan.epilogue)
      for (const auto& a : node->args)
        if (a.kind == spec::Arg::Kind::node) read.insert(a.node);
  for (const auto& a : c.args) {
    const bool streamed = a.role == contract::Role::output
                              ? plan.mode != Mode::reduce
                              : read.count(a.source) && s.find_tensor(a.source);
    if (streamed && spec::numel(a.shape) == n) size = std::min(size, spec::dtype_size(a.dtype));
  }
  return size;
}

// The elements one thread of a row reduction adds up in a row.
std::int64_t serial_per_thread(const ReductionPlan& plan, const ReductionParams& p) {
  return ceil_div(plan.R, static_cast<std::int64_t>(p.tpr) * p.split);
}

// A row reduction's params split so that no thread adds up more than kMaxSerialPerThread
// elements (unchanged when none does).
ReductionParams with_serial_bound(const ReductionPlan& plan, ReductionParams p) {
  if (serial_per_thread(plan, p) > kMaxSerialPerThread)
    p.split = static_cast<int>(std::min<std::int64_t>(
        ceil_div(plan.R, static_cast<std::int64_t>(p.tpr) * kMaxSerialPerThread), 65535));
  return p;
}

}  // namespace

bool reduction_params_valid(const ReductionPlan& plan, int elem_size, const ReductionParams& p) {
  if (p.block < 32 || p.block > 1024 || p.block % 32) return false;
  if (p.split < 1 || p.split > 65535) return false;
  if (p.split > 1 && (plan.mode != Mode::reduce)) return false;
  if (plan.row()) {
    if (p.tpr < 32 || p.tpr > p.block || p.block % p.tpr || (p.tpr & (p.tpr - 1))) return false;
    if (plan.mode == Mode::reduce && serial_per_thread(plan, p) > kMaxSerialPerThread) return false;
    if (plan.mode == Mode::scan && (p.items < 1 || p.items > 32)) return false;
    // A transposed scan's chunk in static shared memory (at most 32 KiB of values, 4-byte floats
    // or 8-byte integers, and their padding).
    const int value_bytes = plan.integer ? 8 : 4;
    if (p.transpose && (plan.mode != Mode::scan || p.block * p.items * value_bytes > 8192 * 4))
      return false;
    if (p.cache) {
      if (plan.mode != Mode::normalize || p.split > 1) return false;
      // The whole row in registers (the same floats per thread for either vector width), within
      // the register budget __launch_bounds__(block) leaves: 64 regs at 1024 threads, 128 at 512.
      const std::int64_t budget = p.block >= 1024 ? 16 : p.block >= 512 ? 48 : 64;
      if (ceil_div(plan.R, p.tpr) > budget) return false;
    }
  } else if (p.transpose || (p.cache && (plan.mode != Mode::normalize || plan.R > kColCacheMax ||
                                         p.split > 1 || p.cgroups != 1))) {
    return false;
  }
  if (p.cluster != 0) {
    // A row on chip: normalize rows only, a block per chunk, clusters of at most 16 blocks (16 is
    // beyond the portable 8), every thread with a vector of the chunk at least, and the chunk
    // within shared memory.
    if (!plan.row() || plan.mode != Mode::normalize || p.cache || p.split != 1) return false;
    if (plan.in_rev || plan.out_rev || p.tpr != p.block) return false;
    if (p.cluster < 1 || p.cluster > 16 || (p.cluster & (p.cluster - 1))) return false;
    const SmemLayout l = smem_layout(plan, elem_size, p);
    if (l.bytes > kOnChipMaxBytes || l.chunk < static_cast<std::int64_t>(p.block) * l.vec)
      return false;
  }
  if (p.spread != 1) {
    // Columns 32 apart: column reductions without vectors, 2, 4 or 8 columns per thread, whole
    // warps of column threads.
    if (plan.row() || plan.mode != Mode::reduce || vec_width(plan, elem_size, p) != 1) return false;
    if (p.spread != 2 && p.spread != 4 && p.spread != 8) return false;
    if (p.cgroups < 1 || p.block % p.cgroups || (p.block / p.cgroups) % 32) return false;
  }
  if (p.cgroups != 1) {
    // Shared columns: column reductions only; each group at least a warp of adjacent columns; the
    // handed-over states (at most 16 bytes each: a 16-byte vector of columns per thread, or its
    // spread columns) fit in 48 KiB of static shared memory.
    if (plan.row() || plan.mode != Mode::reduce || p.cgroups < 1) return false;
    if (p.block % p.cgroups || p.block / p.cgroups < 32 || (p.block / p.cgroups) % 32) return false;
    const std::int64_t states = std::max(16 / elem_size, p.spread);
    if (static_cast<std::int64_t>(p.block) * states * 16 > 48 * 1024) return false;
  }
  return true;
}

namespace {

// The tensors a reduction kernel reads, as its templates name them: per element (the prologue's;
// the epilogue's too unless it reduces) and per row (a reduction's epilogue), their launch
// arguments and load expressions, and the value each leaf has in the expressions.
struct Operands {
  std::set<std::string> elem_leaves, row_leaves;
  std::map<std::string, std::string> value_of;
  json operands = json::array(), full_operands = json::array(), row_operands = json::array();
  json full_ptrs = json::array(), args = json::array(), finish_args = json::array();
};

// The program of the index IR for a prologue of layout ops (ReductionPlan::gather), or nullopt.
std::optional<IndexProgram> gather_program(const spec::Spec& s, const contract::Contract& c,
                                           const ReductionPlan& plan, const OpTable& ops) {
  if (!plan.gather) return std::nullopt;
  spec::Spec pro = s;
  pro.nodes.clear();
  for (const auto* n : plan.prologue) pro.nodes.push_back(*n);
  pro.outputs = {{"in", plan.input, plan.in_shape, *s.dtype_of(plan.input)}};
  std::map<std::string, std::string> ptr_of;
  for (const auto& a : c.args)
    if (a.role != contract::Role::output) ptr_of[a.source] = a.var;
  return build_index_program(pro, ops, ptr_of);
}

Operands collect_operands(const spec::Spec& s, const contract::Contract& c,
                          const ReductionPlan& plan, const std::optional<IndexProgram>& gather) {
  const spec::Node& an = *plan.anchor;
  const bool reduce = plan.mode == Mode::reduce;
  const std::int64_t in_numel = spec::numel(plan.in_shape);
  Operands o;
  if (gather)
    for (const auto& r : gather->reads) o.elem_leaves.insert(r.tensor);
  if (s.find_tensor(plan.input)) o.elem_leaves.insert(plan.input);
  if (!plan.gather) add_tensor_leaves(s, plan.prologue, o.elem_leaves);
  add_tensor_leaves(s, plan.epilogue, reduce ? o.row_leaves : o.elem_leaves);
  for (const auto& name : o.row_leaves)
    if (o.elem_leaves.count(name))
      throw UserError(an.where,
                      "tensor " + name + " is read both before and after `" + an.target +
                          "`; the builtin reduction family reads a tensor on one side only",
                      "split the op into two op.py files");
  // The tensors a gathered prologue reads at the element itself (the others by index).
  std::set<std::string> gather_fulls;
  if (gather)
    for (const auto& r : gather->reads)
      if (r.full) gather_fulls.insert(r.tensor);
  for (const auto& a : c.args) {
    if (a.role == contract::Role::output || !o.elem_leaves.count(a.source)) continue;
    const std::string ctype = contract::c_type(a.dtype);
    const bool full =
        plan.gather ? gather_fulls.count(a.source) > 0 : spec::numel(a.shape) == in_numel;
    const std::string value = "a" + std::to_string(o.operands.size());
    o.value_of[a.source] = value;
    // Rows and column reductions; a gathered prologue in reductions only (vector_reads).
    const bool vector_load = full && (plan.row() || reduce) && vector_reads(plan);
    const std::string load =
        vector_load
            ? "egg_to_float(" + a.var + "_v.v[" + (plan.in_rev ? "VEC - 1 - egg_j" : "egg_j") + "])"
            : "egg_to_float(" + a.var + "[" +
                  (full ? std::string("egg_e")
                        : broadcast_offset(a.shape, plan.in_shape, "egg_e")) +
                  "])";
    o.operands.push_back({{"ptr", a.var}, {"ctype", ctype}, {"value", value}, {"load", load}});
    if (vector_load) {
      o.full_operands.push_back(
          {{"ptr", a.var}, {"ctype", ctype}, {"slot", o.full_operands.size()}});
      o.full_ptrs.push_back(a.var);
    }
    o.args.push_back(a.var);
  }
  for (const auto& a : c.args) {
    if (a.role == contract::Role::output || !o.row_leaves.count(a.source)) continue;
    const std::string value = "b" + std::to_string(o.row_operands.size());
    o.value_of[a.source] = value;
    o.row_operands.push_back({{"ptr", a.var},
                              {"ctype", contract::c_type(a.dtype)},
                              {"value", value},
                              {"offset", broadcast_offset(a.shape, plan.out_shape, "egg_o")}});
    if (plan.mode != Mode::scan) o.args.push_back(a.var);
    o.finish_args.push_back(a.var);
  }
  return o;
}

// The prologue's steps (element-wise ops as float expressions), the anchor's input value and the
// call that computes it at element egg_e: from the operands' loads there, or the index program.
struct Prologue {
  json steps = json::array();
  // The call computing the input at egg_e in the kernels (a vector-loaded tensor's value from its
  // vector's element egg_j) and with every tensor read at egg_e (the host evaluation).
  std::string result = "0.0f", call, scalar_call;
  json gather_fulls = json::array();  // tensors the program reads at element i itself
};

Prologue render_prologue(const spec::Spec& s, const contract::Contract& c,
                         const ReductionPlan& plan, const OpTable& ops,
                         const std::optional<IndexProgram>& gather, const std::string& fn,
                         Operands& o) {
  Prologue pro;
  for (const auto* n : plan.prologue) {
    if (plan.gather) break;  // the program evaluates it
    if (n->op == "flip") {   // a reverse scan's flip moves no data: the loads read the other way
      o.value_of[n->name] = o.value_of.at(n->args.at(0).node);
      continue;
    }
    const std::string value = "p" + std::to_string(pro.steps.size());
    pro.steps.push_back({{"value", value}, {"expr", ops.expression(s, *n, o.value_of)}});
    o.value_of[n->name] = value;
  }
  if (!plan.gather) {
    pro.result = o.value_of.at(plan.input);
    pro.call = fn + "_pro(";
    for (const auto& op : o.operands) pro.call += op["load"].get<std::string>() + ", ";
    pro.call += "0)";
    pro.scalar_call = pro.call;
    return pro;
  }
  // The gather: the values of the tensors read at the element itself (from the vectors where the
  // kernel loads them), then every operand's pointer.
  pro.call = pro.scalar_call = fn + "_gather(egg_e, ";
  std::set<std::string> vector_loaded;
  for (const auto& f : o.full_operands) vector_loaded.insert(f["ptr"].get<std::string>());
  for (const auto& r : gather->reads)
    for (const auto& a : c.args)
      if (r.full && a.role != contract::Role::output && a.source == r.tensor) {
        pro.gather_fulls.push_back({{"ptr", a.var},
                                    {"ctype", contract::c_type(a.dtype)},
                                    {"value", full_value(a.var)},
                                    {"vtype", full_type(r)}});
        const std::string at_e = full_load(r) + "(" + a.var + "[egg_e]), ";
        pro.call +=
            vector_loaded.count(a.var) ? full_load(r) + "(" + a.var + "_v.v[egg_j]), " : at_e;
        pro.scalar_call += at_e;
      }
  for (const auto& op : o.operands) {
    pro.call += op["ptr"].get<std::string>() + ", ";
    pro.scalar_call += op["ptr"].get<std::string>() + ", ";
  }
  pro.call += "0)";
  pro.scalar_call += "0)";
  return pro;
}

// The operands' pointers with their places among launch()'s inputs and params (the host program's
// `in` array).
json host_ins(const contract::Contract& c, const Operands& o) {
  json ins = json::array();
  for (const auto& a : c.args)
    for (const json* list : {&o.operands, &o.row_operands})
      for (const auto& op : *list)
        if (a.role != contract::Role::output && op["ptr"] == a.var) ins.push_back(host_input(c, a));
  return ins;
}

// The epilogue's steps, the outputs and their stores, and what the epilogue reads: the anchor's
// input x (reads_x) or other operands and prologue values (reads_operands, so the write pass
// loads them again).
struct Epilogue {
  json steps = json::array(), outs = json::array(), elem_results = json::array();
  bool reads_x = false, reads_operands = false;
};

Epilogue render_epilogue(const spec::Spec& s, const contract::Contract& c,
                         const ReductionPlan& plan, const OpTable& ops, const Prologue& pro,
                         Operands& o) {
  const bool reduce = plan.mode == Mode::reduce, scan = plan.mode == Mode::scan;
  Epilogue epi;
  std::set<std::string> pro_names;
  for (const auto* n : plan.prologue) pro_names.insert(n->name);
  auto value_of = o.value_of;
  value_of[plan.anchor->name] = reduce ? "egg_r" : "egg_a";
  for (const auto& v : plan.value_aliases) value_of[v] = "egg_r";
  if (!reduce) value_of[plan.input] = "egg_x";
  // In a scan, a value that is the anchor's input through flips (x in flip(cumsum(flip(x))) - x)
  // is egg_x too: the plan checked that it is read at the same position.
  auto is_x = [&](const std::string& v) {
    const auto it = o.value_of.find(v);
    return v == plan.input || (scan && it != o.value_of.end() && it->second == pro.result);
  };
  if (scan)
    for (const auto& [name, value] : o.value_of)
      if (value == pro.result) value_of[name] = "egg_x";
  for (const auto* n : plan.epilogue)
    for (const auto& a : n->args) {
      if (a.kind != spec::Arg::Kind::node) continue;
      if (is_x(a.node))
        epi.reads_x = true;
      else if (pro_names.count(a.node) || o.elem_leaves.count(a.node))
        epi.reads_operands = true;
    }
  for (const auto* n : plan.epilogue) {
    if (n->op == "flip") {  // the stores write the other way
      value_of[n->name] = value_of.at(n->args.at(0).node);
      continue;
    }
    const std::string value = "e" + std::to_string(epi.steps.size());
    epi.steps.push_back({{"value", value}, {"expr", ops.expression(s, *n, value_of)}});
    value_of[n->name] = value;
  }
  for (const auto& v : plan.index_values) value_of[v] = "";
  const std::set<std::string> index_values(plan.index_values.begin(), plan.index_values.end());
  int slot = 0;
  for (const auto& out : s.outputs) {
    const contract::LaunchArg* arg = nullptr;
    for (const auto& a : c.args)
      if (a.role == contract::Role::output && a.tensor_name == out.name) arg = &a;
    if (!arg)
      throw InternalError("reduction family: output " + out.name + " is not in the contract");
    const std::string ctype = contract::c_type(arg->dtype);
    const std::string store =
        index_values.count(out.node)
            ? "static_cast<" + ctype + ">(egg_st.i)"
            : std::string(plan.integer ? "egg_from_int<" : "egg_from_float<") + ctype + ">(" +
                  value_of.at(out.node) + ")";
    epi.outs.push_back({{"ptr", arg->var}, {"ctype", ctype}, {"slot", slot}, {"store", store}});
    epi.elem_results.push_back({{"slot", slot}, {"value", value_of.at(out.node)}});
    o.args.push_back(arg->var);
    o.finish_args.push_back(arg->var);
    if (!reduce && plan.row()) o.full_ptrs.push_back(arg->var);
    ++slot;
  }
  return epi;
}

// How one candidate lays the plan out, from its params: the kernel's shape and where the row
// lives between the statistics and the write pass.
struct Layout {
  int vec = 1, tpr = 1, groups = 1, cgroups = 1, spread = 1;
  std::int64_t rows = 1, chunk = 1, split = 1;
  bool cache = false;  // normalize: the row in registers
  bool smem = false;   // normalize: the row in a cluster's shared memory
  SmemLayout sl;
};

Layout layout_of(const ReductionPlan& plan, int esize, const ReductionParams& p) {
  Layout l;
  const bool row = plan.row();
  l.vec = vec_width(plan, esize, p);
  l.tpr = row ? p.tpr : 1;
  l.groups = row ? p.block / l.tpr : 1;
  l.cgroups = row ? 1 : p.cgroups;
  l.spread = row ? 1 : p.spread;
  l.rows = plan.rows();
  l.chunk = plan.R;
  if (p.split > 1) {
    const std::int64_t step = row ? static_cast<std::int64_t>(l.tpr) * l.vec : 1;
    l.chunk = ceil_div(ceil_div(plan.R, p.split), step) * step;
  }
  l.split = ceil_div(plan.R, l.chunk);  // chunks that hold elements
  l.cache = p.cache && plan.mode == Mode::normalize;
  l.smem = p.cluster != 0 && row && plan.mode == Mode::normalize;
  l.sl = smem_layout(plan, esize, p);
  return l;
}

// The structure line of the kernel's header comment and the candidate's summary.
std::string structure_text(const ReductionPlan& plan, const ReductionParams& p, const Layout& l,
                           bool keep_x) {
  const bool scan = plan.mode == Mode::scan;
  const std::string direction = std::string(plan.exclusive ? ", exclusive" : "") +
                                (plan.in_rev ? ", input read in reverse" : "") +
                                (plan.out_rev ? ", output written in reverse" : "") +
                                (keep_x ? ", input kept in registers for the epilogue" : "");
  const std::string carry = plan.integer ? "long long" : "double";
  if (scan)
    return (plan.row()
                ? "row scan, " + std::to_string(l.tpr) + " threads per row, " +
                      std::to_string(p.items) + " elements per thread, " + carry +
                      " carry across chunks" +
                      (plan.gather ? ", input evaluated by index through " +
                                         std::to_string(plan.prologue.size()) + " prologue ops"
                                   : "")
                : "column scan, a thread per column with a running " + carry + " carry") +
           direction;
  if (l.smem)
    return "row normalize on chip: a cluster of " + std::to_string(p.cluster) + " blocks of " +
           std::to_string(p.block) + " threads per row, each keeping " +
           std::to_string(l.sl.chunk) + " elements in shared memory (" +
           std::to_string(l.sl.bytes / 1024) + " KiB), " + std::to_string(l.sl.vec) +
           "-wide vectors, input read once (two-pass row kernel where clusters are absent)";
  if (plan.row())
    return (l.rows == 1 ? "full reduction as one row" : "row " + mode_name(plan.mode)) + ", " +
           std::to_string(l.tpr) + " threads per row, " + std::to_string(l.vec) + "-wide vectors" +
           (l.split > 1 ? ", split " + std::to_string(l.split) + " with a merge pass" : "") +
           (l.cache ? ", row kept in registers (input read once)" : "") +
           (plan.mode == Mode::normalize && !l.cache ? ", two passes over the row" : "");
  return "column " + mode_name(plan.mode) + ", a thread per " +
         (l.vec > 1      ? std::to_string(l.vec) + " adjacent output columns (16-byte vectors)"
          : l.spread > 1 ? std::to_string(l.spread) + " output columns 32 apart (a warp walks " +
                               std::to_string(32 * l.spread) + " neighbouring columns)"
                         : std::string("output column")) +
         (l.cgroups > 1
              ? ", " + std::to_string(l.cgroups) + " threads per column merged in shared memory"
              : std::string()) +
         (l.split > 1 ? ", split " + std::to_string(l.split) + " with a merge pass" : "") +
         (l.cache ? ", column kept in registers (input read once)" : "") +
         (plan.mode == Mode::normalize && !l.cache ? ", two passes over the column" : "");
}

// The candidate's id: family, mode, layout and every parameter that changes the kernel.
std::string candidate_id(const ReductionPlan& plan, const ReductionParams& p, const Layout& l) {
  const bool scan = plan.mode == Mode::scan, row = plan.row();
  return "reduction." + std::string(scan ? "scan" : mode_name(plan.mode)) +
         (row ? ".row" : ".col") + ":b" + std::to_string(p.block) +
         (row ? ":t" + std::to_string(l.tpr) + ":v" + std::to_string(l.smem ? l.sl.vec : l.vec)
              : "") +
         (l.split > 1 ? ":s" + std::to_string(l.split) : "") + (l.cache ? ":cache" : "") +
         (scan && row ? ":i" + std::to_string(p.items) : "") +
         (p.transpose && scan && row ? ":tr" : "") +
         (!row ? ":v" + std::to_string(l.vec) + ":u" + std::to_string(p.unroll) : "") +
         (l.cgroups > 1 ? ":g" + std::to_string(l.cgroups) : "") +
         (l.spread > 1 ? ":k" + std::to_string(l.spread) : "") +
         (l.smem ? ":cl" + std::to_string(p.cluster) : "") + (plan.in_rev ? ":rin" : "") +
         (plan.out_rev ? ":rout" : "");
}

}  // namespace

Candidate ReductionFamily::render(const spec::Spec& s, const contract::Contract& c,
                                  const ReductionPlan& plan, const ReductionParams& p) const {
  const spec::Node& an = *plan.anchor;
  const std::string fn = "egg_" + c.name;
  const bool reduce = plan.mode == Mode::reduce, scan = plan.mode == Mode::scan;
  const bool row = plan.row();
  const int esize = stream_elem_size(s, c, plan);
  const Layout l = layout_of(plan, esize, p);

  const std::optional<IndexProgram> gather = gather_program(s, c, plan, ops_);
  Operands o = collect_operands(s, c, plan, gather);
  const Prologue pro = render_prologue(s, c, plan, ops_, gather, fn, o);
  const Epilogue epi = render_epilogue(s, c, plan, ops_, pro, o);

  // The anchor's value: per row (reduce) or per element (normalize, scan), as the table writes it.
  std::string anchor_elem = scan ? "egg_a" : plan.element_expr;
  // Softmax and log-softmax over a row held on chip: max, then sum of exponentials, from the
  // registers (two_pass) or the shared memory holding x (smem_two_pass), with no online rescale.
  // Softmax whose epilogue never reads x keeps the exponentials there for the write pass.
  const bool softmax = plan.reducer == "EggRedSoftmax";
  const bool two_pass = l.cache && softmax && row;
  const bool smem_two_pass = l.smem && softmax && !epi.reads_operands;
  const bool exp_form = !plan.element_exp_expr.empty() && !epi.reads_x;
  const bool store_exp = two_pass && exp_form, smem_store_exp = smem_two_pass && exp_form;
  const std::string smem_anchor_elem = smem_store_exp ? plan.element_exp_expr : anchor_elem;
  if (store_exp) anchor_elem = plan.element_exp_expr;
  // A row scan keeps its input in registers when the epilogue reads only that (cumsum(x) - x);
  // other epilogue reads of the operands load them again.
  const bool keep_x = scan && row && epi.reads_x && !epi.reads_operands;
  const bool epi_pro = scan ? (epi.reads_operands || (epi.reads_x && !keep_x)) : epi.reads_operands;
  // A row on chip whose epilogue reads operands keeps the full-size operands in shared memory
  // (x is recomputed from them), else x itself.
  const bool smem_operands = l.smem && epi_pro;
  if (smem_operands && plan.on_chip_arrays != static_cast<int>(o.full_operands.size()))
    throw InternalError("reduction family: " + std::to_string(o.full_operands.size()) +
                        " full-size operands, but the plan counted " +
                        std::to_string(plan.on_chip_arrays) + " arrays on chip");
  const int col_threads = p.block / l.cgroups;  // column threads per block
  const std::int64_t grid_x =
      row ? ceil_div(l.rows, l.groups) : ceil_div(l.rows / l.vec, col_threads * l.spread);
  const std::int64_t grid_x1 =
      row ? grid_x : ceil_div(l.rows, col_threads * l.spread);  // scalar fallback
  const std::int64_t max_index =
      spec::numel(plan.in_shape) + static_cast<std::int64_t>(p.block) * 64 + l.chunk;
  const bool small =
      max_index < (std::int64_t(1) << 31) && l.rows * l.split < (std::int64_t(1) << 31);
  const std::string structure =
      structure_text(plan, p, l, keep_x) + (plan.integer ? ", exact integers (long long)" : "");

  json ctx = {{"fn", fn},
              {"summary", std::to_string(plan.prologue.size()) + " prologue ops → " + an.target +
                              " → " + std::to_string(plan.epilogue.size()) + " epilogue ops"},
              {"structure", structure},
              {"helpers", ops_.helpers()},
              {"reducers", reducers_.text},
              {"cluster_launch", clusters_.text},
              {"index_t", small ? "int" : "long long"},
              {"reducer", plan.reducer},
              // The values' type, the scan carry's, their zero and the store's conversion: long
              // long throughout for integer plans (exact), else float with a double carry.
              {"vt", plan.integer ? "long long" : "float"},
              {"ct", plan.integer ? "long long" : "double"},
              {"vzero", plan.integer ? "0LL" : "0.0f"},
              {"from", plan.integer ? "egg_from_int" : "egg_from_float"},
              {"in_shape", spec::shape_string(plan.in_shape)},
              {"outer", plan.outer},
              {"R", plan.R},
              {"inner", plan.inner},
              {"rows", l.rows},
              {"reduce", reduce},
              {"scan", scan},
              {"operands", o.operands},
              {"full_operands", o.full_operands},
              {"row_operands", o.row_operands},
              {"pro_steps", pro.steps},
              {"pro_result", pro.result},
              {"anchor_row", plan.row_expr},
              {"in_value", plan.in_expr},
              {"anchor_elem", anchor_elem},
              {"epi_steps", epi.steps},
              {"epi_pro", epi_pro},
              {"outs", epi.outs},
              {"elem_results", epi.elem_results},
              {"num_outs", epi.outs.size()},
              {"block", p.block},
              {"tpr", l.tpr},
              {"groups", l.groups},
              {"multi_warp", l.tpr > 32},
              {"split", l.split > 1 ? json(l.split) : json(false)},
              {"chunk", l.chunk},
              {"partials", l.rows * l.split},
              {"cache", l.cache},
              {"two_pass", two_pass},
              {"store_exp", store_exp},
              {"cache_floats", ceil_div(plan.R, l.tpr)},
              {"items", p.items},
              {"unroll", p.unroll},
              {"col_groups", l.cgroups > 1 ? json(l.cgroups) : json(false)},
              {"col_groups_n", l.cgroups},
              {"spread", l.spread > 1 ? json(l.spread) : json(false)},
              {"spread_n", l.spread},
              // A reduction's reads (it writes one value per row) stream past the caches
              // (evict-first): 8 % faster on the H200 in bench/micro/reduction_loads.cu. Kernels
              // that also write every element keep plain loads: evict-first made the cached
              // softmax 5 % slower.
              {"first_load", reduce ? "egg_load_vec_once" : "egg_load_vec"},
              {"vec", l.vec},
              {"scan_op", plan.scan_op},
              {"scan_identity", plan.scan_identity},
              {"keep_x", keep_x},
              {"pro_call", pro.call},
              {"pro_call_scalar", pro.scalar_call},
              // Integer plans (their prologue by index, no epilogue) also run on the host.
              {"host_eval", plan.integer && plan.mode != Mode::normalize},
              {"host_ins", host_ins(c, o)},
              {"gather", plan.gather},
              {"gather_fulls", pro.gather_fulls},
              {"gather_statements", gather ? json(gather->statements) : json::array()},
              {"gather_result", gather ? json(gather->results.at(0)) : json("0.0f")},
              {"transpose", p.transpose && scan && row},
              {"in_rev", plan.in_rev},
              {"exclusive", plan.exclusive},
              {"out_rev", plan.out_rev},
              {"in_at", plan.in_rev ? "(kR - egg_c - VEC)" : "egg_c"},
              {"in_elem", plan.in_rev ? "(kR - 1 - egg_c - egg_j)" : "egg_c + egg_j"},
              {"out_at", plan.out_rev ? "(kR - egg_c - VEC)" : "egg_c"},
              {"out_j", plan.out_rev ? "VEC - 1 - egg_j" : "egg_j"},
              {"col_in_r", plan.in_rev ? "kR - 1 - egg_r" : "egg_r"},
              {"col_out_r", plan.out_rev ? "kR - 1 - egg_r" : "egg_r"},
              {"row", row && !scan},
              {"row_smem", l.smem},
              {"cluster", p.cluster},
              {"cluster_nonportable", p.cluster > 8},
              {"smem_chunk", l.sl.chunk},
              {"smem_vec", l.sl.vec},
              {"smem_bytes", l.sl.bytes},
              {"smem_stride", l.sl.stride},
              {"smem_operands", smem_operands},
              {"smem_grid", l.rows * p.cluster},
              {"smem_in", smem_two_pass ? std::string("egg_x") : fn + "_in(egg_x)"},
              {"smem_two_pass", smem_two_pass},
              {"smem_store_exp", smem_store_exp},
              {"smem_anchor_elem", smem_anchor_elem},
              {"col", !row},
              {"col_vec", !row && l.vec > 1},
              {"scan_row", row && scan},
              {"grid_x", grid_x},
              {"grid_y", l.split},
              {"grid_x1", grid_x1},
              {"full_ptrs", o.full_ptrs},
              {"args", o.args},
              {"finish", l.split > 1 ? json(true) : json(false)},
              {"finish_grid", ceil_div(l.rows, 4)},
              {"finish_args", o.finish_args}};
  std::string device = render::render(common_.text, ctx, common_.name);
  if (!row)
    device += render::render(col_.text, ctx, col_.name);
  else if (scan)
    device += render::render(scan_.text, ctx, scan_.name);
  else
    device += render::render(row_.text, ctx, row_.name);
  if (l.smem) device += render::render(row_smem_.text, ctx, row_smem_.name);

  Candidate cand;
  cand.id = candidate_id(plan, p, l);
  cand.summary = an.target + ": " + structure + ", block " + std::to_string(p.block);
  cand.params = p.to_json();
  cand.params["vec"] = l.smem ? l.sl.vec : l.vec;
  cand.params["split"] = l.split;
  cand.params["cache"] = l.cache;
  cand.code.device_code = device;
  cand.code.launch_body = render::render(launch_.text, ctx, launch_.name);
  return cand;
}

// ---- stage 1 and stage 2 ------------------------------------------------------------------

namespace {

// A normalize row too long for registers kept on chip instead, by the shared prior (on_chip.h);
// `most` caps a block's chunk in bytes.
std::optional<ReductionParams> smem_prior(const ReductionPlan& plan, int elem_size,
                                          std::int64_t most = kOnChipMaxBytes) {
  if (!plan.row() || plan.mode != Mode::normalize) return std::nullopt;
  auto params = [](OnChipShape shape) {
    ReductionParams p;
    p.cluster = shape.cluster;
    p.block = p.tpr = shape.block;
    return p;
  };
  const auto shape = on_chip_prior(
      [&](int cluster) {
        const SmemLayout l = smem_layout(plan, elem_size, params({cluster, 256}));
        return OnChipChunk{l.bytes, l.chunk / l.vec};
      },
      [&](OnChipShape shape) { return reduction_params_valid(plan, elem_size, params(shape)); },
      most);
  if (!shape) return std::nullopt;
  return params(*shape);
}

}  // namespace

namespace {

// Stage 1's structures as they are proposed: valid ones, each once, in order.
struct StructureList {
  const ReductionPlan& plan;
  int elem_size;
  std::vector<ReductionParams> out;
  void add(const ReductionParams& p) {
    if (!reduction_params_valid(plan, elem_size, p)) return;
    for (const auto& q : out)
      if (q.to_json() == p.to_json()) return;
    out.push_back(p);
  }
};

// Scans: along rows a block or a warp per row (each through shared memory first where rows have
// no vectors); along columns a thread per column.
void scan_structures(StructureList& list, int vec) {
  const ReductionPlan& plan = list.plan;
  ReductionParams p;
  if (!plan.row()) {
    p.block = 256;
    p.unroll = 4;
    list.add(p);
    return;
  }
  // Long rows: a block per row (many elements in flight); short rows: a warp per row.
  p.block = 256;
  p.tpr = plan.R >= 2048 ? 256 : 32;
  p.items = 16 / list.elem_size * 2;
  ReductionParams q = p;
  q.tpr = p.tpr == 256 ? 32 : 256;
  // Rows without vectors (odd lengths): each mapping through shared memory first, coalesced.
  for (const auto& r : {p, q}) {
    if (vec == 1) {
      ReductionParams t = r;
      t.transpose = true;
      list.add(t);
    }
    list.add(r);
  }
}

// Reductions and normalizations along rows: threads per row by the row's vectors, a long row
// split over blocks, a normalized row cached on chip; then the other mapping.
void row_structures(StructureList& list, int vec) {
  const ReductionPlan& plan = list.plan;
  const std::int64_t rows = plan.rows();
  ReductionParams p;
  // Threads per row: enough vectors per thread to hide latency, but a full warp at least.
  const std::int64_t vectors = ceil_div(plan.R, vec);
  int tpr = vectors <= 128 ? 32 : vectors <= 1024 ? 128 : vectors <= 4096 ? 256 : 512;
  p.tpr = tpr;
  p.block = std::max(tpr, 256);
  const std::int64_t blocks = ceil_div(rows, p.block / tpr);
  if (plan.mode == Mode::reduce && blocks < 2 * kSms && vectors > 4L * tpr) {
    // Few long rows (a full reduction is one row): split each row over blocks, merge after.
    p.tpr = p.block = 512;
    p.split = static_cast<int>(
        std::min<std::int64_t>(ceil_div(4 * kSms, ceil_div(rows, 1)), ceil_div(vectors, 512L * 4)));
  }
  if (plan.mode == Mode::reduce) p = with_serial_bound(plan, p);
  if (plan.mode == Mode::normalize && ceil_div(plan.R, tpr) <= (p.block >= 512 ? 48 : 64)) {
    ReductionParams cached = p;
    cached.cache = true;  // the row stays on chip: one read of the input
    list.add(cached);
  } else if (plan.mode == Mode::normalize) {
    ReductionParams cached = p;
    cached.cache = true;
    cached.tpr = cached.block = 1024;
    list.add(cached);
    // Too long for registers even so: the row in the shared memory of a cluster of blocks.
    if (const auto on_chip = smem_prior(plan, list.elem_size); on_chip && list.out.empty())
      list.add(*on_chip);
  }
  list.add(p);
  ReductionParams other = p;  // the other mapping: warp per row vs block per row, unsplit
  other.split = 1;
  other.cache = false;
  other.tpr = p.tpr == 32 ? 256 : 32;
  other.block = 256;
  list.add(other);
}

// Reductions and normalizations along columns: a normalized column cached in registers, shared
// columns (several threads a column), a split along the reduced dim, then a thread a column.
void column_structures(StructureList& list) {
  const ReductionPlan& plan = list.plan;
  const std::int64_t rows = plan.rows();
  ReductionParams p;
  p.block = 256;
  p.unroll = 4;
  if (plan.mode == Mode::normalize) {
    ReductionParams cached = p;
    cached.cache = true;  // the column in registers: one read of the input
    list.add(cached);
  }
  const int col_vec = vec_width(plan, list.elem_size, p);
  const std::int64_t col_threads = rows / col_vec;
  const std::int64_t blocks = ceil_div(col_threads, p.block);
  if (plan.mode == Mode::reduce && plan.R >= 64) {
    // Shared columns: 8 threads per column (a block covers 32 column threads), so fewer column
    // threads still fill the GPU without a long split; a split along y for the rest of the
    // ~8 blocks per SM, each thread keeping at least 8 steps. Measured on the H200 (sum over dim
    // 1 of [16, 2048, 1024]): 48 us against 58 us for the split-only layout below.
    auto shared_columns = [&](int cgroups, int spread, int unroll) {
      ReductionParams sh = p;
      sh.cgroups = cgroups;
      sh.spread = spread;
      sh.unroll = unroll;
      sh.block = std::max(p.block, 32 * cgroups);  // a warp of column threads per group
      const std::int64_t blocks_x = ceil_div(col_threads, sh.block / sh.cgroups * spread);
      // ~2048 threads per SM in flight (8 blocks of 256), each group at least 8 steps a block.
      const std::int64_t target = 8 * kSms * 256 / sh.block;
      sh.split = static_cast<int>(std::clamp<std::int64_t>(
          ceil_div(target, blocks_x), 1, std::max<std::int64_t>(1, plan.R / (8 * sh.cgroups))));
      return sh;
    };
    // Columns without vectors (a row length no multiple of 4, or a gathered input) first spread
    // over several columns 32 apart per thread: a block's warp walks 64 or 128 neighbouring
    // columns, so where the row length is no multiple of 32 the line a warp's 32 columns
    // straddle is shared with another block once per 2 or 4 lines rather than every line. With
    // a long reduced dim, 16 threads per column, 2 columns each, 2 steps unrolled first: on the
    // H100 (bench/micro/odd_strides.cu, a sum over dim 1 of [128, 4096, 4095]) that layout read
    // at 2881 GB/s against 2728 for 8 threads x 4 columns and 2569 for 8 x 1 (copy 3029;
    // PyTorch's sum 3.03 ms, 2.98 for it).
    if (col_vec == 1 && col_threads >= 4 * 32) {
      if (plan.R >= 256) list.add(shared_columns(16, 2, 2));
      list.add(shared_columns(8, 4, p.unroll));
    }
    list.add(shared_columns(8, 1, p.unroll));
  }
  if (plan.mode == Mode::reduce && blocks < 4 * kSms && plan.R >= 64) {
    ReductionParams sp = p;
    sp.split =
        static_cast<int>(std::min<std::int64_t>(ceil_div(8 * kSms, blocks), ceil_div(plan.R, 32)));
    list.add(sp);
  }
  list.add(p);
}

}  // namespace

std::vector<ReductionParams> reduction_structures(const ReductionPlan& plan, int elem_size) {
  StructureList list{plan, elem_size, {}};
  const int vec = (plan.R % (16 / elem_size) == 0 && vector_reads(plan)) ? 16 / elem_size : 1;
  if (plan.mode == Mode::scan)
    scan_structures(list, vec);
  else if (plan.row())
    row_structures(list, vec);
  else
    column_structures(list);
  return list.out;
}

std::vector<ReductionParams> reduction_tuning_space(const ReductionPlan& plan, int elem_size,
                                                    const ReductionParams& inc,
                                                    const std::string& bottleneck) {
  std::vector<ReductionParams> out;
  auto add = [&](ReductionParams p) {
    if (!reduction_params_valid(plan, elem_size, p)) return;
    for (const auto& q : out)
      if (q.to_json() == p.to_json()) return;
    out.push_back(p);
  };
  add(inc);
  const bool latency = bottleneck == "latency" || bottleneck == "launch";
  if (inc.cluster != 0) {
    // A row on chip: more or fewer blocks per row, then other block sizes.
    for (const int cluster : {inc.cluster * 2, inc.cluster / 2}) {
      ReductionParams p = inc;
      p.cluster = cluster;
      add(p);
    }
    for (const int block : {256, 512, 1024}) {
      ReductionParams p = inc;
      p.block = p.tpr = block;
      add(p);
    }
  } else if (plan.row() && plan.mode == Mode::normalize && !inc.cache) {
    // The row on chip in chunks small enough for three blocks per multiprocessor (on_chip.h),
    // else stage 1's prior.
    if (const auto on_chip = smem_prior(plan, elem_size, kOnChipThreeBlocksBytes))
      add(*on_chip);
    else if (const auto prior = smem_prior(plan, elem_size))
      add(*prior);
  }
  if (plan.row()) {
    for (int tpr : {32, 64, 128, 256, 512, 1024}) {
      if (tpr == inc.tpr) continue;
      ReductionParams p = inc;
      p.tpr = tpr;
      p.block = std::max(tpr, inc.block <= tpr ? tpr : inc.block);
      add(p);
    }
    for (int block : {128, 256, 512}) {
      ReductionParams p = inc;
      p.block = block;
      add(p);
    }
    if (plan.mode == Mode::scan) {
      for (int items : {4, 8, 16, 32}) {
        ReductionParams p = inc;
        p.items = items;
        add(p);
      }
      if (plan.R % (16 / elem_size) != 0 || plan.gather) {  // rows without vectors: through
                                                            // shared memory or not
        ReductionParams p = inc;
        p.transpose = !inc.transpose;
        add(p);
      }
    }
  } else {
    // Columns: a memory- or latency-bound walk wants more loads in flight first (a deeper unroll,
    // then more blocks down the reduced dim); the rest after, so a small budget tries those.
    const bool mlp = bottleneck == "memory" || bottleneck == "latency";
    auto with = [&](auto set) {
      ReductionParams p = inc;
      set(p);
      add(p);
    };
    if (mlp && inc.cgroups > 1) {  // shared columns: more threads per column, or more blocks
      with([&](ReductionParams& p) {
        p.cgroups = inc.cgroups * 2;
        p.block = std::max(inc.block, 32 * p.cgroups);  // a warp of columns per group still
      });
      with([&](ReductionParams& p) { p.split = inc.split * 2; });
    } else if (mlp) {
      with([](ReductionParams& p) { p.unroll = 8; });
      if (plan.mode == Mode::reduce && inc.split > 1)
        with([&](ReductionParams& p) { p.split = inc.split * 2; });
    }
    if (plan.mode == Mode::reduce)  // columns without vectors: more or fewer 32 apart per thread
      for (int spread : {inc.spread * 2, inc.spread / 2, 1})
        with([&](ReductionParams& p) { p.spread = std::max(1, spread); });
    if (plan.mode == Mode::reduce)
      for (int cg : {1, 4, 8, 16}) with([&](ReductionParams& p) { p.cgroups = cg; });
    for (int unroll : {1, 2, 8}) with([&](ReductionParams& p) { p.unroll = unroll; });
    for (int block : {128, 512}) with([&](ReductionParams& p) { p.block = block; });
    if (plan.mode == Mode::reduce)  // vectors across columns or not
      with([&](ReductionParams& p) { p.vectorized = !inc.vectorized; });
  }
  if (plan.mode == Mode::reduce)
    for (int f : {2, 4}) {
      ReductionParams p = inc;
      p.split = latency ? inc.split * f : std::max(1, inc.split / f);
      add(p);
      p.split = inc.split * f;
      add(p);
    }
  if (out.size() > 12) out.resize(12);
  return out;
}

std::vector<ReductionParams> ReductionFamily::structure_params(const spec::Spec& s,
                                                               const contract::Contract& c,
                                                               const ReductionPlan& pl) const {
  return reduction_structures(pl, stream_elem_size(s, c, pl));
}

ReductionParams ReductionParams::from_json(const json& j) {
  ReductionParams p;
  p.block = j.value("block", p.block);
  p.tpr = j.value("tpr", p.tpr);
  p.vectorized = j.value("vectorized", p.vectorized);
  p.cache = j.value("cache", p.cache);
  p.split = j.value("split", p.split);
  p.items = j.value("items", p.items);
  p.unroll = j.value("unroll", p.unroll);
  p.cgroups = j.value("cgroups", p.cgroups);
  p.spread = j.value("spread", p.spread);
  p.cluster = j.value("cluster", p.cluster);
  p.transpose = j.value("transpose", p.transpose);
  return p;
}

std::vector<ReductionParams> ReductionFamily::tuning_params(const spec::Spec& s,
                                                            const contract::Contract& c,
                                                            const ReductionPlan& pl,
                                                            const ReductionParams& incumbent,
                                                            const std::string& bottleneck) const {
  return reduction_tuning_space(pl, stream_elem_size(s, c, pl), incumbent, bottleneck);
}

std::optional<ReductionParams> ReductionFamily::fallback_params(const spec::Spec&,
                                                                const contract::Contract&,
                                                                const ReductionPlan& pl,
                                                                const ReductionParams&) const {
  // The simplest structure: scalar accesses, a warp per row (or a thread per column), no split,
  // no register cache.
  ReductionParams p;
  p.block = 256;
  p.tpr = 32;
  p.vectorized = false;
  p.items = 4;
  p.unroll = 1;
  if (pl.row() && pl.mode == Mode::reduce) p = with_serial_bound(pl, p);
  return p;
}

}  // namespace egg::backend::builtin
