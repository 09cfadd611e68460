// Sinking element-wise work toward its reader, a plan of the same graph with other kernels: the
// planner gives every element-wise op to the anchor before it in the graph's order, so in
//   a = w1(h); b = w3(h); out = silu(a) * b      (written `silu(w1(h)) * w3(h)`: silu before w3)
// silu lands in w1's epilogue, where cuBLASLt has no SiLU and a pass of its own rewrites `a`,
// while w3's epilogue needs a pass for the product anyway. With each element-wise op moved down to
// just before its first reader, silu joins w3's epilogue (`silu(a) * acc`) and w1 runs with none.
// Moving a pure op later, never past a reader, keeps the graph's meaning; which plan runs faster
// depends on what each anchor fuses natively, so the sunk plan is an alternative, measured beside
// the graph's own order (BuiltinBackend::plans).
#pragma once

#include <optional>

#include "backend/builtin/op_table.h"
#include "spec/spec.h"

namespace egg::backend::builtin {

// `s` with every element-wise op (a node the op table knows) that the graph does not return moved
// to just before its first reader where an anchor lies between them (so another kernel computes
// it), from the last node up (a chain sinks whole); nullopt where no node moves.
std::optional<spec::Spec> sink_elementwise(const spec::Spec& s, const OpTable& ops);

}  // namespace egg::backend::builtin
