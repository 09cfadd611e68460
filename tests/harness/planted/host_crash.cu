// Planted: dereferences a device pointer on the host, killing the process with SIGSEGV.
// Expected: crash (the runner reports the signal; the generator carries on).
#include "common.cuh"

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t) {
  volatile float* p = reinterpret_cast<volatile float*>(static_cast<char*>(nullptr) + 64);
  p[0] = static_cast<const float*>(args[0])[0];
  return cudaSuccess;
}
#endif
