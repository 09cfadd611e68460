// Preparing a generation: everything that can be checked without op.py is checked before it runs
// (docs/ARCHITECTURE.md, "The pipeline"), so a user's mistake fails in well under a second: the op
// path, --out and the cache folder, the kernel name, the options, the backend, cuDNN, nvcc and the
// arches it knows.
#pragma once

#include <string>
#include <vector>

#include "backend/backend.h"
#include "base/accuracy.h"
#include "pipeline/artifacts.h"
#include "pipeline/generate.h"
#include "toolchain/nvcc.h"
#include "util/process.h"

namespace egg::pipeline {

// What the checks before op.py runs settle.
struct Setup {
  GenerateOptions o;                // validated, its paths absolute
  std::string name;                 // the kernel's
  std::vector<std::string> arches;  // sorted, each once
  ArtifactDirs artifacts;
  backend::BackendConfig bc;  // completed once the spec is known (pipeline/generate.cpp)
  toolchain::Nvcc nvcc;
  std::string nvcc_version;
};

// The options checked and settled (a UserError for the user's mistakes), in the order their errors
// are reported; nvcc's version is asked for and its arches are listed.
Setup prepare(const GenerateOptions& in, ProcessRunner& runner);

// KernelBench's default tolerances by output dtype: fp32 1e-4/1e-4, fp16/bf16 1e-2/1e-2.
// PRECISION opt-in: "default" (PyTorch's defaults), "tf32" or "bf16" (TF32-class tolerance), or
// "fp32x3" (3xTF32 split precision, judged against float64 by the accuracy rule); anything else
// is a user error.
std::string precision(const GenerateOptions& o);

// OPTIONS accuracy=auto|on|off (base/accuracy.h): auto (the default) judges an output against
// the model computed in float64 where PyTorch's own output misses that by more than the
// tolerance; on judges every floating output so; off keeps the tolerance check alone.
// PRECISION fp32x3 makes it on: split-precision math rounds unlike cuBLAS's SGEMM, so a tolerance
// check against PyTorch's output is not the measure; its error against float64 is.
AccuracyMode accuracy(const GenerateOptions& o);

}  // namespace egg::pipeline
