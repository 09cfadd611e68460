// Runs the Python op frontend (python/egg_frontend) to turn an op.py into a spec.
#pragma once

#include <chrono>
#include <filesystem>

#include "spec/spec.h"
#include "util/process.h"

namespace egg::frontend {

// How to run the frontend.
struct FrontendConfig {
  std::filesystem::path python;    // interpreter that imports torch
  std::filesystem::path data_dir;  // holds python/egg_frontend
  int seeds = 3;  // seeded input sets beyond the declared one (the spec records it)
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
};

// Traces `op_file` into `work_dir` (spec.json) and returns the parsed spec. Reference outputs are
// not the frontend's: the reference server computes them on the GPU (verify/references.h).
// A problem in op.py is a UserError naming file, line and op; a frontend crash an InternalError.
spec::Spec trace(ProcessRunner& runner, const FrontendConfig& config,
                 const std::filesystem::path& op_file, const std::filesystem::path& work_dir);

}  // namespace egg::frontend
