// A value as a strided view of a contiguous tensor: the chain of view ops (reshape, permute,
// transpose, slice, select, squeeze, unsqueeze, a split's piece) that leads from a value in memory
// (an input, a parameter or a node a kernel writes) to it, as a shape, element strides and an
// offset into that tensor, the way torch's views compute them. A kernel that reads through the
// strides reads the view where it lies, with no copy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spec/spec.h"

namespace egg::backend::builtin {

struct StridedView {
  std::string base;                   // the contiguous value the view reads
  spec::Shape shape;                  // the view's shape
  std::vector<std::int64_t> strides;  // elements per step along each dim of `shape`
  std::int64_t offset = 0;            // elements from the base's start to the view's first
  std::vector<std::string> nodes;     // the view nodes walked, from the value back to the base
  // Non-empty where the last view regroups the dims before the last two in a way no strides
  // express (repeat_interleave's expand and reshape: [B, H, 1, ...] -> [B, H, G, ...] -> [B, H*G,
  // ...]): those dims as (size, stride) digits in row-major order, their sizes' product the
  // number of entries the view's leading dims hold; `strides` then holds only the last two dims'.
  std::vector<std::pair<std::int64_t, std::int64_t>> batch;
};

// `value` as a strided view of the value in memory it is a view of (no view ops: itself,
// contiguous); nullopt where a view in the chain is not strided (a reshape that would copy, but
// for a last one that only regroups the leading dims: `batch`) or `value` is not defined.
std::optional<StridedView> strided_view(const spec::Spec& s, const std::string& value);

}  // namespace egg::backend::builtin
