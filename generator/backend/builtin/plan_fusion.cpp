// Cross-anchor fusion in the planner: a plan's neighbouring segments merged into one kernel where
// a fusing family takes them together, as alternatives the stages measure against the plan.
#include <algorithm>
#include <map>
#include <optional>

#include "backend/builtin/planner.h"

namespace egg::backend::builtin {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Segments k and k + 1 of `p` as one segment, where a family of `fusing` takes their nodes
// together, segment k + 1 reads segment k's values and otherwise only values of segments before
// k (a residual), and segment k's values are read by segment k + 1 alone and are no graph output;
// else nullopt.
std::optional<PlanSegment> merged_pair(const spec::Spec& s, const Plan& p, size_t k,
                                       const std::map<std::string, size_t>& index_of,
                                       const std::vector<std::unique_ptr<Family>>& fusing) {
  const PlanSegment& a = p.segments[k];
  const PlanSegment& b = p.segments[k + 1];
  auto written_before = [&](const std::string& v) {
    for (size_t j = 0; j < k; ++j)
      if (contains(p.segments[j].writes, v)) return true;
    return false;
  };
  bool ok = false;
  for (const auto& r : b.reads) ok = ok || contains(a.writes, r);
  for (const auto& r : b.reads) ok = ok && (contains(a.writes, r) || written_before(r));
  for (const auto& w : a.writes) {
    for (const auto& o : s.outputs) ok = ok && o.node != w;
    for (const auto& alias : p.aliases) ok = ok && alias.source != w;
    for (size_t j = 0; j < p.segments.size(); ++j)
      if (j != k + 1 && j != k) ok = ok && !contains(p.segments[j].reads, w);
  }
  if (!ok) return std::nullopt;
  std::vector<size_t> indices;
  for (const auto* seg : {&a, &b})
    for (const auto& n : seg->nodes) {
      const auto it = index_of.find(n);
      if (it == index_of.end()) return std::nullopt;
      indices.push_back(it->second);
    }
  std::sort(indices.begin(), indices.end());
  return segment_of(s, indices, fusing);
}

}  // namespace

std::vector<Plan> fused_plans(const spec::Spec& s, const Plan& base,
                              const std::vector<std::unique_ptr<Family>>& fusing) {
  if (fusing.empty()) return {};
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < s.nodes.size(); ++i) index_of[s.nodes[i].name] = i;
  // Every pair that fuses, merged from the first segment on (a pair merged is not merged again
  // with its next segment): one alternative, so that a graph of several convolutions, each with
  // its norm (a ResNet block), is measured with all of them fused and not one at a time.
  Plan p = base;
  for (size_t k = 0; k + 1 < p.segments.size(); ++k)
    if (auto merged = merged_pair(s, p, k, index_of, fusing)) {
      p.segments[k] = std::move(*merged);
      p.segments.erase(p.segments.begin() + static_cast<std::ptrdiff_t>(k) + 1);
    }
  if (p.segments.size() == base.segments.size()) return {};  // nothing fused
  return {std::move(p)};
}

}  // namespace egg::backend::builtin
