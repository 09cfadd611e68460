// Comparisons on the GPU, so that only summaries leave it: candidate output against reference
// (the tolerance rule of compare_element.h, the same as tolerance.h's host compare), a digest of
// a buffer (for "same bits as another set" and "nothing written" checks), and the first byte at
// which two buffers differ (inputs the candidate must not modify).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

#include "base/comparison.h"

namespace egg::harness {

// compare() of tolerance.h, on device buffers of `n` elements: `out` of spec dtype `dtype`, `ref`
// of the same dtype or, for a floating `out`, "float64" (the accuracy rule's reference,
// base/accuracy.h). bad_value and ref_value are read back for the first bad element only.
// Synchronizes `stream`.
cudaError_t compare_on_device(const void* out, const std::string& dtype, const void* ref,
                              const std::string& ref_dtype, std::int64_t n, Tolerance tol,
                              cudaStream_t stream, Comparison& result);

// A 64-bit digest of `bytes` bytes (equal bits give equal digests; different bits differ but for
// a 2^-64 chance) and whether every byte is `poison`. Synchronizes `stream`.
struct Digest {
  std::uint64_t hash = 0;
  bool all_poison = true;
};
cudaError_t digest_on_device(const void* data, std::size_t bytes, unsigned char poison,
                             cudaStream_t stream, Digest& result);

// The offset of the first byte at which `a` and `b` differ, or -1 when they are equal.
cudaError_t first_difference_on_device(const void* a, const void* b, std::size_t bytes,
                                       cudaStream_t stream, std::int64_t& offset);

}  // namespace egg::harness
