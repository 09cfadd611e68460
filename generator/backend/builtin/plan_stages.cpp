// The builtin backend's agents for a plan of several kernels: stage 1 combines the segments'
// structures, stage 2 tunes one segment at a time with the others at the incumbent's, and the
// debug agent falls back on the failed segment's family.
#include <cctype>
#include <set>
#include <utility>

#include "backend/builtin/builtin_backend.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

// Most combined candidates a stage proposes (the stage's budget takes the first ones).
constexpr size_t kMaxPlanCandidates = 64;

// The recorded segments of a plan candidate, or null when it is not one of `plan`'s.
const json* plan_record(const Candidate& c, const Plan& plan) {
  if (!c.params.contains("plan") || !c.params["plan"].is_array()) return nullptr;
  const json& record = c.params["plan"];
  if (record.size() != plan.segments.size()) return nullptr;
  // The families and each segment's nodes: plans of one graph may differ only in which kernel
  // computes an element-wise op (sinking.h).
  for (size_t k = 0; k < record.size(); ++k)
    if (record[k].value("family", std::string()) != plan.segments[k].family->name() ||
        record[k].value("nodes", json::array()) != json(plan.segments[k].nodes))
      return nullptr;
  return &record;
}

// True when `text` names `name` as a whole identifier part (not `name` followed by a digit).
bool names(const std::string& text, const std::string& name) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const size_t end = at + name.size();
    if (end >= text.size() || !std::isdigit(static_cast<unsigned char>(text[end]))) return true;
  }
  return false;
}

}  // namespace

void BuiltinBackend::remember(const contract::Contract& sub, const spec::Spec& spec,
                              const std::vector<Candidate>& parts) {
  const std::string prefix = sub.name + "\n" + spec::normalized(spec).dump() + "\n";
  for (const auto& p : parts) parts_.emplace(prefix + p.id, p);
}

Candidate BuiltinBackend::segment_part(const Plan& plan, size_t k, const contract::Contract& sub,
                                       const json& record, const std::string& bottleneck) {
  const PlanSegment& seg = plan.segments.at(k);
  const std::string id = record.value("id", std::string());
  const auto it = parts_.find(sub.name + "\n" + spec::normalized(seg.spec).dump() + "\n" + id);
  if (it != parts_.end()) return it->second;
  // Not rendered by this backend object (e.g. a resumed run): render the family's lists again.
  Candidate recorded;
  recorded.id = id;
  recorded.params = record.value("params", json::object());
  auto structures = seg.family->structures(seg.spec, sub);
  remember(sub, seg.spec, structures);
  for (const auto& c : structures)
    if (c.id == id) return c;
  auto tunings = seg.family->tunings(seg.spec, sub, recorded, bottleneck);
  remember(sub, seg.spec, tunings);
  for (const auto& c : tunings)
    if (c.id == id) return c;
  if (structures.empty())
    throw InternalError("plan: the " + seg.family->name() + " family has no structure for " +
                        sub.name);
  return structures.front();
}

std::vector<Candidate> BuiltinBackend::propose_plan(const StageRequest& request) {
  const spec::Spec& s = *request.spec;
  const contract::Contract& c = *request.contract;
  const std::vector<Plan> all = plans(s);
  // Stage 2 tunes the plan the incumbent is a candidate of; stage 1 proposes every plan's.
  const Plan* tuned = nullptr;
  const json* record = nullptr;
  if (request.stage != "stage1" && request.incumbent)
    for (const auto& p : all)
      if ((record = plan_record(*request.incumbent, p))) {
        tuned = &p;
        break;
      }
  std::vector<Candidate> out;
  std::set<std::string> seen;
  auto add = [&](Candidate combined) {
    if (out.size() < kMaxPlanCandidates && seen.insert(combined.id).second)
      out.push_back(std::move(combined));
  };
  if (!tuned) {
    // Stage 1: the fused alternatives' first structures (one kernel fewer, the intermediate never
    // written), then the plan's library floor, so that a budget of two measures the fused kernel
    // against the library route PyTorch takes; then the plan's first structures (the
    // rearrangements' first structures right after its first and its floor), one segment's other
    // structures at a time, and the alternatives' other structures last.
    std::vector<std::vector<Candidate>> lists(all.size());
    bool floor = false;
    for (size_t i = 0; i < all.size(); ++i)
      lists[i] = stage1_proposals(s, c, all[i], i == 0 ? &floor : nullptr);
    bool ahead = false;  // an alternative proposed before the plan itself
    for (size_t i = 1; i < all.size(); ++i)
      if (!lists[i].empty() && !all[i].after_base) {
        add(lists[i].front());
        ahead = true;
      }
    if (ahead && floor) add(lists.front()[1]);
    bool rearranged = false;
    auto rearrangements = [&] {
      if (std::exchange(rearranged, true)) return;
      for (size_t i = 1; i < all.size(); ++i)
        if (!lists[i].empty() && all[i].after_base) add(lists[i].front());
    };
    for (size_t k = 0; k < lists.front().size(); ++k) {
      add(lists.front()[k]);
      if (k == (floor ? 1 : 0)) rearrangements();  // after the plan's first and its floor
    }
    rearrangements();
    for (size_t i = 1; i < all.size(); ++i)
      for (size_t k = 1; k < lists[i].size(); ++k) add(std::move(lists[i][k]));
    return out;
  }
  const Plan& p = *tuned;
  std::vector<contract::Contract> subs;
  for (size_t k = 0; k < p.segments.size(); ++k)
    subs.push_back(PlanCode::segment_contract(p, k, c.name));

  // Stage 2: each segment's tuning list with the others at the incumbent's, taken round-robin so
  // that every segment is tuned within the stage's candidate budget.
  std::vector<Candidate> incumbent;
  std::vector<std::vector<Candidate>> tunings;
  size_t longest = 0;
  for (size_t k = 0; k < p.segments.size(); ++k) {
    incumbent.push_back(segment_part(p, k, subs[k], (*record)[k], request.bottleneck));
    tunings.push_back(p.segments[k].family->tunings(p.segments[k].spec, subs[k], incumbent.back(),
                                                    request.bottleneck));
    remember(subs[k], p.segments[k].spec, tunings.back());
    longest = std::max(longest, tunings.back().size());
  }
  // A tuning equal to the incumbent's part stays in its place (without a GPU the first candidate
  // wins, as for one family); repeated combinations are proposed once.
  for (size_t i = 0; i < longest; ++i)
    for (size_t k = 0; k < p.segments.size(); ++k) {
      if (i >= tunings[k].size() || out.size() >= kMaxPlanCandidates) continue;
      auto parts = incumbent;
      parts[k] = tunings[k][i];
      add(plan_code_.combine(s, c, p, parts));
    }
  return out;
}

