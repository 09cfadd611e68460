#include "backend/builtin/planner.h"

#include "backend/builtin/index_ir.h"
#include "backend/builtin/plan_util.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace egg::backend::builtin {
namespace {

// Values (node, input or param names) an argument reads, lists included.
void collect_reads(const spec::Arg& a, std::vector<std::string>& out) {
  if (a.kind == spec::Arg::Kind::node) out.push_back(a.node);
  if (a.kind == spec::Arg::Kind::list)
    for (const auto& item : a.items) collect_reads(item, out);
}

// Values a node reads.
std::vector<std::string> reads_of(const spec::Node& n) {
  std::vector<std::string> out;
  for (const auto& a : n.args) collect_reads(a, out);
  return out;
}

// The nodes of one anchor's group, by their place around the anchor.
struct Group {
  std::vector<size_t> views;     // operand views that the anchor piece reads
  std::vector<size_t> prologue;  // followers before the anchor (only before the first anchor)
  std::optional<size_t> anchor;  // none only when the graph has no anchor
  std::vector<size_t> epilogue;  // followers after the anchor
};

// Assigns every node to a group: a group per anchor, followers to the anchor before them (or the
// first group), operand views of leaves to the group of their first reader; aliases to none.
std::vector<Group> group_nodes(const spec::Spec& s, const std::vector<NodeRole>& roles) {
  const size_t n = s.nodes.size();
  std::vector<int> group(n, -1);
  std::vector<NodeRole> role = roles;
  std::vector<bool> deferred(n, false);
  int current = -1, count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (role[i] == NodeRole::alias) continue;
    if (role[i] == NodeRole::operand_view) {
      bool leaves = true;
      for (const auto& v : reads_of(s.nodes[i])) leaves = leaves && s.find_tensor(v) != nullptr;
      if (leaves) {
        deferred[i] = true;
        group[i] = std::max(current, 0);  // replaced by its first reader's group below
        continue;
      }
      role[i] = NodeRole::follower;
    }
    if (role[i] == NodeRole::anchor) current = count++;
    group[i] = std::max(current, 0);
  }
  for (size_t i = n; i-- > 0;) {
    if (!deferred[i]) continue;
    for (size_t j = i + 1; j < n; ++j) {
      const auto r = reads_of(s.nodes[j]);
      if (role[j] != NodeRole::alias && std::find(r.begin(), r.end(), s.nodes[i].name) != r.end()) {
        group[i] = group[j];
        break;
      }
    }
  }
  std::vector<Group> groups(std::max(count, 1));
  for (size_t i = 0; i < n; ++i) {
    if (group[i] < 0) continue;  // an alias: no kernel
    Group& g = groups[group[i]];
    if (deferred[i])
      g.views.push_back(i);
    else if (role[i] == NodeRole::anchor)
      g.anchor = i;
    else if (g.anchor)
      g.epilogue.push_back(i);
    else
      g.prologue.push_back(i);
  }
  return groups;
}

// The ways to cut a group into pieces, in the order they are tried: the greedy segment first, then
// trailing element-wise ops split off (longest fused epilogue first); then the same with the
// prologue as its own segment, then with the operand views in it too.
std::vector<std::vector<std::vector<size_t>>> group_options(const Group& g) {
  std::vector<std::vector<std::vector<size_t>>> options;
  if (!g.anchor) {
    std::vector<size_t> all = g.views;
    all.insert(all.end(), g.prologue.begin(), g.prologue.end());
    all.insert(all.end(), g.epilogue.begin(), g.epilogue.end());
    std::sort(all.begin(), all.end());
    options.push_back({all});
    return options;
  }
  // 0: one piece; 1: the prologue its own piece; 2: the operand views too (an anchor that cannot
  // read a transposed operand gets it copied by an element-wise kernel first).
  for (int split = 0; split < 3; ++split) {
    if (split == 1 && g.prologue.empty()) continue;
    if (split == 2 && g.views.empty()) break;
    for (size_t j = g.epilogue.size() + 1; j-- > 0;) {
      std::vector<std::vector<size_t>> pieces;
      std::vector<size_t> before = split == 2 ? g.views : std::vector<size_t>{};
      if (split > 0) before.insert(before.end(), g.prologue.begin(), g.prologue.end());
      std::sort(before.begin(), before.end());
      if (!before.empty()) pieces.push_back(before);
      std::vector<size_t> main = split == 2 ? std::vector<size_t>{} : g.views;
      if (split == 0) main.insert(main.end(), g.prologue.begin(), g.prologue.end());
      main.push_back(*g.anchor);
      main.insert(main.end(), g.epilogue.begin(),
                  g.epilogue.begin() + static_cast<std::ptrdiff_t>(j));
      std::sort(main.begin(), main.end());
      pieces.push_back(main);
      if (j < g.epilogue.size())
        pieces.emplace_back(g.epilogue.begin() + static_cast<std::ptrdiff_t>(j), g.epilogue.end());
      options.push_back(pieces);
    }
  }
  return options;
}

