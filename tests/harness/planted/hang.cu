// Planted: never finishes. Expected: timeout (the runner kills the harness).
#include "common.cuh"

__global__ void spin(volatile int* flag, float* out) {
  while (*flag == 0) {
  }
  out[0] = 0.0f;
}

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t stream) {
  const Args a = unpack(args);
  static int* flag = nullptr;
  if (!flag) {
    cudaMalloc(&flag, sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
  }
  spin<<<1, 1, 0, stream>>>(flag, a.out);
  return cudaGetLastError();
}
#endif
