// The seam to the GPU: verifying and timing one compiled candidate (egg-harness in a child
// process).
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/accuracy.h"
#include "verify/references.h"
#include "verify_result.h"

namespace egg::verify {

// What the GPU said about a candidate.
struct GpuOutcome {
  bool compile_error = false;  // nvcc could not build the library
  harness::VerifyStatus status = harness::VerifyStatus::verified;  // else what egg-harness found
  std::string report;  // nvcc's log, or the harness's message (errors, first mismatch, repro)
  std::optional<double> kernel_ms;                    // median event time, when timed
  nlohmann::json details = nlohmann::json::object();  // the harness's result.json
  bool ok() const { return !compile_error && status == harness::VerifyStatus::verified; }
};

// How one candidate is run.
struct RunOptions {
  bool time = false;    // also time it (after it verifies)
  bool strict = false;  // compute-sanitizer memcheck first
  double atol = 1e-4, rtol = 1e-4;
  // Judging against the model computed in float64 where PyTorch's own output misses it
  // (base/accuracy.h).
  AccuracyMode accuracy = AccuracyMode::automatic;
  // With time: timing stops after a few trials whose fastest is slower than this (the best so
  // far, with room), so a candidate that cannot win holds the GPU lock only that long.
  std::optional<double> time_cutoff_ms;
};

// Verifies (and times) a candidate on the local GPU.
class GpuVerifier {
 public:
  virtual ~GpuVerifier() = default;
  // `cu` is the rendered .cu with its header under `include_dir`; `spec_json` the frontend's spec;
  // `refs` the op's references (references()).
  virtual GpuOutcome run(const std::filesystem::path& cu, const std::filesystem::path& include_dir,
                         const std::filesystem::path& spec_json, References& refs,
                         const std::filesystem::path& work, const RunOptions& options) = 0;
  // Starts computing an op's reference outputs on this GPU (they stay there while its candidates
  // are verified); returns at once.
  virtual std::unique_ptr<References> references(const ReferenceRequest& request) = 0;
  // Builds what run() would build for `cu` into `work` ahead of time, so a stage can build all
  // its candidates side by side (called from several threads at once) and then verify and time
  // them one by one; run() reuses a prebuilt result. Default: nothing (run() builds).
  virtual void prebuild(const std::filesystem::path& cu, const std::filesystem::path& include_dir,
                        const std::filesystem::path& work) {
    (void)cu;
    (void)include_dir;
    (void)work;
  }
  // Nsight Compute metrics of the candidate last run in `work` (parse_ncu_csv's form), or
  // {"unavailable": why} where ncu is missing or cannot read the counters.
  virtual nlohmann::json profile(const std::filesystem::path& work,
                                 const std::filesystem::path& spec_json, References& refs) {
    (void)work;
    (void)spec_json;
    (void)refs;
    return {{"unavailable", "no profiler"}};
  }
  // The GPU's name and arch ("NVIDIA H200", "sm_90").
  virtual std::string gpu_name() const = 0;
  virtual std::string gpu_arch() const = 0;
};

}  // namespace egg::verify