// `nodes` (sorted) in parts that read nothing of each other, through views that alias a value
// (`aliases`, each resolved to its source) too: the weakly connected components of their
// dataflow, each sorted, in the order of their first node.
std::vector<std::vector<size_t>> independent_parts(const spec::Spec& s,
                                                   const std::vector<PlanAlias>& aliases,
                                                   const std::vector<size_t>& nodes) {
  std::map<std::string, size_t> slot;  // node name -> its place in `nodes`
  for (size_t k = 0; k < nodes.size(); ++k) slot[s.nodes[nodes[k]].name] = k;
  std::map<std::string, std::string> source;  // an alias's value is its source's
  for (const auto& a : aliases) source[a.value] = a.source;
  std::vector<size_t> parent(nodes.size());
  for (size_t k = 0; k < parent.size(); ++k) parent[k] = k;
  auto root = [&](size_t k) {
    while (parent[k] != k) k = parent[k] = parent[parent[k]];
    return k;
  };
  for (size_t k = 0; k < nodes.size(); ++k)
    for (const auto& v : reads_of(s.nodes[nodes[k]]))
      if (auto it = slot.find(source.count(v) ? source.at(v) : v); it != slot.end())
        parent[root(k)] = root(it->second);
  std::map<size_t, size_t> part_of;  // root -> index in parts
  std::vector<std::vector<size_t>> parts;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const size_t r = root(k);
    auto [it, fresh] = part_of.emplace(r, parts.size());
    if (fresh) parts.emplace_back();
    parts[it->second].push_back(nodes[k]);
  }
  return parts;
}

}  // namespace

NodeRole node_role(const spec::Node& node, const OpTable& ops) {
  static const std::set<std::string> views = {"transpose", "permute"};
  // Views that keep the elements' order (docs/SPEC.md's canonical names): on a contiguous value
  // they are the same bytes. So are a clone and a detach (element-wise identities in the op table
  // too): the graph is functional, nothing writes a value in place (`original_x =
  // x.clone().detach()` before a residual add copies nothing).
  static const std::set<std::string> order_keeping = {"reshape", "flatten", "unsqueeze",
                                                      "squeeze", "clone",   "detach"};
  if (order_keeping.count(node.op)) return NodeRole::alias;
  if (ops.knows(node.op) || node.op == "getitem") return NodeRole::follower;
  if (views.count(node.op)) return NodeRole::operand_view;
  // Slices, cat, expand, flip, ...: index expressions of the element-wise kernels (index_ir.h).
  if (is_layout_op(node.op)) return NodeRole::follower;
  return NodeRole::anchor;
}

