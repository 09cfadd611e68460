// The microbenchmarks' cold timing, as egg-harness measures: the L2 flushed by a memset of
// `flush_bytes` before each trial, CUDA events around one call of `fn`, the median of `trials`
// timed calls after `warmups` untimed ones.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

template <class Fn>
float time_cold_ms(Fn fn, void* flush, std::size_t flush_bytes, int warmups = 3, int trials = 30) {
  cudaEvent_t a, z;
  cudaEventCreate(&a);
  cudaEventCreate(&z);
  std::vector<float> t;
  for (int i = 0; i < warmups + trials; ++i) {
    cudaMemsetAsync(flush, i, flush_bytes);
    cudaEventRecord(a);
    fn();
    cudaEventRecord(z);
    cudaEventSynchronize(z);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, z);
    if (i >= warmups) t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(z);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
