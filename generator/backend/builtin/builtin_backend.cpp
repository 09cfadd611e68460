#include "backend/builtin/builtin_backend.h"

#include <algorithm>

#include "backend/builtin/algebra.h"
#include "backend/builtin/algebra_conv.h"
#include "backend/builtin/families.h"
#include "backend/builtin/lowering.h"
#include "backend/builtin/raising.h"
#include "backend/builtin/sinking.h"

namespace egg::backend::builtin {

BuiltinBackend::BuiltinBackend(const std::filesystem::path& data_dir, const std::string& precision,
                               Cudnn cudnn, bool wgmma)
    : families_(make_families(data_dir, precision, cudnn, wgmma)),
      fusing_(make_fusing_families(data_dir, cudnn)),
      ops_(data_dir),
      plan_code_(data_dir) {}

const Family* BuiltinBackend::family_for(const spec::Spec& spec) const {
  return family_taking(spec, families_);
}

Plan BuiltinBackend::plan(const spec::Spec& spec) const {
  try {
    return plan_graph(lower_composites(spec), families_, ops_);
  } catch (const UserError& e) {
    throw UserError(
        e.where(), e.what(),
        e.hint() + (e.hint().empty() ? "" : ". ") +
            "The builtin backend runs one kernel per anchor, fusing the element-wise ops around "
            "it; "
            "its anchors: linear, matmul, mm, bmm, addmm; layer_norm, rms_norm, group_norm, "
            "instance_norm, batch_norm; sum, mean, prod, amax, amin, max, min, argmax, argmin, "
            "logsumexp, norm, vector_norm, softmax, log_softmax, normalize, cumsum, cumprod, "
            "cummax, cummin, logcumsumexp; "
            "conv1d/2d/3d, "
            "conv_transpose1d/2d/3d; max_pool1d/2d/3d, "
            "avg_pool1d/2d/3d; mse_loss, l1_loss, huber_loss, smooth_l1_loss, kl_div, "
            "cross_entropy, nll_loss, hinge_embedding_loss, triplet_margin_loss; topk, sort; "
            "scaled_dot_product_attention; embedding_bag");
  }
}

std::vector<Plan> BuiltinBackend::algebra_plans(const spec::Spec& spec) const {
  // Sums and pools over a linear map's output features as products with the reduced weight
  // (algebra.h); a convolution's global sum or mean as a product with the input's window sums
  // (algebra_conv.h): other plans, measured and verified beside the graph as written.
  std::vector<Plan> out;
  for (const auto& reduced : {reduce_linear_features(spec), reduce_conv_spatial(spec)}) {
    if (!reduced) continue;
    try {
      out.push_back(plan_graph(lower_composites(*reduced), families_, ops_));
    } catch (const UserError&) {
      // The graph as written alone.
    }
  }
  return out;
}

std::optional<Plan> BuiltinBackend::sunk_plan(const spec::Spec& lowered, const Plan& base) const {
  const std::optional<spec::Spec> sunk = sink_elementwise(lowered, ops_);
  if (!sunk) return std::nullopt;
  try {
    Plan p = plan_graph(*sunk, families_, ops_);
    p.after_base = true;
    // Another plan only where some kernel computes other nodes, and never one with more kernels.
    const bool same =
        std::equal(p.segments.begin(), p.segments.end(), base.segments.begin(), base.segments.end(),
                   [](const PlanSegment& a, const PlanSegment& b) { return a.nodes == b.nodes; });
    if (same || p.segments.size() > base.segments.size()) return std::nullopt;
    return p;
  } catch (const UserError&) {
    return std::nullopt;  // the graph's own order alone
  }
}

std::optional<Plan> BuiltinBackend::attention_plan(const spec::Spec& spec) const {
  // Attention kept whole (or raised from its written-out form) for the attention family's flash
  // kernel, beside its math; none where that family refuses it (fp32, dropout, a head dim it does
  // not hold, ...).
  const std::optional<spec::Spec> raised = raise_attention(spec);
  const spec::Spec whole = fold_attention_views(raised ? *raised : spec);
  const bool attention =
      std::any_of(whole.nodes.begin(), whole.nodes.end(),
                  [](const spec::Node& n) { return n.op == "scaled_dot_product_attention"; });
  if (!attention) return std::nullopt;
  try {
    Plan kept = plan_graph(lower_composites(whole, true), families_, ops_);
    const bool flash =
        std::any_of(kept.segments.begin(), kept.segments.end(),
                    [](const PlanSegment& seg) { return seg.family->name() == "attention"; });
    if (flash) return kept;
  } catch (const UserError&) {
    // The written-out math alone.
  }
  return std::nullopt;
}

std::vector<Plan> BuiltinBackend::plans(const spec::Spec& spec) const {
  std::vector<Plan> all = {plan(spec)};
  const spec::Spec lowered = lower_composites(spec);
  for (auto& p : fused_plans(lowered, all.front(), fusing_)) all.push_back(std::move(p));
  for (auto& p : algebra_plans(spec)) all.push_back(std::move(p));
  if (auto p = attention_plan(spec)) all.push_back(std::move(*p));
  if (auto p = sunk_plan(lowered, all.front())) all.push_back(std::move(*p));
  return all;
}

void BuiltinBackend::check_supported(const spec::Spec& spec) const {
  if (family_for(lower_composites(spec))) return;
  // No family takes the whole graph: a plan of several kernels, or the error naming the op no
  // family takes (the most specific reason of the part that fails).
  (void)plan(spec);
}

std::vector<Candidate> BuiltinBackend::propose(const StageRequest& original) {
  // Composites no family anchors (attention) as the ops they are made of; the contract is the
  // same (only inner nodes change).
  const spec::Spec lowered = lower_composites(*original.spec);
  StageRequest request = original;
  request.spec = &lowered;
  const Family* family = family_for(*request.spec);
  if (!family) return propose_plan(original);  // plans() lowers it, and keeps attention whole
  if (request.stage == "stage1") return family->structures(*request.spec, *request.contract);
  if (!request.incumbent) return family->structures(*request.spec, *request.contract);
  return family->tunings(*request.spec, *request.contract, *request.incumbent, request.bottleneck);
}

std::optional<Candidate> BuiltinBackend::repair(const StageRequest& original,
                                                const Candidate& failed, const Failure& failure) {
  const spec::Spec lowered = lower_composites(*original.spec);
  StageRequest request = original;
  request.spec = &lowered;
  // Templates are verified ahead; the repair the expert knows is a family's simpler fallback.
  const Family* family = family_for(*request.spec);
  if (!family) return repair_plan(original, failed, failure.text());
  return family->fallback(*request.spec, *request.contract, failed);
}

std::vector<std::pair<std::string, std::string>> BuiltinBackend::key_inputs() const {
  std::vector<std::pair<std::string, std::string>> all;
  for (const auto* list : {&families_, &fusing_})
    for (const auto& f : *list)
      for (auto& input : f->key_inputs()) all.push_back(std::move(input));
  for (auto& input : plan_code_.key_inputs()) all.push_back(std::move(input));
  return all;
}

}  // namespace egg::backend::builtin