std::vector<NodeRole> node_roles(const spec::Spec& s, const OpTable& ops) {
  std::vector<NodeRole> roles;
  std::map<std::string, std::string> root;  // alias → the value it aliases (never an alias)
  std::set<std::string> output_roots;       // values a graph output's view is the bytes of
  auto outputs_of = [&](const std::string& v) {
    int k = 0;
    for (const auto& o : s.outputs) k += o.node == v ? 1 : 0;
    return k;
  };
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const spec::Node& n = s.nodes[i];
    NodeRole role = node_role(n, ops);
    // The attention kernel writes its output with the heads merged back (transpose(1, 2)): that
    // transpose is its epilogue, a value in memory a reshape can alias.
    if (role == NodeRole::operand_view && !n.args.empty() &&
        n.args[0].kind == spec::Arg::Kind::node)
      if (const spec::Node* src = s.find_node(n.args[0].node);
          src && src->op == "scaled_dot_product_attention")
        role = NodeRole::follower;
    if (role == NodeRole::alias) {
      // Every value a plan passes between kernels, and every graph input and param, is contiguous;
      // the view must read exactly one of them and leave its dtype and element count alone.
      const auto reads = reads_of(n);
      bool holds = reads.size() == 1;
      if (holds) {
        const spec::Tensor* t = s.find_tensor(reads[0]);
        const spec::Node* src = s.find_node(reads[0]);
        if (t) {
          holds = t->dtype == n.dtype && spec::numel(t->shape) == spec::numel(n.shape);
        } else if (src) {
          const size_t j = static_cast<size_t>(src - s.nodes.data());
          holds = j < i && roles[j] != NodeRole::operand_view && src->dtype == n.dtype &&
                  spec::numel(src->shape) == spec::numel(n.shape);
        } else {
          holds = false;
        }
      }
      const std::string r = !holds ? "" : root.count(reads[0]) ? root.at(reads[0]) : reads[0];
      if (holds && outputs_of(n.name) > 0) {
        // A view returned by the graph: the kernel computing its source writes the output's bytes
        // (the source is computed here, returned by nothing else and no other output's view).
        holds = outputs_of(n.name) == 1 && s.find_node(r) != nullptr && outputs_of(r) == 0 &&
                !output_roots.count(r);
        if (holds) output_roots.insert(r);
      }
      if (holds) {
        root[n.name] = r;
      } else {
        // A copy by index in an element-wise kernel (a reshape of a transposed value, a view
        // returned as the output); a view that changes the element count stays an anchor, for
        // the error naming it.
        const spec::Tensor* t = reads.size() == 1 ? s.find_tensor(reads[0]) : nullptr;
        const spec::Node* src = reads.size() == 1 ? s.find_node(reads[0]) : nullptr;
        const bool same_count = (t && spec::numel(t->shape) == spec::numel(n.shape)) ||
                                (src && spec::numel(src->shape) == spec::numel(n.shape));
        role = same_count ? NodeRole::follower : NodeRole::anchor;
      }
    }
    roles.push_back(role);
  }
  return roles;
}

std::optional<PlanSegment> segment_of(const spec::Spec& s, const std::vector<size_t>& indices,
                                      const std::vector<std::unique_ptr<Family>>& families,
                                      const std::set<std::string>& recomputed) {
  PlanSegment seg;
  seg.spec = sub_spec(s, indices, recomputed);
  seg.family = family_taking(seg.spec, families);
  if (!seg.family) return std::nullopt;
  for (size_t i : indices) seg.nodes.push_back(s.nodes[i].name);
  for (const auto& t : seg.spec.inputs)
    if (s.find_node(t.name)) seg.reads.push_back(t.name);
  for (const auto& o : seg.spec.outputs)
    if (std::find(seg.writes.begin(), seg.writes.end(), o.node) == seg.writes.end())
      seg.writes.push_back(o.node);
  return seg;
}

spec::Spec sub_spec(const spec::Spec& s, const std::vector<size_t>& indices,
                    const std::set<std::string>& recomputed) {
  std::set<std::string> inside, read, used_outside;
  for (size_t i : indices) inside.insert(s.nodes[i].name);
  for (size_t i : indices)
    for (const auto& v : reads_of(s.nodes[i]))
      if (!inside.count(v)) read.insert(v);
  for (const auto& n : s.nodes)
    if (!inside.count(n.name))
      for (const auto& v : reads_of(n)) used_outside.insert(v);

  spec::Spec out;
  out.schema = s.schema;
  out.op_file = s.op_file;
  out.model_class = s.model_class;
  out.init_inputs = s.init_inputs;
  out.deps = s.deps;
  out.reference = s.reference;
  for (const auto& t : s.inputs)
    if (read.count(t.name)) out.inputs.push_back(t);
  for (const auto& n : s.nodes)
    if (read.count(n.name)) out.inputs.push_back(spec::Tensor{n.name, n.shape, n.dtype, ""});
  for (const auto& t : s.params)
    if (read.count(t.name)) out.params.push_back(t);
  for (size_t i : indices) {
    const spec::Node& n = s.nodes[i];
    out.nodes.push_back(n);
    bool graph_output = false;
    for (const auto& o : s.outputs)
      if (o.node == n.name) {
        out.outputs.push_back(o);
        graph_output = true;
      }
    if (!graph_output && used_outside.count(n.name) && !recomputed.count(n.name))
      out.outputs.push_back(spec::Output{n.name, n.name, n.shape, n.dtype});
  }
  return out;
}

