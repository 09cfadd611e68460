// The one shape every family of the builtin backend has: an analysis of the spec (its anchored
// segment) into a plan, the parameter sets of its stage-1 structures, its stage-2 tuning space and
// its repair, and a rendering of a plan with a parameter set. A family writes only those; this
// class turns them into the Family interface the planner and the stages call, the same way for all.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "backend/builtin/family.h"

namespace egg::backend::builtin {

// Params must have `nlohmann::json to_json() const` and `static Params from_json(const json&)`
// (a candidate's params are its to_json()).
template <class Plan, class Params>
class PlannedFamily : public Family {
 public:
  // The plan of the spec, or why the family cannot implement it (naming the op and its line).
  virtual std::variant<Plan, UserError> analyze(const spec::Spec& spec) const = 0;
  // Renders a candidate of the plan with these parameters.
  virtual Candidate render(const spec::Spec& spec, const contract::Contract& contract,
                           const Plan& plan, const Params& params) const = 0;

  // The plan; throws the UserError when the family cannot implement the spec.
  Plan plan(const spec::Spec& spec) const {
    auto a = analyze(spec);
    if (auto* e = std::get_if<UserError>(&a)) throw *e;
    return std::get<Plan>(std::move(a));
  }

  std::optional<UserError> cannot_implement(const spec::Spec& spec) const final {
    auto a = analyze(spec);
    if (auto* e = std::get_if<UserError>(&a)) return *e;
    return std::nullopt;
  }
  std::vector<Candidate> structures(const spec::Spec& spec,
                                    const contract::Contract& contract) const final {
    const Plan p = plan(spec);
    std::vector<Candidate> out;
    for (const Params& q : structure_params(spec, contract, p))
      out.push_back(render(spec, contract, p, q));
    return out;
  }
  std::vector<Candidate> tunings(const spec::Spec& spec, const contract::Contract& contract,
                                 const Candidate& incumbent,
                                 const std::string& bottleneck) const final {
    const Plan p = plan(spec);
    std::vector<Candidate> out;
    for (const Params& q :
         tuning_params(spec, contract, p, Params::from_json(incumbent.params), bottleneck))
      out.push_back(render(spec, contract, p, q));
    return out;
  }
  // The repair's parameters, unless they are the failed candidate's own (nothing left to try).
  std::optional<Candidate> fallback(const spec::Spec& spec, const contract::Contract& contract,
                                    const Candidate& failed) const final {
    const Plan p = plan(spec);
    const Params f = Params::from_json(failed.params);
    const std::optional<Params> q = fallback_params(spec, contract, p, f);
    if (!q || q->to_json() == f.to_json()) return std::nullopt;
    return render(spec, contract, p, *q);
  }

 protected:
  // Stage 1: the structures that make sense for the plan, best expert prior first.
  virtual std::vector<Params> structure_params(const spec::Spec& spec,
                                               const contract::Contract& contract,
                                               const Plan& plan) const = 0;
  // Stage 2: variants of the incumbent's parameters, steered by the bottleneck class.
  virtual std::vector<Params> tuning_params(const spec::Spec& spec,
                                            const contract::Contract& contract, const Plan& plan,
                                            const Params& incumbent,
                                            const std::string& bottleneck) const = 0;
  // The debug agent's fallback for a candidate with these parameters (a simpler structure), or
  // nullopt when there is none.
  virtual std::optional<Params> fallback_params(const spec::Spec& spec,
                                                const contract::Contract& contract,
                                                const Plan& plan, const Params& failed) const = 0;
};

}  // namespace egg::backend::builtin
