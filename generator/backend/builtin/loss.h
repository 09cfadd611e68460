// The builtin backend's loss family: [element-wise prologue on the operands] → ONE loss → [element-
// wise epilogue], rendered from templates/loss/. Element-wise losses (mse, l1, huber, smooth_l1,
// kl_div, hinge_embedding) stream the elements; row losses (cross_entropy over class dim 1 of
// [N, C] logits with int64 targets, triplet_margin with p=2 over the last dim of [B, D]) give a
// group of threads each row; nll_loss (the same [N, C] and targets, optional class weights) a
// thread each row, reading its target's element. reduction='none' writes every loss; 'mean', 'sum'
// and 'batchmean' add per-block partials in a second, fixed-order pass (deterministic, no atomics).
// fp32 math.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "backend/backend.h"
#include "backend/builtin/family.h"
#include "backend/builtin/loss_ops.h"
#include "backend/builtin/op_table.h"
#include "backend/builtin/planned_family.h"
#include "render/template.h"

namespace egg::backend::builtin {

// What the graph is, in the terms of the loss templates.
struct LossPlan {
  const spec::Node* anchor = nullptr;
  std::string kind;     // mse l1 huber smooth_l1 kl_div hinge cross_entropy nll triplet
  bool rows = false;    // row structure (cross_entropy, nll, triplet)
  bool gather = false;  // a row loss reading only its target's element (nll): a thread per row
  std::string reduction = "mean";     // mean | sum | none | batchmean
  std::vector<std::string> operands;  // float operands' spec values (input, target[, negative])
  std::string target;                 // cross_entropy, nll: the int64 class-index target leaf
  std::string weight;                 // nll: the [C] class weight leaf, or empty
  spec::Shape elem_shape;             // element-wise: the broadcast shape; rows: [rows, len]
  spec::Shape out_shape;              // the outputs' shape ([] unless reduction='none')
  std::int64_t n = 1;                 // elements (element-wise) or rows (row losses)
  std::int64_t len = 1;               // row losses: row length (classes or features)
  double divisor = 1;                 // mean/batchmean: what the sum is divided by (CE: the count)
  // The table's CUDA expressions (templates/loss/losses.json), fields filled: element-wise, the
  // loss of egg_v[0], egg_v[1]; rows, the state type, how an element enters it, a row's loss.
  std::string loss_expr, state, push_expr, row_loss_expr;
  double margin = 1.0, eps = 1e-6, label_smoothing = 0.0;
  std::int64_t ignore_index = -100;
  bool swap = false;
  std::vector<const spec::Node*> prologue;  // element-wise ops computing the operands
  std::vector<const spec::Node*> epilogue;  // element-wise ops after the loss
};

// The plan of a spec, or why the loss family cannot implement it (naming op and line).
std::variant<LossPlan, UserError> plan_loss(const spec::Spec& spec, const OpTable& ops,
                                            const LossOps& losses);

// Tunable parameters of the loss templates.
struct LossParams {
  int block = 256;         // threads per block
  int tpr = 32;            // row losses: threads per row (32..1024, power of two, divides block)
  int grid = 0;            // blocks (0: from the problem, capped at blocks_per_sm * 132)
  int blocks_per_sm = 8;   // grid cap per SM when grid == 0
  bool vectorized = true;  // 16-byte loads when lengths and pointers allow
  nlohmann::json to_json() const;
  static LossParams from_json(const nlohmann::json& j);
};

// The loss family.
class LossFamily : public PlannedFamily<LossPlan, LossParams> {
 public:
  explicit LossFamily(const std::filesystem::path& data_dir);

  std::string name() const override { return "loss"; }
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;
  std::variant<LossPlan, UserError> analyze(const spec::Spec& spec) const override;
  Candidate render(const spec::Spec& spec, const contract::Contract& contract, const LossPlan& plan,
                   const LossParams& params) const override;

 protected:
  std::vector<LossParams> structure_params(const spec::Spec& spec,
                                           const contract::Contract& contract,
                                           const LossPlan& plan) const override;
  std::vector<LossParams> tuning_params(const spec::Spec& spec, const contract::Contract& contract,
                                        const LossPlan& plan, const LossParams& incumbent,
                                        const std::string& bottleneck) const override;
  std::optional<LossParams> fallback_params(const spec::Spec& spec,
                                            const contract::Contract& contract,
                                            const LossPlan& plan,
                                            const LossParams& failed) const override;

 private:
  OpTable ops_;
  LossOps losses_table_;
  render::Template losses_, common_, pointwise_, rows_, launch_;
};

// Stage-1 structures and stage-2 parameter sets for a plan (every set valid for it).
std::vector<LossParams> loss_structures(const LossPlan& plan);
std::vector<LossParams> loss_tuning_space(const LossPlan& plan, const LossParams& incumbent,
                                          const std::string& bottleneck);

}  // namespace egg::backend::builtin