const Family* family_taking(const spec::Spec& s,
                            const std::vector<std::unique_ptr<Family>>& families) {
  for (const auto& f : families) {
    try {
      if (!f->cannot_implement(s)) return f.get();
    } catch (const std::exception&) {
      // A family that cannot even analyze the sub-spec does not take it.
    }
  }
  return nullptr;
}

UserError explain_rejection(const spec::Spec& s,
                            const std::vector<std::unique_ptr<Family>>& families) {
  // An op the frontend keeps by its ATen name is outside EGG's op set: no family has it, and it is
  // the reason, whatever the families say about the rest of the part.
  for (const auto& n : s.nodes)
    if (n.op.rfind("aten.", 0) == 0)
      return UserError(
          n.where,
          "the builtin backend cannot generate a kernel for " + quote(n) +
              ": the op is outside EGG's op set",
          "docs/SPEC.md lists the ops it covers: rewrite this one with them, or "
          "generate the kernel with an LLM backend (egg_kernel BACKEND openai or anthropic)");
  std::optional<UserError> best;
  for (const auto& f : families) {
    std::optional<UserError> why;
    try {
      why = f->cannot_implement(s);
    } catch (const std::exception&) {
      continue;
    }
    if (!why) continue;
    // The first reason with a line wins. Without one, the last family's: the anchor families only
    // say their anchor is missing, the element-wise family (last) says what of the graph it cannot
    // write.
    if (!best || best->where().line == 0) best = why;
  }
  if (best && best->where().line > 0) return *best;
  // No family's reason names a line: the part's first op is where the user looks, with the
  // element-wise family's reason.
  if (s.nodes.empty())
    return best ? *best
                : UserError(SourceLocation{s.op_file, 0, "op"},
                            "no builtin family implements this part of the op");
  const spec::Node& first = s.nodes.front();
  std::string ops;  // the first few, then how many more
  constexpr size_t kNamed = 4;
  for (size_t i = 0; i < std::min(s.nodes.size(), kNamed); ++i)
    ops += (i ? ", " : "") + quote(s.nodes[i]);
  if (s.nodes.size() > kNamed) ops += " and " + std::to_string(s.nodes.size() - kNamed) + " more";
  return UserError(first.where,
                   "no builtin family implements the part of the op made of " + ops +
                       (best ? std::string(" (") + best->what() + ")" : std::string()),
                   best && !best->hint().empty()
                       ? best->hint()
                       : "rewrite this part with the ops docs/SPEC.md lists, or generate the "
                         "kernel with an LLM backend (egg_kernel BACKEND openai or anthropic)");
}

