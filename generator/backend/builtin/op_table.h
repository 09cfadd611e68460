// The element-wise op table (templates/elementwise/ops.json): turns spec nodes into CUDA float
// expressions. Every family of the builtin backend uses it to fuse element-wise prologues and
// epilogues around its anchor.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "render/template.h"
#include "spec/spec.h"

namespace egg::backend::builtin {

// A float literal CUDA parses to the same float PyTorch uses (inf and the frontend's ±DBL_MAX →
// INFINITY).
std::string float_literal(double v);

// `expr` of a family's op table with each {field} replaced by its value in `fields` (an unknown
// field is an InternalError: the table and the code disagree).
std::string fill_fields(const std::string& expr, const std::map<std::string, std::string>& fields);

// The string field `key` of an entry of a family's op table (`file`, for the message), or
// `fallback` when it is missing; a field that is not a string is an InternalError.
std::string table_text(const nlohmann::json& entry, const char* key, const std::string& fallback,
                       const char* file);

// Right-aligned broadcast check of `operand` against `out`.
bool broadcasts_to(const spec::Shape& operand, const spec::Shape& out);

// The element offset, in a contiguous operand broadcast to `out`, of output element `i` (a C
// expression in the variable `index`), with runs of matching dimensions merged.
std::string broadcast_offset(const spec::Shape& operand, const spec::Shape& out,
                             const std::string& index = "i");

// Adds to `leaves` the inputs and params (not nodes) that `nodes` read as operands.
void add_tensor_leaves(const spec::Spec& s, const std::vector<const spec::Node*>& nodes,
                       std::set<std::string>& leaves);

// The op table.
class OpTable {
 public:
  explicit OpTable(const std::filesystem::path& data_dir);

  // True when `op` is an element-wise op of the table.
  bool knows(const std::string& op) const;
  // Why `node` cannot be an element-wise step (operand kinds, arity), or nullopt.
  std::optional<UserError> check(const spec::Spec& s, const spec::Node& node) const;
  // The float expression of `node`, its operands looked up in `value_of` (spec name → C
  // expression), strength-reduced by the table: a scalar operand with a case of its own (integer
  // powers as multiplies, x * 1, x + 0) takes that case's expression, and a scaling by a number of
  // a value that `s` computes by scaling one of `value_of`'s values folds into one multiply by
  // the product of the numbers (0.5 * (0.044715 * x) → 0.0223575 * x).
  std::string expression(const spec::Spec& s, const spec::Node& node,
                         const std::map<std::string, std::string>& value_of) const;
  // True when `node`'s op computes exactly on int64 values (the table's `int` expression; for a
  // variant such as div's rounding_mode, the node's own variant).
  bool has_integer_form(const spec::Node& node) const;
  // The expression of `node` on int64 values (long long operands from `value_of`, scalars and
  // attributes as integer literals): an int64 result, or a comparison's 0/1. Only where
  // has_integer_form(node).
  std::string integer_expression(const spec::Node& node,
                                 const std::map<std::string, std::string>& value_of) const;
  // "relu, gelu, ..." for messages.
  std::string known_ops() const;
  // Device helpers (ops.cuh) every kernel using the table includes.
  const std::string& helpers() const { return helpers_.text; }
  // The files read, for the cache key.
  std::vector<std::pair<std::string, std::string>> key_inputs() const;

 private:
  struct Scaling {
    std::string base;  // the scaled value's spec name
    double factor = 1;
  };
  // `node` as a scaling of a value by a number (mul or div with one scalar operand), or nullopt.
  std::optional<Scaling> scaling(const spec::Node& node) const;
  // The scalings of `node` and of the values it scales in turn, folded down to the deepest value
  // `value_of` has: nullopt unless at least two fold.
  std::optional<Scaling> folded_scaling(const spec::Spec& s, const spec::Node& node,
                                        const std::map<std::string, std::string>& value_of) const;

  nlohmann::json ops_;
  render::Template table_;
  render::Template helpers_;
};

}  // namespace egg::backend::builtin
