// Planted: correct output, but applies relu to x in place. Expected: input_modified.
#include "common.cuh"

__global__ void inplace(float* x, const float* y, const float* w, float* out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < kN;
       i += (long long)gridDim.x * blockDim.x) {
    x[i] = fmaxf(x[i], 0.0f);
    out[i] = x[i] * w[i % kCols] + y[i];
  }
}

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t stream) {
  const Args a = unpack(args);
  inplace<<<1024, 256, 0, stream>>>(const_cast<float*>(a.x), a.y, a.w, a.out);
  return cudaGetLastError();
}
#endif
