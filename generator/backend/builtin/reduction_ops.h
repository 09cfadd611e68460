// The reduction family's op table (templates/reduction/anchors.json): per anchor op its mode, its
// reducer (a state type of templates/reduction/reducers.cuh) and the CUDA float expressions of
// how an element enters the reducer, the row's value and a normalized element; per vector-norm
// order how |x|^p enters and leaves. The family's planner reads it; no CUDA is spelled in C++.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "render/template.h"

namespace egg::backend::builtin {

enum class ReductionMode { reduce, normalize, scan };

// One anchor op's entry. Expressions may hold fields ({R}, {row}, {eps}) the planner fills.
struct ReductionAnchor {
  ReductionMode mode = ReductionMode::reduce;
  std::string reducer;           // EggRedSum, EggRedSoftmax, ...
  std::string with_indices;      // the reducer when the op returns (values, indices); empty: none
  bool indices = false;          // the op's value is an index (argmax, argmin)
  bool norm = false;             // elements enter as |x|^p by the norm cases
  std::string in = "egg_x";      // an element entering the reducer
  std::string row = "egg_st.v";  // the row's value from the state
  std::string element;           // a normalized element; empty: the row's value
  std::string element_exp;       // the same from egg_x = exp(x - max); empty: not offered
  std::string scan_op, scan_identity;  // scans: how running values combine, and their start
  // Takes int64, int32 and bool inputs exactly (long long values, the reducer's I variant), with
  // these scan forms; false: integer inputs are refused.
  bool integer = false;
  std::string int_scan_op, int_scan_identity;
};

// A vector norm's order p: how an element enters (|x|^p) and the row's value (its 1/p-th power);
// `reducer` replaces the anchor's where set (max/min of |x| for p = +-inf).
struct NormCase {
  std::string in, row, reducer;
};

class ReductionOps {
 public:
  explicit ReductionOps(const std::filesystem::path& data_dir);

  // The entry of `op`, or nullptr when `op` is no anchor of the family.
  const ReductionAnchor* anchor(const std::string& op) const;
  // The case of order p (a number, +-inf included), its fields filled; `row` empty: the anchor's.
  NormCase norm_case(double p) const;
  // The file read, for the cache key.
  std::pair<std::string, std::string> key_input() const { return {table_.name, table_.text}; }

 private:
  render::Template table_;
  std::map<std::string, ReductionAnchor> anchors_;
  std::map<std::string, NormCase> norms_;
};

}  // namespace egg::backend::builtin
