// Planted: ignores its inputs and writes a constant. Expected: constant_output.
#include "common.cuh"

__global__ void fill(float* out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < kN;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = 0.5f;
}

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t stream) {
  fill<<<1024, 256, 0, stream>>>(unpack(args).out);
  return cudaGetLastError();
}
#endif
