// The builtin backend's reduction family: [element-wise prologue] → ONE anchor over one dim (or a
// run of adjacent dims, or all dims) → [element-wise epilogue], in one kernel
// (templates/reduction/). Anchors: sum mean prod amax amin max min (values and indices) argmax
// argmin logsumexp, vector norms (rows reduced to one value each), softmax log_softmax, F.normalize
// and keepdim reductions followed by a broadcast epilogue (every element written from its row's
// statistics), cumsum cumprod cummax cummin logcumsumexp (inclusive scans; with torch.flip along
// the scanned dim before and/or after them: reverse scans; exclusive scans as the epilogue
// `cumsum(x) - x`; masked scans as the prologue `x * mask`).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "backend/backend.h"
#include "backend/builtin/family.h"
#include "backend/builtin/op_table.h"
#include "backend/builtin/planned_family.h"
#include "backend/builtin/reduction_ops.h"
#include "render/template.h"

namespace egg::backend::builtin {

// What the graph is, in the terms of the reduction templates.
struct ReductionPlan {
  using Mode = ReductionMode;
  Mode mode = Mode::reduce;
  const spec::Node* anchor = nullptr;
  std::string input;      // the spec value the anchor reads (a leaf or a prologue node)
  spec::Shape in_shape;   // its shape
  spec::Shape out_shape;  // the outputs' shape
  std::int64_t outer = 1, R = 1, inner = 1;  // in_shape as [outer, reduced, inner]
  std::string reducer;  // EggRedSum, EggRedSoftmax, ... (templates/reduction/reducers.cuh)
  // The anchor's CUDA float expressions, from the table (templates/reduction/anchors.json), their
  // fields filled (a vector norm's order p by the table's norm cases: |x|^p in, the 1/p-th power
  // out): an element x (egg_x) entering the reducer, the row's value from the state
  // egg_st, a normalized element (normalize mode) and the same from egg_x = exp(x - max) (empty:
  // the anchor has no such form), a scan's combining op and identity.
  std::string in_expr, row_expr, element_expr, element_exp_expr, scan_op, scan_identity;
  std::vector<const spec::Node*> prologue;  // element-wise ops the anchor's input is computed with
  std::vector<const spec::Node*> epilogue;  // element-wise ops after the anchor
  std::vector<std::string> index_values;    // spec values that are indices (argmax, max(..)[1])
  std::vector<std::string> value_aliases;   // getitem(max(..), 0): the reduced values
  // Scans only: torch.flip along the scanned dim (flip nodes sit in prologue/epilogue as aliases of
  // their operand). The scan runs over logical positions i; in_rev: the tensors that vary along
  // the scanned dim are read at R-1-i; out_rev: the outputs are written at R-1-i.
  int scan_dim = -1;  // the scanned dim of in_shape
  bool in_rev = false, out_rev = false;
  // An exclusive scan (lowering.cpp: cat([identity, scan(x[:-1])])): position i holds the running
  // value of the positions before i (the identity at 0).
  bool exclusive = false;
  // Row scans whose prologue holds layout ops (slices, cat, views), and integer plans: the
  // anchor's input is evaluated by index (backend/builtin/index_ir.h) at each element, read with
  // scalar loads.
  bool gather = false;
  // Integer and bool inputs: the values are long long throughout (exact), the reducer is the
  // table's I variant, the prologue is evaluated by index (gather) and nothing follows the anchor.
  bool integer = false;
  // Normalize rows kept on chip (ReductionParams::cluster): the float arrays a chunk takes in
  // shared memory, 1 for the anchor's input x, or one per full-size operand when the epilogue
  // reads operands other than x (the write pass recomputes x from them).
  int on_chip_arrays = 1;
  bool row() const { return inner == 1; }
  std::int64_t rows() const { return outer * inner; }
};

// The plan of a spec, or why the reduction family cannot implement it (naming op and line).
std::variant<ReductionPlan, UserError> plan_reduction(const spec::Spec& spec, const OpTable& ops,
                                                      const ReductionOps& anchors);

// Tunable parameters of the reduction templates.
struct ReductionParams {
  int block = 256;         // threads per block
  int tpr = 32;            // row layouts: threads per row (a multiple of 32 dividing block)
  bool vectorized = true;  // 16-byte vectors when the row length and pointers allow
  bool cache = false;      // normalize rows: keep the row in registers between the two passes
  int split = 1;           // reduce: blocks per row (partial states merged by a second kernel)
  int items = 8;           // row scan: contiguous elements per thread per chunk
  int unroll = 4;          // column layouts: unroll of the walk down the reduced dim
  int cgroups = 1;         // column reductions: threads of a block sharing each column
  // Column reductions without vectors: columns a thread owns 32 apart (a warp walks spread x 32
  // neighbouring columns, with spread loads in flight per step).
  int spread = 1;
  // Normalize rows too long for registers: the blocks of a thread block cluster (sm_90) that
  // share each row, each keeping its chunk in shared memory (0: off; tpr == block then).
  int cluster = 0;
  // Row scans without vectors: read and write each chunk coalesced through shared memory.
  bool transpose = false;
  nlohmann::json to_json() const;
  static ReductionParams from_json(const nlohmann::json& j);
};

class ReductionFamily : public PlannedFamily<ReductionPlan, ReductionParams> {
 public:
  explicit ReductionFamily(const std::filesystem::path& data_dir);

  std::string name() const override { return "reduction"; }
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;
  std::variant<ReductionPlan, UserError> analyze(const spec::Spec& spec) const override;
  Candidate render(const spec::Spec& spec, const contract::Contract& contract,
                   const ReductionPlan& plan, const ReductionParams& params) const override;

 protected:
  std::vector<ReductionParams> structure_params(const spec::Spec& spec,
                                                const contract::Contract& contract,
                                                const ReductionPlan& plan) const override;
  std::vector<ReductionParams> tuning_params(const spec::Spec& spec,
                                             const contract::Contract& contract,
                                             const ReductionPlan& plan,
                                             const ReductionParams& incumbent,
                                             const std::string& bottleneck) const override;
  std::optional<ReductionParams> fallback_params(const spec::Spec& spec,
                                                 const contract::Contract& contract,
                                                 const ReductionPlan& plan,
                                                 const ReductionParams& failed) const override;

 private:
  OpTable ops_;
  ReductionOps anchors_;
  render::Template reducers_, common_, row_, row_smem_, col_, scan_, launch_, clusters_;
};

// Stage-1 structures (best expert prior first) and stage-2 parameter sets for a plan; every set is
// valid for the plan (block a multiple of tpr, split only for reduce mode, cache only when it
// fits).
std::vector<ReductionParams> reduction_structures(const ReductionPlan& plan, int elem_size);
std::vector<ReductionParams> reduction_tuning_space(const ReductionPlan& plan, int elem_size,
                                                    const ReductionParams& incumbent,
                                                    const std::string& bottleneck);
// True when params suit the plan.
bool reduction_params_valid(const ReductionPlan& plan, int elem_size, const ReductionParams& p);

}  // namespace egg::backend::builtin
