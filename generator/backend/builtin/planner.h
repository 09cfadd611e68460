// The builtin backend's fusion planner: when no single family takes the whole spec, it partitions
// the graph into segments around its anchors (element-wise prologue → one anchor → element-wise
// epilogue), each a real sub-spec that one family implements unchanged. Intermediate values cross
// segments through device buffers that the plan's launch() allocates on the stream.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backend/builtin/family.h"
#include "backend/builtin/op_table.h"
#include "spec/spec.h"

namespace egg::backend::builtin {

// How a node takes part in partitioning.
enum class NodeRole {
  anchor,        // starts a segment (GEMM, norm, reduction, ... or an op no family knows)
  follower,      // element-wise (or getitem): fused into the segment of the anchor before it
  operand_view,  // transpose/permute of a leaf: goes with the segment that reads it (a GEMM
                 // operand)
  alias,  // reshape/view/flatten/(un)squeeze/contiguous of a contiguous value: no kernel, the
          // same bytes under a new shape (see Plan::aliases)
};

// One kernel of a plan.
struct PlanSegment {
  const Family* family = nullptr;  // the family that implements `spec`
  std::vector<std::string> nodes;  // graph nodes it computes, in topological order
  std::vector<std::string>
      reads;  // intermediate values (nodes of earlier segments) it reads, as sub-spec inputs
  std::vector<std::string> writes;  // values it produces for later segments or the graph's outputs
  spec::Spec spec;  // the sub-spec: graph inputs, params and intermediates it reads; its outputs
};

// A value that is another value's bytes under a new shape (a reshape of a contiguous tensor):
// segments read it through the pointer of `source` (a graph input, param or a segment's value).
struct PlanAlias {
  std::string value;   // the view node
  std::string source;  // the value it aliases (never itself an alias)
};

// Segments in execution order (every value is produced before a later segment reads it).
struct Plan {
  std::vector<PlanSegment> segments;
  std::vector<PlanAlias> aliases;  // in graph order
  // A rearrangement that is not better by construction (sinking.h): stage 1 proposes it after the
  // graph's own plan, not before it as it does a fused or rewritten alternative.
  bool after_base = false;
};

// The role of `node` on its own (element-wise ops are those of the op table); a view that keeps the
// order of the elements is `alias`.
NodeRole node_role(const spec::Node& node, const OpTable& ops);

// The role of every node of `s`: node_role, except that a view stays an anchor (a kernel of its
// own, or the error naming it) where aliasing does not hold: it changes the dtype or the element
// count, reads an operand view, or is a graph output whose source is not a node of its own (a
// graph input, another output, another output view's source). A graph output's view has the
// kernel of its source write the output's bytes.
std::vector<NodeRole> node_roles(const spec::Spec& s, const OpTable& ops);

// The sub-spec computing the nodes at `indices` (ascending) of `s`: it reads graph inputs and
// params as they are and values of other nodes as inputs named after them; it writes the values
// that other nodes or the graph's outputs use (a graph output keeps its name), but the ones in
// `recomputed` (values every reader computes itself) unless the graph returns them.
spec::Spec sub_spec(const spec::Spec& s, const std::vector<size_t>& indices,
                    const std::set<std::string>& recomputed = {});

// The segment computing the nodes at `indices` (ascending) of `s` (sub_spec with `recomputed`):
// the first of `families` that takes them, the nodes' names, the values of other nodes it reads
// and the values it writes; nullopt when no family takes it.
std::optional<PlanSegment> segment_of(const spec::Spec& s, const std::vector<size_t>& indices,
                                      const std::vector<std::unique_ptr<Family>>& families,
                                      const std::set<std::string>& recomputed = {});

// The most specific reason no family takes `s` (a family whose anchor is in the graph explains
// best).
UserError explain_rejection(const spec::Spec& s,
                            const std::vector<std::unique_ptr<Family>>& families);

// The first family that takes `s` (a family that throws counts as not taking it), or null.
const Family* family_taking(const spec::Spec& s,
                            const std::vector<std::unique_ptr<Family>>& families);

// Plans `s`: per anchor, the first accepted of (greedy segment; trailing element-wise ops split
// off, longest fused epilogue first; the prologue before the first anchor as its own segment).
// Throws a UserError naming the op (file, line) of a part no family takes.
Plan plan_graph(const spec::Spec& s, const std::vector<std::unique_ptr<Family>>& families,
                const OpTable& ops);

// The alternative to `base` that fuses neighbouring segments into one kernel wherever a family of
// `fusing` takes their nodes together (a convolution and the channel reduction or norm after it),
// every such pair at once, from the first segment on: the first segment's values are read by the
// second alone and are no graph output. Stage 1 measures it against `base`; none where nothing
// fuses.
std::vector<Plan> fused_plans(const spec::Spec& s, const Plan& base,
                              const std::vector<std::unique_ptr<Family>>& fusing);

}  // namespace egg::backend::builtin
