// Verification of a compiled kernel on a GPU, per arch. Without a GPU nothing is verified and the
// manifest says so; the GPU harness (egg-harness) plugs in behind this interface.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/process.h"

namespace egg::verify {

// The per-arch verdict recorded in the manifest.
struct ArchStatus {
  std::string arch;
  std::string state;   // "verified", "failed", "unverified", "compiled, not verified on this GPU"
  std::string reason;  // e.g. "no GPU"
  nlohmann::json details = nlohmann::json::object();  // errors, timings, GPU facts
  // "unverified: no GPU" and the like.
  std::string text() const { return reason.empty() ? state : state + ": " + reason; }
  bool verified() const { return state == "verified"; }
};

// What a GPU the generator runs on offers.
struct GpuInfo {
  bool present = false;
  std::string name;
  std::string arch;  // e.g. "sm_90"
};

// Asks nvidia-smi for the first GPU; absent when nvidia-smi is missing or fails.
GpuInfo probe_gpu(ProcessRunner& runner);

// The arch this GPU verifies among the requested ones: its own ("sm_90"), else its
// arch-specific variant ("sm_90a": Hopper's wgmma and setmaxnreg, which run only on compute
// capability 9.0) when only that is requested; the GPU's own arch when neither is.
std::string verified_arch(const std::string& gpu_arch, const std::vector<std::string>& requested);

// Marks every arch unverified with `reason`.
std::vector<ArchStatus> all_unverified(const std::vector<std::string>& arches,
                                       const std::string& reason);

}  // namespace egg::verify
