// Planted: calls ATen from launch. Never compiled (the scan rejects the source first); the tests
// pass it as --source beside good.so. Expected: forbidden_source.
#include <ATen/ATen.h>  // the scan stops here
#include "common.cuh"

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t stream) {
  at::Tensor x = at::from_blob(args[0], {kRows, kCols}, at::kCUDA);
  return cudaSuccess;
}
#endif
