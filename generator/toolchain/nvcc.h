// nvcc: its version (part of the cache key) and compile checks of candidates.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "util/process.h"

namespace egg::toolchain {

// Outcome of compiling one candidate.
struct CompileResult {
  bool ok = false;
  std::string log;    // nvcc's output (errors and ptxas lines)
  std::string repro;  // a copy-pasteable command line
};

// nvcc behind the ProcessRunner seam.
class Nvcc {
 public:
  // `extra_flags`: added to every compile (e.g. cuDNN's include folder, toolchain/cudnn.h).
  Nvcc(ProcessRunner& runner, std::filesystem::path exe, std::vector<std::string> extra_flags = {})
      : runner_(runner), exe_(std::move(exe)), extra_flags_(std::move(extra_flags)) {}

  // The "release X, VY" line of `nvcc --version`; a UserError when nvcc cannot run.
  std::string version() const;
  // A UserError naming the arches this nvcc can compile for when one of `arches` is not among
  // them (`nvcc --list-gpu-code`; nothing is checked when nvcc cannot list them).
  void check_arches(const std::vector<std::string>& arches) const;
  // Compiles `cu` to an object for every arch (sm_90 → -gencode arch=compute_90,code=sm_90),
  // with -Xptxas -v so the log carries registers, spills and shared memory.
  CompileResult compile_object(const std::filesystem::path& cu,
                               const std::filesystem::path& include_dir,
                               const std::vector<std::string>& arches,
                               const std::filesystem::path& object) const;

  const std::filesystem::path& exe() const { return exe_; }

 private:
  ProcessRunner& runner_;
  std::filesystem::path exe_;
  std::vector<std::string> extra_flags_;
};

// The most threads one nvcc is given for cicc and ptxas (--split-compile), when that many CPU
// slots are free (util/process.h: ProcessSpec::max_threads).
constexpr int kNvccMaxThreads = 8;

// The numeric part of "sm_90" ("90"), or an empty string when malformed.
std::string arch_number(const std::string& arch);

}  // namespace egg::toolchain
