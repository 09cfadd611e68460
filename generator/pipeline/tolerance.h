// The default verification tolerance of a spec: KernelBench's by output dtype (fp32 1e-4/1e-4,
// fp16/bf16 1e-2/1e-2), widened to the TF32 class (1e-2/1e-2) where the math follows a PyTorch
// default that is not exact fp32, or a PRECISION the user opted in to.
#pragma once

#include <string>

#include "spec/spec.h"

namespace egg::pipeline {

struct Tolerance {
  double atol = 1e-4, rtol = 1e-4;
  std::string basis;  // why, for the manifest, e.g. "fp32 outputs (KernelBench default)"
};

// True when the spec has a float32 convolution (conv1d/2d/3d, conv_transpose1d/2d/3d): PyTorch runs
// those on TF32 tensor cores by default (torch.backends.cudnn.allow_tf32 is True), and so do EGG's.
bool has_fp32_convolution(const spec::Spec& s);

// The tolerance for `s` under PRECISION `precision` ("default", "tf32", "bf16", "fp32x3"; fp32x3
// keeps the dtype defaults: its outputs are judged by the accuracy rule).
Tolerance default_tolerance(const spec::Spec& s, const std::string& precision);

}  // namespace egg::pipeline
