// Host side of a launch on thread block clusters (sm_90 and later), shared by the kernels that keep
// rows on chip across a cluster's shared memory (reduction row_smem, norm cluster).

// Thread block clusters on the calling thread's device: compute capability 9.0 and later.
inline bool egg_clusters_ok() {
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
  return major >= 9;
}

// Launches `kernel` on `grid` blocks of `block` threads in clusters of `cluster` blocks along x,
// each block with `smem` bytes of dynamic shared memory (the kernel's limit raised first; clusters
// of more than 8 blocks need `nonportable`).
template <typename... Params, typename... Args>
cudaError_t egg_launch_on_clusters(void (*kernel)(Params...), dim3 grid, dim3 block, int smem, int cluster,
                                   bool nonportable, cudaStream_t stream, Args... args) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err == cudaSuccess && nonportable)
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  if (err != cudaSuccess) return err;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = static_cast<std::size_t>(smem);
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, args...);
}
