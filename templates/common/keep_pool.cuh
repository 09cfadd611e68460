// Stream-ordered scratch memory kept between calls, shared by the templates that allocate per call
// with cudaMallocAsync (a plan's intermediates between its kernels, a norm's statistics, a GEMM's fp32
// result or split-K partials).
//
// Raises the release threshold of the calling thread's device's default memory pool to at least
// `bytes` (it never lowers it). Under the default threshold of 0, every synchronization hands the
// freed memory back to the driver, and the next call's cudaMallocAsync maps it again while the GPU
// waits for the host; kept, the pool serves the next call's allocations itself (as PyTorch's caching
// allocator keeps its blocks).
inline void egg_keep_pool(std::size_t bytes) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return;
  cudaMemPool_t pool;
  if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess) return;
  unsigned long long threshold = 0;  // cuuint64_t
  if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold) != cudaSuccess) return;
  if (threshold < bytes) {
    threshold = bytes;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
  }
}
