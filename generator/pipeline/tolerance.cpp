#include "pipeline/tolerance.h"

#include <algorithm>

#include "base/tolerance.h"

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
  // The loosest of the outputs' dtype defaults (base/tolerance.h); integer outputs (exact there)
  // keep the fp32 default, which admits no integer error either.
  egg::Tolerance loosest = egg::default_tolerance("float32");
  for (const auto& out : s.outputs) {
    const egg::Tolerance t = egg::default_tolerance(spec::dtype_name(out.dtype));
    loosest = {std::max(loosest.atol, t.atol), std::max(loosest.rtol, t.rtol)};
  }
  if (loosest.atol > 1e-4 || loosest.rtol > 1e-4)
    return {loosest.atol, loosest.rtol, "fp16/bf16 outputs (KernelBench default)"};
  if (precision == "tf32" || precision == "bf16")
    return {1e-2, 1e-2, "PRECISION " + precision + " (opted in: TF32-class fp32 math)"};
  if (has_fp32_convolution(s))
    return {1e-2, 1e-2,
            "fp32 convolution on TF32 tensor cores, PyTorch's default for convolutions "
            "(torch.backends.cudnn.allow_tf32); TF32-class tolerance"};
  if (precision == "fp32x3")
    return {loosest.atol, loosest.rtol,
            "PRECISION fp32x3 (opted in: 3xTF32 split precision), judged against the model "
            "computed in float64 (accuracy on); fp32 outputs' KernelBench default where that "
            "model does not run"};
  return {loosest.atol, loosest.rtol, "fp32 outputs (KernelBench default)"};
}

}  // namespace egg::pipeline
