// The builtin backend: a deterministic expert system with no network and no key. Stage 1 picks a
// structure among template variants; stage 2 searches the template's parameters, steered by the
// profile agent's bottleneck class. A spec no single family takes is planned into several kernels
// (planner.h), each segment rendered by its family (plan_stages.cpp).
#pragma once

#include <map>
#include <memory>

#include "backend/backend.h"
#include "backend/builtin/family.h"
#include "backend/builtin/op_table.h"
#include "backend/builtin/plan_code.h"
#include "backend/builtin/planner.h"

namespace egg::backend::builtin {

// The builtin expert backend.
class BuiltinBackend : public Backend {
 public:
  explicit BuiltinBackend(const std::filesystem::path& data_dir,
                          const std::string& precision = "default", Cudnn cudnn = Cudnn::absent,
                          bool wgmma = false);

  std::string name() const override { return "builtin"; }
  void check_supported(const spec::Spec& spec) const override;
  std::vector<Candidate> propose(const StageRequest& request) override;
  std::optional<Candidate> repair(const StageRequest& request, const Candidate& failed,
                                  const Failure& failure) override;
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;

  // The plan of a spec no single family takes; throws the UserError naming the op otherwise.
  Plan plan(const spec::Spec& spec) const;
  // That plan first, then its fused alternatives (planner.h fused_plans).
  std::vector<Plan> plans(const spec::Spec& spec) const;

 private:
  // The family that implements the whole spec (checked by check_supported), or null.
  const Family* family_for(const spec::Spec& spec) const;
  // The plans of the spec's algebraic rewrites (algebra.h, algebra_conv.h): feature reductions of
  // a linear map, a convolution's global sum; none where neither applies or where the rewritten
  // graph has no plan.
  std::vector<Plan> algebra_plans(const spec::Spec& spec) const;
  // The plan with the attention kept whole for the attention family, where it takes it.
  std::optional<Plan> attention_plan(const spec::Spec& spec) const;
  // The plan of the lowered spec (lowering.h) with its element-wise ops sunk to their readers
  // (sinking.h), where it differs from `base` and has no more kernels.
  std::optional<Plan> sunk_plan(const spec::Spec& lowered, const Plan& base) const;
  // Stage proposals for a plan: stage 1 combines the segments' structures, stage 2 each segment's
  // tunings with the others at the incumbent's (plan_stages.cpp).
  std::vector<Candidate> propose_plan(const StageRequest& request);
  // Stage 1's combinations for one plan: every segment's first structure, the library floor
  // (second; `has_floor` says whether there is one), then one segment's other structures at a time.
  std::vector<Candidate> stage1_proposals(const spec::Spec& spec,
                                          const contract::Contract& contract, const Plan& plan,
                                          bool* has_floor = nullptr);
  // The debug agent for a plan: the failed segment (named in the report, else the first that has
  // one) takes its family's fallback (plan_stages.cpp).
  std::optional<Candidate> repair_plan(const StageRequest& request, const Candidate& failed,
                                       const std::string& failure_report);
  // Segment k's candidate as recorded in a plan candidate's params (rendered again, or remembered).
  Candidate segment_part(const Plan& plan, size_t k, const contract::Contract& sub,
                         const nlohmann::json& record, const std::string& bottleneck);
  // Remembers rendered segment candidates so a later stage finds them by id.
  void remember(const contract::Contract& sub, const spec::Spec& spec,
                const std::vector<Candidate>& parts);

  std::vector<std::unique_ptr<Family>> families_;
  std::vector<std::unique_ptr<Family>> fusing_;  // families of the fused alternatives
  OpTable ops_;
  PlanCode plan_code_;
  std::map<std::string, Candidate>
      parts_;  // segment candidates by sub-contract name, sub-spec and id
};

}  // namespace egg::backend::builtin
