// Planted: subtracts y instead of adding it. Expected: mismatch.
#include "common.cuh"

__global__ void wrong(const float* x, const float* y, const float* w, float* out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < kN;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = fmaxf(x[i], 0.0f) * w[i % kCols] - y[i];
}

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t stream) {
  const Args a = unpack(args);
  wrong<<<1024, 256, 0, stream>>>(a.x, a.y, a.w, a.out);
  return cudaGetLastError();
}
#endif
