// Runs one candidate through egg-harness in a child process (base/process.h: argv only, a time
// limit, the allowlisted environment of base/child_env.h, its own process group), captured output,
// and every way the child can end mapped to a typed VerifyResult. This is the API the generator
// calls; it needs no LibTorch and no GPU.
//
//   egg::harness::CandidateRun run;
//   run.harness = "/path/to/egg-harness";
//   run.library = work / "cand.so";
//   run.spec = spec_dir / "spec.json";
//   run.work_dir = work / "verify";
//   run.source = work / "cand.cu";
//   egg::harness::VerifyResult r = egg::harness::run_candidate(run);
//   if (r.status != egg::harness::VerifyStatus::verified) log(r.message, r.repro);
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/accuracy.h"
#include "base/process.h"
#include "base/tolerance.h"
#include "verify_result.h"

namespace egg::harness {

// One verification request.
struct CandidateRun {
  std::filesystem::path harness;   // the egg-harness executable
  std::filesystem::path library;   // the candidate shared library (cand.so)
  std::filesystem::path spec;      // spec.json
  std::filesystem::path refs;      // the reference server's socket (verify/references.h)
  std::filesystem::path work_dir;  // created; holds the source copy, logs, result.json, mismatches
  std::filesystem::path source;  // the candidate's .cu (copied into work_dir and scanned); optional
  std::optional<Tolerance> tolerance;               // default: per output dtype (tolerance.h)
  AccuracyMode accuracy = AccuracyMode::automatic;  // against float64: base/accuracy.h
  double accuracy_factor = kDefaultAccuracyFactor;
  bool time = false;                     // also time the candidate (events + CUPTI)
  std::optional<double> time_cutoff_ms;  // timing stops early above this (--cutoff-ms)
  bool strict = false;                   // also run compute-sanitizer memcheck
  std::chrono::milliseconds time_limit{60'000};
  std::vector<std::string> extra_args;  // appended to the harness's argv (tests, debugging)
};

// Verifies (and optionally times) a candidate. Never throws for anything the candidate does: a
// hang is VerifyStatus::timeout, a signal VerifyStatus::crash, and so on; r.repro is the command
// line that reproduces the run, r.work_dir the folder with the logs and the kept source.
VerifyResult run_candidate(const CandidateRun& run);

// The harness's argv for a run (without the executable's environment).
std::vector<std::string> harness_argv(const CandidateRun& run,
                                      const std::filesystem::path& result_json,
                                      const std::filesystem::path& kept_source);

}  // namespace egg::harness
