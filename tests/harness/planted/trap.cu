// Planted: the kernel traps (a device-side assert). Expected: launch_error.
#include "common.cuh"

__global__ void boom(float* out) {
  out[threadIdx.x] = 1.0f;
  __trap();
}

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t stream) {
  boom<<<1, 32, 0, stream>>>(unpack(args).out);
  return cudaGetLastError();
}
#endif
