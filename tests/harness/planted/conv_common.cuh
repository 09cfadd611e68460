// The accuracy-rule cases' op (tests/harness/data/conv_tf32_op.py): out = conv2d(x, w), 3x3,
// padding 1, x [8, 64, 32, 32], w [64, 64, 3, 3], fp32 math with fp32 accumulation (no TF32).
#pragma once

#include <cuda_runtime.h>

constexpr int kN = 8, kC = 64, kH = 32, kW = 32;

// `bias_error` is added to every output: 0 for a correct kernel.
__global__ void direct_conv(const float* x, const float* w, float* out, float bias_error) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kN * kC * kH * kW) return;
  const int ow = i % kW, oh = (i / kW) % kH, oc = (i / (kW * kH)) % kC, n = i / (kW * kH * kC);
  float acc = 0.f;
  for (int c = 0; c < kC; ++c)
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) {
        const int ih = oh + r - 1, iw = ow + s - 1;
        if (ih < 0 || ih >= kH || iw < 0 || iw >= kW) continue;
        acc += x[((n * kC + c) * kH + ih) * kW + iw] * w[((oc * kC + c) * 3 + r) * 3 + s];
      }
  out[i] = acc + bias_error;
}

inline cudaError_t launch_conv(void* const* args, cudaStream_t stream, float bias_error) {
  const int total = kN * kC * kH * kW;
  direct_conv<<<(total + 255) / 256, 256, 0, stream>>>(static_cast<const float*>(args[0]),
                                                       static_cast<const float*>(args[1]),
                                                       static_cast<float*>(args[2]), bias_error);
  return cudaGetLastError();
}
