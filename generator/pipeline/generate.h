// `egg-gen generate`: the pipeline as a visible list of steps —
//   spec → stage1 (algorithmic structure) → stage2 (hardware tuning) → verify → emit —
// with the cache in front of the stages.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cache/remote.h"
#include "util/process.h"
#include "verify/gpu_verifier.h"

namespace egg::pipeline {

// Everything `generate` needs.
struct GenerateOptions {
  std::filesystem::path op_file;
  std::filesystem::path out_dir;
  std::string name;  // empty: op file's stem
  std::vector<std::string> arches;
  std::string backend = "builtin";
  std::string model;
  std::map<std::string, std::string> options;
  std::filesystem::path python = "python3";
  std::filesystem::path nvcc = "nvcc";
  // cuDNN for the conv family's cuDNN structure: empty = find it (toolchain/cudnn.h), "none" =
  // never, else its root folder.
  std::string cudnn;
  std::filesystem::path data_dir;
  std::filesystem::path cache_dir;  // empty: default root
  std::string remote_cache;  // base URL of a shared cache (GET/PUT <url>/ac/<key>); empty: none
  bool remote_read_only = false;  // read the shared cache, never upload (CI)
  std::string remote_key;  // the team's key that signs shared entries ($EGG_REMOTE_CACHE_KEY)
  bool cache_enabled = true;
  bool require_verified = false;
  bool require_faster =
      false;  // fail when the kernel is slower than eager beyond noise (eager_floor.h)
  bool compile_check = true;  // nvcc-compile the winner before emitting
  bool keep_work = false;
  int seeds = 3;
  // How long the frontend may take to trace op.py (--trace-timeout, EGG_TRACE_TIMEOUT).
  std::chrono::milliseconds trace_timeout{std::chrono::seconds(300)};
  // Where PyTorch computes the reference outputs (the reference server keeps them on the GPU
  // either way): "cuda" (default; PyTorch's default backend flags) or "cpu" (accuracy audits: its
  // CPU kernels accumulate fp32 reductions and scans in double).
  std::string ref_device = "cuda";
  std::filesystem::path dump_dir;      // write every step's artifact here
  std::filesystem::path override_dir;  // take step artifacts from here (hand-edited)
  std::string from_step = "spec";      // resume from this step; earlier artifacts from override_dir
  double atol = -1, rtol = -1;         // tolerance; negative: the dtype's default
  bool baseline = true;                // with a GPU: time PyTorch eager (the never-slower verdict)
  bool baseline_compile = true;        // ... and torch.compile (default mode) for the comparison
  bool baseline_max_autotune = true;   // ... and its max-autotune-no-cudagraphs as well
  bool strict = false;                 // with a GPU: compute-sanitizer memcheck on the winner
  int budget = 8;                      // candidates evaluated per stage
  std::string no_gpu_reason = "no GPU";  // why Services::gpu is null, for the manifest
};

// What happened, for the CLI's summary line.
struct GenerateResult {
  std::string name;
  std::string cache_key;
  std::string cache_status;  // hit | miss | corrupt | off
  std::vector<std::filesystem::path> changed;
  std::string status_text;  // e.g. "sm_90: unverified: no GPU"
  nlohmann::json manifest;  // what was written to manifest.json
};

// The side effects the pipeline uses.
struct Services {
  ProcessRunner& runner;
  verify::GpuVerifier* gpu = nullptr;  // null: no GPU (or no harness) here
  cache::HttpCall http = {};           // HTTP for the remote cache; empty: none
};

// Runs the pipeline; throws UserError / InternalError; writes nothing on failure.
GenerateResult generate(const GenerateOptions& options, Services& services);

// The kernel name for an op file when none is given: its stem as a C identifier.
std::string default_name(const std::filesystem::path& op_file);

}  // namespace egg::pipeline