namespace {

// Which values every kernel that reads them computes itself, never a buffer: none; those computed
// from no input or parameter (a mask built in forward); or those computed from the inputs and
// parameters alone by element-wise ops (an input mask cast to float).
enum class Recompute { none, constants, leaf_values };

// One partition of the graph, values recomputed by their readers as `recompute` says; with
// `split_prologues`, a prologue that is no one kernel, nor one per independent part, is cut into
// the longest runs in order (plan_graph tries none without splitting first, this last).
Plan partition(const spec::Spec& s, const std::vector<std::unique_ptr<Family>>& families,
               const OpTable& ops, Recompute recompute, bool split_prologues) {
  for (const auto& o : s.outputs)
    if (!s.find_node(o.node))
      throw UserError(
          SourceLocation{s.op_file, 0, "output"},
          "output " + o.name + " returns `" + o.node +
              "` unchanged, which a plan of several kernels "
              "does not copy",
          "return computed values only (e.g. drop the unchanged input from the outputs)");
  Plan plan;
  const std::vector<NodeRole> roles = node_roles(s, ops);
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    if (roles[i] != NodeRole::alias) continue;
    std::string source = reads_of(s.nodes[i]).front();
    for (const auto& a : plan.aliases)
      if (a.value == source) source = a.source;
    plan.aliases.push_back(PlanAlias{s.nodes[i].name, source});
  }
  // A view that a piece reads of a value the same piece computes is computed there too (by index:
  // the value's buffer is written by the kernel that would read it).
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < s.nodes.size(); ++i) index_of[s.nodes[i].name] = i;
  // Values recomputed by their readers (a mask built in forward, tril(ones(T, T)); with
  // leaf_values also an input mask cast to float that two reductions read): every kernel that
  // reads one computes it itself, never a buffer of its own (a mask a family's epilogue cannot
  // read; a cast read by reductions of two sizes would need a kernel of two output sizes), so they
  // are left out of the pieces and pulled into their readers. An anchor or a graph output is
  // computed as any other value; a view of an input or parameter stays a view (an alias of its
  // buffer).
  std::set<std::string> constant, leaf_views;
  auto leaf = [&](const std::string& v) {
    return recompute == Recompute::leaf_values &&
           (s.find_tensor(v) != nullptr || leaf_views.count(v) > 0);
  };
  for (size_t i = 0; recompute != Recompute::none && i < s.nodes.size(); ++i) {
    const auto& n = s.nodes[i];
    const auto reads = reads_of(n);
    if (roles[i] == NodeRole::alias && !reads.empty() && leaf(reads.front())) {
      leaf_views.insert(n.name);
      continue;
    }
    // Of the inputs' values only element-wise ops are recomputed: a gather (an embedding) is read
    // from its buffer, which a reduction's prologue can take.
    bool from_leaves =
        roles[i] != NodeRole::anchor && (recompute == Recompute::constants || ops.knows(n.op) ||
                                         roles[i] == NodeRole::alias || reads.empty());
    for (const auto& v : reads) from_leaves = from_leaves && (constant.count(v) > 0 || leaf(v));
    for (const auto& o : s.outputs) from_leaves = from_leaves && o.node != n.name;
    if (from_leaves) constant.insert(n.name);
  }
  auto without_constants = [&](const std::vector<size_t>& piece) {
    std::vector<size_t> kept;
    for (size_t i : piece)
      if (!constant.count(s.nodes[i].name)) kept.push_back(i);
    return kept;
  };
  std::set<std::string> computed_views;
  auto with_views = [&](std::vector<size_t> piece) {
    std::set<std::string> inside;
    for (size_t i : piece) inside.insert(s.nodes[i].name);
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t k = 0; k < piece.size(); ++k)
        for (const auto& v : reads_of(s.nodes[piece[k]])) {
          if (constant.count(v) && !inside.count(v)) {  // computed here too
            piece.push_back(index_of.at(v));
            inside.insert(v);
            grew = true;
            continue;
          }
          // The chain of views from v back to the first value that is no view outside the piece.
          std::vector<size_t> chain;
          std::string cur = v;
          for (auto at = index_of.find(cur);
               at != index_of.end() && !inside.count(cur) && roles[at->second] == NodeRole::alias;
               at = index_of.find(cur)) {
            chain.push_back(at->second);
            cur = reads_of(s.nodes[at->second]).front();
          }
          if (chain.empty() || !inside.count(cur)) continue;
          for (size_t c : chain) {
            piece.push_back(c);
            inside.insert(s.nodes[c].name);
          }
          grew = true;
        }
    }
    std::sort(piece.begin(), piece.end());
    return piece;
  };
  // The segment computing `piece` (its views added), or nullopt when no family takes it.
  auto segment_for = [&](const std::vector<size_t>& nodes) {
    return segment_of(s, with_views(without_constants(nodes)), families, constant);
  };
  // The segments of `pieces` (empty ones skipped), or nullopt when a piece is taken by no family.
  auto segments_of = [&](const std::vector<std::vector<size_t>>& pieces)
      -> std::optional<std::vector<PlanSegment>> {
    std::vector<PlanSegment> segments;
    for (const auto& piece : pieces) {
      if (without_constants(piece).empty()) continue;
      auto seg = segment_for(piece);
      if (!seg) return std::nullopt;
      segments.push_back(std::move(*seg));
    }
    return segments;
  };
  // `nodes` in order, cut into the longest runs a family takes each (a run of one node stands
  // alone even when none does: segments_of then says so).
  auto greedy_runs = [&](const std::vector<size_t>& nodes) {
    std::vector<std::vector<size_t>> runs;
    std::vector<size_t> current;
    for (size_t i : nodes) {
      if (constant.count(s.nodes[i].name)) continue;  // computed by its readers
      std::vector<size_t> longer = current;
      longer.push_back(i);
      if (current.empty() || segment_for(longer)) {
        current = longer;
        continue;
      }
      runs.push_back(current);
      current.assign(1, i);  // not `= {i}`: g++ 13 -Warray-bounds misreads it
    }
    if (!current.empty()) runs.push_back(current);
    return runs;
  };
  // The element-wise tail that the previous anchor's kernel could not fuse (its value broadcast
  // up to a larger shape, x * colsum(W)): held back and tried as the next anchor's prologue first,
  // its own kernel only where that family does not take it.
  std::vector<size_t> carried;
  std::optional<PlanSegment> carried_seg;
  auto emit = [&](PlanSegment seg) {
    for (const auto& n : seg.nodes)
      if (roles[index_of.at(n)] == NodeRole::alias) computed_views.insert(n);
    plan.segments.push_back(std::move(seg));
  };
  for (Group g : group_nodes(s, roles)) {
    std::optional<std::vector<PlanSegment>> placed;
    std::vector<size_t> failed;  // the piece that no family takes, once known
    std::vector<std::vector<std::vector<size_t>>> options;
    const std::vector<std::vector<size_t>>* chosen = nullptr;  // the option placed
    auto place = [&] {
      for (const auto& option : options)
        if ((placed = segments_of(option))) {
          chosen = &option;
          return;
        }
    };
    if (!carried.empty() && g.anchor) {
      Group with = g;
      with.prologue.insert(with.prologue.end(), carried.begin(), carried.end());
      std::sort(with.prologue.begin(), with.prologue.end());
      options = group_options(with);
      place();
      if (placed) g = with;
    }
    if (!placed) {
      if (carried_seg) emit(std::move(*carried_seg));
      options = group_options(g);
      place();
    }
    carried.clear();
    carried_seg.reset();
    if (placed && chosen && g.anchor && chosen->size() > 1 && !placed->empty() &&
        std::all_of(chosen->back().begin(), chosen->back().end(), [&](size_t i) {
          return std::find(g.epilogue.begin(), g.epilogue.end(), i) != g.epilogue.end();
        })) {
      carried = chosen->back();
      carried_seg = std::move(placed->back());
      placed->pop_back();
    }
    if (!placed && !g.anchor) {
      // Outputs that share no op (a graph of independent parts): a kernel per part, each fused
      // whole, before cutting anything in order.
      const auto parts = independent_parts(s, plan.aliases, options.front().front());
      if (parts.size() > 1) placed = segments_of(parts);
    }
    if (!placed) {
      // Last resort: the anchor's piece bare, then the ops after it in order, each kernel as long
      // as a family takes it (a tail whose outputs differ in element count is several kernels).
      std::vector<std::vector<size_t>> pieces;
      std::vector<size_t> tail = g.epilogue;
      if (g.anchor) {
        std::vector<size_t> main = g.views;
        main.push_back(*g.anchor);
        std::sort(main.begin(), main.end());
        std::vector<size_t> pro = g.prologue;
        if (!g.views.empty() && !segment_for(main)) {
          // The anchor's family does not read these views of its operands as they are (a GEMM
          // operand permuted other than as a transpose it takes): the prologue copies them into
          // contiguous buffers first.
          pro.insert(pro.end(), g.views.begin(), g.views.end());
          std::sort(pro.begin(), pro.end());
          main.assign(1, *g.anchor);
        }
        // The prologue one kernel, or one per independent part (the operands of a contraction
        // permuted each on its own: outputs that differ in element count), or else the longest
        // runs in order (an embedding, then a mask that another reduction reads too, then the
        // product of the two).
        if (pro.empty() || segment_for(pro)) {
          pieces.push_back(pro);
        } else {
          auto parts = independent_parts(s, plan.aliases, pro);
          bool each = true;
          for (const auto& part : parts) each = each && segment_for(part).has_value();
          if (!each && split_prologues) parts = greedy_runs(pro);
          for (auto& part : parts) pieces.push_back(std::move(part));
        }
        pieces.push_back(main);
      } else {
        tail = options.front().front();
      }
      // The tail one kernel per independent part where each is one (the operands of a later
      // anchor taken apart beside a mask it reads), else the longest runs in order.
      auto tail_parts = independent_parts(s, plan.aliases, tail);
      bool each = tail_parts.size() > 1;
      for (const auto& part : tail_parts) each = each && segment_for(part).has_value();
      if (!each) tail_parts = greedy_runs(tail);
      for (auto& run : tail_parts) pieces.push_back(std::move(run));
      placed = segments_of(pieces);
      // The first piece no family takes is the one to explain: its ops are the reason.
      for (const auto& piece : pieces)
        if (!placed && !without_constants(piece).empty() && !segment_for(piece)) {
          failed = with_views(without_constants(piece));
          break;
        }
    }
    if (!placed) {
      // The whole group's reason where it names a line (it speaks of the graph's own outputs),
      // else the reason of the first piece no family takes.
      std::vector<size_t> all;
      for (const auto& piece : options.front()) all.insert(all.end(), piece.begin(), piece.end());
      std::sort(all.begin(), all.end());
      UserError why = explain_rejection(sub_spec(s, all, constant), families);
      if (why.where().line == 0 && !failed.empty()) {
        std::sort(failed.begin(), failed.end());
        why = explain_rejection(sub_spec(s, failed, constant), families);
      }
      throw why;
    }
    for (auto& seg : *placed) emit(std::move(seg));
  }
  if (carried_seg) emit(std::move(*carried_seg));
  if (!computed_views.empty()) {
    // A view computed by a kernel is a value like any other: the others alias the nearest value
    // a kernel writes.
    std::vector<PlanAlias> kept;
    for (const auto& a : plan.aliases) {
      if (computed_views.count(a.value)) continue;
      std::string source = reads_of(s.nodes[index_of.at(a.value)]).front();
      for (const PlanAlias* up = nullptr;; source = up->source) {
        up = nullptr;
        for (const auto& b : kept)
          if (b.value == source) up = &b;
        if (!up) break;
      }
      kept.push_back(PlanAlias{a.value, source});
    }
    plan.aliases = std::move(kept);
  }
  return plan;
}

}  // namespace

