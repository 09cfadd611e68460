#include "pipeline/tolerance.h"

namespace egg::pipeline {

bool has_fp32_convolution(const spec::Spec& s) {
  for (const auto& n : s.nodes) {
    if (n.dtype != spec::DType::float32) continue;
    for (const char* op :
         {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"})
      if (n.op == op) return true;
  }
  return false;
}

Tolerance default_tolerance(const spec::Spec& s, const std::string& precision) {
  for (const auto& out : s.outputs)
    if (out.dtype == spec::DType::float16 || out.dtype == spec::DType::bfloat16)
      return {1e-2, 1e-2, "fp16/bf16 outputs (KernelBench default)"};
  if (precision != "default")
    return {1e-2, 1e-2, "PRECISION " + precision + " (opted in: TF32-class fp32 math)"};
  if (has_fp32_convolution(s))
    return {1e-2, 1e-2,
            "fp32 convolution on TF32 tensor cores, PyTorch's default for convolutions "
            "(torch.backends.cudnn.allow_tf32); TF32-class tolerance"};
  return {1e-4, 1e-4, "fp32 outputs (KernelBench default)"};
}

}  // namespace egg::pipeline
