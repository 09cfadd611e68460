// A value as a strided view of a contiguous tensor: the chain of view ops (reshape, permute,
// transpose, slice, select, squeeze, unsqueeze, a split's piece) that leads from a value in memory
// (an input, a parameter or a node a kernel writes) to it, as a shape, element strides and an
// offset into that tensor, the way torch's views compute them. A kernel that reads through the
// strides reads the view where it lies, with no copy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec/spec.h"

namespace egg::backend::builtin {

struct StridedView {
  std::string base;                   // the contiguous value the view reads
  spec::Shape shape;                  // the view's shape
  std::vector<std::int64_t> strides;  // elements per step along each dim of `shape`
  std::int64_t offset = 0;            // elements from the base's start to the view's first
  std::vector<std::string> nodes;     // the view nodes walked, from the value back to the base
};

// `value` as a strided view of the value in memory it is a view of (no view ops: itself,
// contiguous); nullopt where a view in the chain is not strided (a reshape that would copy, an
// expand) or `value` is not defined.
std::optional<StridedView> strided_view(const spec::Spec& s, const std::string& value);

}  // namespace egg::backend::builtin
