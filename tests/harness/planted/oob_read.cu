// Planted: correct result, but reads one float past the end of x (times zero, so the output is
// unchanged). Only compute-sanitizer sees it. Expected: verified without --strict; sanitizer with.
#include "common.cuh"

__global__ void overread(const float* x, const float* y, const float* w, float* out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < kN;
       i += (long long)gridDim.x * blockDim.x) {
    volatile float sink = x[i + 1];  // i + 1 == kN on the last element: out of bounds
    (void)sink;                      // volatile: the load can't be optimized away
    out[i] = op(x[i], w[i % kCols], y[i]);
  }
}

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t stream) {
  const Args a = unpack(args);
  overread<<<1024, 256, 0, stream>>>(a.x, a.y, a.w, a.out);
  return cudaGetLastError();
}
#endif
