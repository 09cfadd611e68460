// Planted: computes only the first half of the output. Expected: nan_output (the unwritten half
// keeps the NaN poison).
#include "common.cuh"

__global__ void half(const float* x, const float* y, const float* w, float* out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < kN / 2;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = op(x[i], w[i % kCols], y[i]);
}

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t stream) {
  const Args a = unpack(args);
  half<<<1024, 256, 0, stream>>>(a.x, a.y, a.w, a.out);
  return cudaGetLastError();
}
#endif
