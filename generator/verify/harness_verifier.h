// The real GpuVerifier: nvcc builds the candidate as a shared library, egg-harness (a child process
// with a time limit and a scrubbed environment) verifies and times it.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "toolchain/nvcc.h"
#include "verify/gpu_verifier.h"
#include "verify/verifier.h"

namespace egg::verify {

// Verifies candidates with egg-harness on the local GPU.
class HarnessVerifier : public GpuVerifier {
 public:
  // `extra_flags`: added to every candidate's nvcc line (e.g. cuDNN's include and link flags).
  HarnessVerifier(ProcessRunner& runner, std::filesystem::path nvcc, std::filesystem::path harness,
                  GpuInfo gpu, std::chrono::milliseconds time_limit,
                  std::vector<std::string> extra_flags = {});

  GpuOutcome run(const std::filesystem::path& cu, const std::filesystem::path& include_dir,
                 const std::filesystem::path& spec_json, References& refs,
                 const std::filesystem::path& work, const RunOptions& options) override;
  std::unique_ptr<References> references(const ReferenceRequest& request) override {
    return start_reference_server(request);
  }
  void prebuild(const std::filesystem::path& cu, const std::filesystem::path& include_dir,
                const std::filesystem::path& work) override;
  nlohmann::json profile(const std::filesystem::path& work, const std::filesystem::path& spec_json,
                         References& refs) override;
  std::string gpu_name() const override { return gpu_.name; }
  std::string gpu_arch() const override { return gpu_.arch; }

 private:
  // nvcc building `cu` into the shared library egg-harness loads.
  ProcessSpec build_spec(const std::filesystem::path& cu, const std::filesystem::path& include_dir,
                         const std::filesystem::path& so) const;

  ProcessRunner& runner_;
  std::filesystem::path nvcc_;
  std::filesystem::path harness_;
  GpuInfo gpu_;
  std::chrono::milliseconds time_limit_;
  std::vector<std::string> extra_flags_;
  std::mutex prebuilt_mutex_;
  std::map<std::filesystem::path, ProcessResult> prebuilt_;  // by library path, until run()
};

// egg-harness beside egg-gen (install: bin/; build tree: ../harness/), or $EGG_HARNESS; nullopt if
// absent.
std::optional<std::filesystem::path> find_harness(const std::filesystem::path& egg_gen_exe);

// PyTorch eager and torch.compile times of the op (python -m egg_bench baseline), or an error text;
// torch.compile in its default mode and, unless `max_autotune` is false,
// max-autotune-no-cudagraphs; without `compile`, eager alone.
struct Baseline {
  // compile: torch.compile's default mode; compile_max_autotune: mode="max-autotune-no-cudagraphs".
  std::optional<double> eager_ms, compile_ms, compile_max_autotune_ms;
  // The same with host overhead hidden behind a GPU sleep (device time; egg_bench/timing.py).
  std::optional<double> eager_device_ms, compile_device_ms, compile_max_autotune_device_ms;
  // GPU time per eager call spent in the GEMM/conv library's kernels (cuBLAS, cuBLASLt, CUTLASS,
  // cuDNN), from a CUPTI profile of eager; absent when eager runs none.
  std::optional<double> library_gemm_ms;
  // Where each baseline's device time goes, from the same profiles: {"eager": [...], "compile":
  // [...]}, each a list of {"name", "ms"} per call (python/egg_bench/kernels.py); empty if none.
  nlohmann::json kernels = nlohmann::json::object();
  std::string error;
  double seconds = 0;  // the job's wall time, its waits for the GPU included
};
// `spec_json` (optional): the traced spec, from which the baseline sizes its GPU memory admission
// (python/egg_frontend/gpu_memory.py), as the reference server does.
Baseline time_baseline(ProcessRunner& runner, const std::filesystem::path& python,
                       const std::filesystem::path& data_dir, const std::filesystem::path& op_file,
                       const std::filesystem::path& work, bool max_autotune = true,
                       bool compile = true, const std::filesystem::path& spec_json = {});

}  // namespace egg::verify
