#include "backend/builtin/sinking.h"

#include <algorithm>
#include <vector>

#include "backend/builtin/plan_util.h"
#include "backend/builtin/planner.h"

namespace egg::backend::builtin {

std::optional<spec::Spec> sink_elementwise(const spec::Spec& s, const OpTable& ops) {
  std::vector<size_t> order(s.nodes.size());  // node indices in their new order
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto returned = [&](const spec::Node& n) {
    return std::any_of(s.outputs.begin(), s.outputs.end(),
                       [&](const spec::Output& o) { return o.node == n.name; });
  };
  auto reads = [&](size_t reader, const std::string& value) {
    const auto args = node_args(s.nodes[reader]);
    return std::find(args.begin(), args.end(), value) != args.end();
  };
  bool moved = false;
  for (size_t i = s.nodes.size(); i-- > 0;) {
    const spec::Node& n = s.nodes[i];
    if (!ops.knows(n.op) || returned(n)) continue;
    const auto at = static_cast<size_t>(std::find(order.begin(), order.end(), i) - order.begin());
    size_t first = order.size();  // the position of its first reader
    for (size_t p = at + 1; p < order.size() && first == order.size(); ++p)
      if (reads(order[p], n.name)) first = p;
    // Only a move past an anchor gives the op to another kernel; a shorter one changes nothing.
    bool crosses = false;
    for (size_t p = at + 1; p < first && first < order.size(); ++p)
      crosses = crosses || node_role(s.nodes[order[p]], ops) == NodeRole::anchor;
    if (!crosses) continue;
    order.erase(order.begin() + static_cast<std::ptrdiff_t>(at));
    order.insert(order.begin() + static_cast<std::ptrdiff_t>(first - 1), i);
    moved = true;
  }
  if (!moved) return std::nullopt;
  spec::Spec out = s;
  out.nodes.clear();
  for (size_t i : order) out.nodes.push_back(s.nodes[i]);
  return out;
}

}  // namespace egg::backend::builtin
