// Planted: does its (correct, deliberately slow) work on a stream of its own and returns without
// joining it to the given stream. Expected: side_stream.
#include "common.cuh"

__global__ void slow_correct(const float* x, const float* y, const float* w, float* out) {
  if (threadIdx.x == 0)
    __nanosleep(1000000);  // ~1 ms per block, so the work outlives the given stream
  __syncthreads();
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < kN;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = op(x[i], w[i % kCols], y[i]);
}

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t) {
  const Args a = unpack(args);
  static cudaStream_t side = nullptr;
  if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  slow_correct<<<264, 256, 0, side>>>(a.x, a.y, a.w, a.out);
  return cudaGetLastError();
}
#endif
