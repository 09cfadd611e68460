// Shared by the planted candidates: the op of tests/harness/data/scale_add_op.py,
//   out0 = relu(x) * w + y,   x, y: [EGG_ROWS, EGG_COLS] fp32, w: [EGG_COLS] fp32,
// and the ABI args order: x, y (inputs), w (param), out0 (output).
#pragma once
#include <cuda_runtime.h>

#ifndef EGG_ROWS
#define EGG_ROWS 1024
#endif
#ifndef EGG_COLS
#define EGG_COLS 4096
#endif

constexpr long long kRows = EGG_ROWS, kCols = EGG_COLS, kN = kRows * kCols;

struct Args {
  const float* x;
  const float* y;
  const float* w;
  float* out;
};

inline Args unpack(void* const* args) {
  return {static_cast<const float*>(args[0]), static_cast<const float*>(args[1]),
          static_cast<const float*>(args[2]), static_cast<float*>(args[3])};
}

__device__ __forceinline__ float op(float x, float w, float y) { return fmaxf(x, 0.0f) * w + y; }

// The correct kernel: float4 loads/stores, grid-stride. EGG_COLS must be a multiple of 4.
__global__ void scale_add_kernel(const float4* __restrict__ x, const float4* __restrict__ y,
                                 const float4* __restrict__ w, float4* __restrict__ out,
                                 long long n4) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;
       i += (long long)gridDim.x * blockDim.x) {
    const float4 a = x[i], b = y[i], c = w[i % (kCols / 4)];
    out[i] =
        make_float4(op(a.x, c.x, b.x), op(a.y, c.y, b.y), op(a.z, c.z, b.z), op(a.w, c.w, b.w));
  }
}

inline int grid_for(long long n4) {
  long long blocks = (n4 + 255) / 256;
  return (int)(blocks < 132 * 16 ? blocks : 132 * 16);
}

inline void launch_correct(const Args& a, cudaStream_t s) {
  const long long n4 = kN / 4;
  scale_add_kernel<<<grid_for(n4), 256, 0, s>>>(
      reinterpret_cast<const float4*>(a.x), reinterpret_cast<const float4*>(a.y),
      reinterpret_cast<const float4*>(a.w), reinterpret_cast<float4*>(a.out), n4);
}
