// In-process verification and timing of one candidate (the body of `egg-harness verify`).
#pragma once

#include <filesystem>
#include <optional>

#include "base/accuracy.h"
#include "verify_result.h"

namespace egg::harness {

struct HarnessOptions {
  std::filesystem::path lib, spec, work, out, source;
  std::filesystem::path refs;        // the reference server's socket (python -m egg_frontend serve)
  std::optional<double> atol, rtol;  // override the per-dtype defaults
  // The accuracy rule against a float64 reference (base/accuracy.h): by default where PyTorch's
  // own output is not determined to the tolerance.
  AccuracyMode accuracy = AccuracyMode::automatic;
  double accuracy_factor = kDefaultAccuracyFactor;
  bool time = false;    // time the candidate after it verifies
  bool strict = false;  // compute-sanitizer memcheck first (handled by main)
  bool guard = true;    // guard bytes around every buffer (off under the sanitizer)
  bool cupti = true;    // CUPTI kernel trace (off under the sanitizer)
  // Each verification call holds the GPU lock exclusively, not shared: a profiler replaying the
  // candidate (ncu) makes the call a timed span. The caller must not hold the lock itself.
  bool exclusive_calls = false;
  int max_sets = 0;         // 0: every set the reference server has
  double min_time_s = 0.5;  // timing: at least this long ...
  int min_trials = 100;     // ... and at least this many trials
  // Stop timing after 3 trials (verify.cpp's kCutoffTrials) when even the fastest took longer than
  // this (the caller's best so far, with room: a candidate that cannot win holds the GPU lock no
  // longer).
  std::optional<double> time_cutoff_ms;
  // The file that exists while this run waits (GPU lock, GPU memory, the reference server), so the
  // parent's time limit pauses; empty: <work>/gpu-lock.wait. The sanitizer's run of the harness
  // is given its parent's, so egg-gen's limit pauses for it too.
  std::filesystem::path wait_marker;
  std::filesystem::path marker() const;
};

// Checks the source and library, reads the spec, asks the reference server for each set, runs every
// check of docs/gpu.md ("What egg-harness checks") and, with opts.time, times the candidate. Never
// throws; every failure is a status in the result.
VerifyResult verify_candidate(const HarnessOptions& opts);

}  // namespace egg::harness
