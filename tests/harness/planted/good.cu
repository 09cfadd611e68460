// Planted: a correct candidate. Expected: verified.
#include "common.cuh"

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t stream) {
  launch_correct(unpack(args), stream);
  return cudaGetLastError();
}
#endif
