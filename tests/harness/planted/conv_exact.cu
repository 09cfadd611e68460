// Planted: a convolution in exact fp32 where PyTorch's own reference is TF32. It misses that
// reference beyond 1e-4, but is nearer the model computed in float64 than PyTorch is. Expected:
// verified by the accuracy rule (base/accuracy.h).
#include "conv_common.cuh"

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t stream) {
  return launch_conv(args, stream, 0.f);
}
#endif
