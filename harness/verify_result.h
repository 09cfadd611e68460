// The outcome of verifying (and optionally timing) one candidate kernel: what egg-harness writes
// to result.json and what run_candidate() returns to the generator. Plain C++; no LibTorch, no
// CUDA.
//
// result.json (schema 1):
//   {"schema": 1, "status": "verified", "message": "...", "output": "out0",
//    "max_abs_error": 0.0, "max_rel_error": 0.0, "first_bad_index": -1,
//    "bad_value": 0.0, "ref_value": 0.0, "bad_count": 0,
//    "tolerance": {"atol": 1e-4, "rtol": 1e-4},
//    "sets_checked": 4, "deterministic_bitwise": true, "sanitizer": "not run",
//    "timing": {"event_ms": {"median":..,"p10":..,"p90":..}, "cupti_kernel_ms": {...},
//               "kernels_per_launch": 1, "trials": 100, "warmups": 3, "l2_flush_bytes": ...,
//               "bytes_moved": ..., "achieved_gbps": ..., "copy_gbps": ...},
//    "phases_ms": {"load": .., "verify": .., "time": .., "total": ..},
//    "accuracy": {"mode": "auto", "factor": 2, "output": "out0", "judged": 5, "passed": true,
//                 "torch_max_abs_error": .., "kernel_max_abs_error": ..,
//                 "torch_mean_abs_error": .., "kernel_mean_abs_error": ..},   (when the rule ran)
//    "float64_unavailable": "forward fails in float64: ...",   (when it was asked and could not)
//    "gpu": {"name": "NVIDIA H200", "cc": "9.0", "driver": "13.0", "runtime": "13.0"},
//    "files": ["mismatch_out0_out.pt", "mismatch_out0_ref.pt"]}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace egg::harness {

// Why a candidate passed or failed. Doubles as a statistic, so names are stable (they are the
// strings in result.json).
enum class VerifyStatus {
  verified,          // every set within tolerance and every cheat check passed
  mismatch,          // an output differs from the reference beyond atol + rtol*|ref|
  nan_output,        // NaN/unwritten elements (outputs are NaN-poisoned before each launch)
  constant_output,   // the output did not change although inputs (and references) did
  cached_result,     // a later call returned an earlier call's result
  input_modified,    // an input or parameter buffer changed during the call
  out_of_bounds,     // the guard bytes around a buffer were overwritten
  nondeterministic,  // the declared set run again disagrees with the reference
  side_stream,       // kernels still ran after the given stream was done (unjoined work)
  launch_error,      // egg_candidate_launch returned an error or a CUDA error followed it
  sanitizer,         // compute-sanitizer memcheck reported errors (--strict)
  forbidden_source,  // the source or library uses torch/ATen/c10
  load_error,        // dlopen/dlsym of the candidate failed
  crash,             // the harness process died from a signal or an unexpected exit
  timeout,           // the time limit ran out (hang)
  spec_error,        // spec.json or the reference tensors are missing or malformed
  no_gpu,            // no CUDA device: nothing could be verified
  harness_error,     // a bug or environment problem in the harness itself
  gpu_busy,   // the GPU's memory stayed taken by other jobs (not the candidate's fault: retry)
  too_large,  // the candidate keeps so much GPU memory that the references cannot be computed
};

// Stable name of a status ("verified", "mismatch", ...).
std::string_view status_name(VerifyStatus s);
// Inverse of status_name; nullopt for an unknown name.
std::optional<VerifyStatus> status_from_name(std::string_view name);
// True for statuses that blame the candidate (the generator moves on to the next one).
bool is_candidate_failure(VerifyStatus s);

// Event and CUPTI statistics of one timed candidate, milliseconds.
struct Percentiles {
  double median = 0, p10 = 0, p90 = 0;
};

// One kernel of a launch: its position's name (demangled, without the argument list) and the
// median of its GPU time over the trials.
struct KernelTime {
  std::string name;
  double median_ms = 0;
};

struct Timing {
  Percentiles event_ms;         // CUDA events around the launch on the given stream
  Percentiles cupti_kernel_ms;  // per-trial sum of the GPU time of every kernel (all streams)
  double kernels_per_launch = 0;
  // Where the time goes: each kernel of a launch in launch order (CUPTI), when every trial ran the
  // same kernels; empty otherwise (or without CUPTI).
  std::vector<KernelTime> kernels;
  int trials = 0;
  int warmups = 0;
  std::int64_t l2_flush_bytes = 0;
  std::int64_t bytes_moved = 0;  // inputs + params read once, outputs written once
  double achieved_gbps = 0;      // bytes_moved / event median
  double copy_gbps = 0;          // measured device-to-device copy (read + write), same GPU
  // "held stream": each trial's launch is enqueued while a host function holds the stream, so the
  // events time the GPU's work alone; "events": plain events (EGG_HARNESS_HOLD=off).
  std::string method = "events";
  int hold_timeouts = 0;  // trials whose hold was released by its 50 ms limit (the launch waited)
  // Timing stopped after a few trials: even the fastest was slower than the cutoff asked for (a
  // candidate that cannot win), so the figures come from those trials alone.
  bool cut_short = false;
};

struct GpuInfo {
  std::string name, cc, driver, runtime;
};

// Where the accuracy rule (base/accuracy.h) judged outputs: the comparison nearest to failing (or
// the failing one), against the float64 reference.
struct AccuracyRecord {
  std::string mode;    // "auto" or "on"
  std::string output;  // the output the figures refer to
  double factor = 2;
  int judged = 0;  // output comparisons (outputs x sets) the rule judged
  bool passed = true;
  double torch_max_abs_error = 0, kernel_max_abs_error = 0;
  double torch_mean_abs_error = 0, kernel_mean_abs_error = 0;
};

struct VerifyResult {
  VerifyStatus status = VerifyStatus::harness_error;
  std::string message;
  std::string output;  // the output the figures below refer to (the first failing one)
  double max_abs_error = 0, max_rel_error = 0;
  std::int64_t first_bad_index = -1;
  double bad_value = 0, ref_value = 0;
  std::int64_t bad_count = 0;
  double atol = 0, rtol = 0;
  int sets_checked = 0;
  bool deterministic_bitwise = true;
  std::string sanitizer = "not run";
  std::optional<Timing> timing;
  std::optional<AccuracyRecord> accuracy;
  std::string float64_unavailable;  // why no float64 reference was there where the rule asked
  nlohmann::json phases_ms = nlohmann::json::object();
  GpuInfo gpu;
  std::vector<std::string> files;  // files written into the work folder (mismatch tensors, logs)
  // Filled by run_candidate (not by egg-harness):
  int exit_code = 0;  // the child's exit code, or 128+signal
  std::string repro;  // a copy-pasteable command line that reproduces the run
  std::string work_dir;
};

nlohmann::json to_json(const VerifyResult& r);
// Throws nlohmann::json::exception on a malformed document.
VerifyResult result_from_json(const nlohmann::json& j);

}  // namespace egg::harness