std::vector<Candidate> BuiltinBackend::stage1_proposals(const spec::Spec& s,
                                                        const contract::Contract& c, const Plan& p,
                                                        bool* has_floor) {
  std::vector<contract::Contract> subs;
  for (size_t k = 0; k < p.segments.size(); ++k)
    subs.push_back(PlanCode::segment_contract(p, k, c.name));
  // Every segment's first structure; then one segment's other structures at a time.
  std::vector<std::vector<Candidate>> structures;
  for (size_t k = 0; k < p.segments.size(); ++k) {
    structures.push_back(p.segments[k].family->structures(p.segments[k].spec, subs[k]));
    if (structures.back().empty()) return {};
    remember(subs[k], p.segments[k].spec, structures.back());
  }
  std::vector<Candidate> out;
  std::vector<Candidate> first;
  for (const auto& list : structures) first.push_back(list.front());
  out.push_back(plan_code_.combine(s, c, p, first));
  // Second, the library floor: every segment on the library route PyTorch itself takes where
  // its family offers one (cuDNN for each convolution, ...). Varying one segment at a time
  // would reach it only for the first few segments of a deep network within the budget.
  std::vector<Candidate> floor = first;
  bool differs = false;
  for (size_t k = 0; k < structures.size(); ++k)
    if (!library_route(first[k]))
      for (const auto& option : structures[k])
        if (library_route(option)) {
          floor[k] = option;
          differs = true;
          break;
        }
  if (differs) out.push_back(plan_code_.combine(s, c, p, floor));
  if (has_floor) *has_floor = differs;
  for (size_t k = 0; k < p.segments.size(); ++k)
    for (size_t i = 1; i < structures[k].size() && out.size() < kMaxPlanCandidates; ++i) {
      auto parts = first;
      parts[k] = structures[k][i];
      out.push_back(plan_code_.combine(s, c, p, parts));
    }
  return out;
}

std::optional<Candidate> BuiltinBackend::repair_plan(const StageRequest& request,
                                                     const Candidate& failed,
                                                     const std::string& failure_report) {
  const spec::Spec& s = *request.spec;
  const contract::Contract& c = *request.contract;
  const std::vector<Plan> all = plans(s);
  const json* record = nullptr;
  const Plan* found = nullptr;
  for (const auto& candidate_plan : all)
    if ((record = plan_record(failed, candidate_plan))) {
      found = &candidate_plan;
      break;
    }
  if (!found) return std::nullopt;
  const Plan& p = *found;
  std::vector<contract::Contract> subs;
  std::vector<Candidate> parts;
  for (size_t k = 0; k < p.segments.size(); ++k) {
    subs.push_back(PlanCode::segment_contract(p, k, c.name));
    parts.push_back(segment_part(p, k, subs[k], (*record)[k], request.bottleneck));
  }
  // The segment the report names (a compile error in its code, ...) first, then every segment in
  // order.
  std::vector<size_t> order;
  for (size_t k = p.segments.size(); k-- > 0;)
    if (names(failure_report, subs[k].name)) {
      order.push_back(k);
      break;
    }
  for (size_t k = 0; k < p.segments.size(); ++k)
    if (order.empty() || order.front() != k) order.push_back(k);
  for (size_t k : order) {
    auto fixed = p.segments[k].family->fallback(p.segments[k].spec, subs[k], parts[k]);
    if (!fixed) continue;
    remember(subs[k], p.segments[k].spec, {*fixed});
    parts[k] = *fixed;
    return plan_code_.combine(s, c, p, parts);
  }
  return std::nullopt;
}

}  // namespace egg::backend::builtin
