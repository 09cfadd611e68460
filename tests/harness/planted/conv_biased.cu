// Planted: the convolution of conv_exact.cu, every output off by 0.01, many times PyTorch's own
// TF32 error on average. Expected: mismatch, judged by the accuracy rule (base/accuracy.h).
#include "conv_common.cuh"

#ifdef EGG_CANDIDATE_ENTRY
extern "C" cudaError_t egg_candidate_launch(void* const* args, cudaStream_t stream) {
  return launch_conv(args, stream, 0.01f);
}
#endif
