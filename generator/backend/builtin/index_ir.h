// The fusion compiler's loop-level IR: every value of a graph of element-wise and layout ops
// (views, slices, cat, stack, split, flip, triu/tril, expand, broadcasting) evaluated at an index
// vector of C expressions. The algorithm (what each value is at an index) is kept apart from the
// schedule (how the kernel walks its output: templates/elementwise/, ElementwiseFamily): the
// program is the body one thread runs for output element `i`.
//
// Each output is evaluated at its own element `i` (its multi-index delinearized from `i`); each op
// maps the index it is asked for to the indices of its operands: a view permutes, drops, inserts
// or rewrites index expressions, a reshape relinearizes, cat and stack pick an operand by range and
// guard its loads, and a tensor is read at the offset of its index. Values are computed once per
// distinct index (common subexpressions share one variable).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backend/builtin/op_table.h"
#include "spec/spec.h"
#include "util/error.h"

namespace egg::backend::builtin {

// True for the layout ops the IR evaluates by index (docs/SPEC.md, "Layout ops").
bool is_layout_op(const std::string& op);

// Why the IR cannot evaluate `node` of `s` (an op neither element-wise nor layout, an attribute it
// does not take, a split read other than through getitem), or nullopt.
std::optional<UserError> index_ir_check(const spec::Spec& s, const spec::Node& node,
                                        const OpTable& ops);

// A tensor the program reads.
struct IndexRead {
  std::string tensor;    // the input or param
  bool full = false;     // read at element i of the outputs (contiguous, their element count):
                         // the schedule loads it, as a vector where it can, and passes the value
                         // in as `full_value(var)`
  bool integer = false;  // an int64/int32 tensor: its full value passes in as a long long (exact),
                         // else as a float
  bool indexed = false;  // read at a computed offset (through its pointer)
};

// The program one thread runs for output element `i` (a C variable of type `IndexT`).
struct IndexProgram {
  std::vector<std::string> statements;  // C statements, in order
  std::vector<std::string> results;     // per graph output, the float expression it stores
  std::vector<IndexRead> reads;         // the tensors read, in first-use order
  std::int64_t max_numel = 0;           // largest element count of an output or tensor read
};

// The parameter through which the schedule passes element i of the tensor whose pointer is `var`
// (a float, or a long long for an integer tensor: full_type, full_load).
std::string full_value(const std::string& var);
// The C type of that parameter, and the conversion that makes it from the tensor's element.
std::string full_type(const IndexRead& r);
std::string full_load(const IndexRead& r);

// Builds the program for the outputs of `s` (all of one element count); `ptr_var` names every
// tensor's pointer. Throws a UserError for a node index_ir_check rejects.
IndexProgram build_index_program(const spec::Spec& s, const OpTable& ops,
                                 const std::map<std::string, std::string>& ptr_var);

}  // namespace egg::backend::builtin
