// Planted: correct, but also writes 16 floats past the end of out0. Expected: out_of_bounds.
#include "common.cuh"

__global__ void overrun(float* out) {
  if (threadIdx.x < 16) out[kN + threadIdx.x] = 1.0f;
}

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t stream) {
  const Args a = unpack(args);
  launch_correct(a, stream);
  overrun<<<1, 32, 0, stream>>>(a.out);
  return cudaGetLastError();
}
#endif
