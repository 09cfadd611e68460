// Planted: remembers the buffers of the last call and, when called again with the same pointers,
// copies its saved result instead of computing (a result cached across calls). Expected:
// cached_result.
#include "common.cuh"

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t stream) {
  const Args a = unpack(args);
  static const void* last[4] = {};
  static float* saved = nullptr;
  if (!saved && cudaMalloc(&saved, kN * sizeof(float)) != cudaSuccess)
    return cudaErrorMemoryAllocation;
  const bool same = last[0] == a.x && last[1] == a.y && last[2] == a.w && last[3] == a.out;
  if (same)
    return cudaMemcpyAsync(a.out, saved, kN * sizeof(float), cudaMemcpyDeviceToDevice, stream);
  launch_correct(a, stream);
  last[0] = a.x, last[1] = a.y, last[2] = a.w, last[3] = a.out;
  return cudaMemcpyAsync(saved, a.out, kN * sizeof(float), cudaMemcpyDeviceToDevice, stream);
}
#endif
