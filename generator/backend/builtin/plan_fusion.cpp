// Cross-anchor fusion in the planner: a plan's neighbouring segments merged into one kernel where
// a fusing family takes them together, as alternatives the stages measure against the plan.
#include <algorithm>
#include <map>

#include "backend/builtin/planner.h"

namespace egg::backend::builtin {

std::vector<Plan> fused_plans(const spec::Spec& s, const Plan& base,
                              const std::vector<std::unique_ptr<Family>>& fusing) {
  std::vector<Plan> out;
  if (fusing.empty()) return out;
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < s.nodes.size(); ++i) index_of[s.nodes[i].name] = i;
  auto contains = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  for (size_t k = 0; k + 1 < base.segments.size(); ++k) {
    const PlanSegment& a = base.segments[k];
    const PlanSegment& b = base.segments[k + 1];
    // b reads what a writes, and nothing else a later kernel computes; a's values go to b alone.
    bool ok = !b.reads.empty();
    for (const auto& r : b.reads) ok = ok && contains(a.writes, r);
    for (const auto& w : a.writes) {
      for (const auto& o : s.outputs) ok = ok && o.node != w;
      for (const auto& alias : base.aliases) ok = ok && alias.source != w;
      for (size_t j = 0; j < base.segments.size(); ++j)
        if (j != k + 1 && j != k) ok = ok && !contains(base.segments[j].reads, w);
    }
    if (!ok) continue;
    std::vector<size_t> indices;
    for (const auto* seg : {&a, &b})
      for (const auto& n : seg->nodes) {
        const auto it = index_of.find(n);
        if (it == index_of.end())
          ok = false;
        else
          indices.push_back(it->second);
      }
    if (!ok) continue;
    std::sort(indices.begin(), indices.end());
    PlanSegment merged;
    merged.spec = sub_spec(s, indices);
    merged.family = family_taking(merged.spec, fusing);
    if (!merged.family) continue;
    for (size_t i : indices) merged.nodes.push_back(s.nodes[i].name);
    for (const auto& t : merged.spec.inputs)
      if (s.find_node(t.name)) merged.reads.push_back(t.name);
    for (const auto& o : merged.spec.outputs)
      if (!contains(merged.writes, o.node)) merged.writes.push_back(o.node);
    Plan p = base;
    p.segments[k] = std::move(merged);
    p.segments.erase(p.segments.begin() + static_cast<std::ptrdiff_t>(k) + 1);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace egg::backend::builtin