Plan plan_graph(const spec::Spec& s, const std::vector<std::unique_ptr<Family>>& families,
                const OpTable& ops) {
  try {
    return partition(s, families, ops, Recompute::none, false);
  } catch (const UserError& first) {
    // Values of no input (a bool mask built in forward), then values of the inputs alone (an
    // input mask cast to float), computed where they are read, each kernel its own copy: only
    // where materializing them fails, so a plan that works keeps its buffers (a GEMM operand of
    // ones stays a buffer the GEMM reads; a masked GEMM operand stays a kernel of its own). The
    // reason given is the first's.
    bool constants = false, leaves = false;
    for (const auto& n : s.nodes) {
      const auto reads = reads_of(n);
      bool from_leaves = true;
      for (const auto& v : reads) from_leaves = from_leaves && s.find_tensor(v) != nullptr;
      constants = constants || reads.empty();
      leaves = leaves || (!reads.empty() && from_leaves);
    }
    for (const Recompute r : {Recompute::constants, Recompute::leaf_values}) {
      if (r == Recompute::constants ? !constants : !leaves) continue;
      try {
        return partition(s, families, ops, r, false);
      } catch (const UserError&) {
      }
    }
    // Last, every value a buffer and a prologue cut where it must be (an embedding, then a mask
    // that two reductions read, which a reduction cannot recompute from int64 indices).
    try {
      return partition(s, families, ops, Recompute::none, true);
    } catch (const UserError&) {
    }
    throw first;
  }
}

}  // namespace egg::backend::builtin
