// Real nvcc on rendered candidates, for the families' library candidates (cuBLASLt, cuDNN) whose
// variants only run on a GPU: they must at least compile here, so that a GPU run never spends its
// time on compile errors. Skipped where nvcc is not installed.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "contract/contract.h"
#include "emit/emit.h"
#include "toolchain/cudnn.h"
#include "toolchain/nvcc.h"
#include "util/files.h"
#include "util/process.h"

namespace egg::testing {

// nvcc on PATH, else the CUDA toolkit's default location; nullopt when neither exists.
inline std::optional<std::filesystem::path> real_nvcc() {
  if (auto p = find_on_path("nvcc")) return p;
  std::error_code ec;
  if (std::filesystem::is_regular_file("/usr/local/cuda/bin/nvcc", ec))
    return std::filesystem::path("/usr/local/cuda/bin/nvcc");
  return std::nullopt;
}

// Compiles `cand` for `arch` as the pipeline's compile check does (cuDNN's flags when the toolkit
// has it), with ptxas's facts (registers, spills) in the log.
inline toolchain::CompileResult nvcc_compile(const std::filesystem::path& nvcc,
                                             const std::filesystem::path& data_dir,
                                             const contract::Contract& c,
                                             const backend::Candidate& cand,
                                             const std::string& arch = "sm_90") {
  SystemProcessRunner runner;
  const auto cudnn = toolchain::find_cudnn("", nvcc);
  toolchain::Nvcc compiler(runner, nvcc, toolchain::cudnn_compile_flags(cudnn));
  TempDir dir(std::filesystem::temp_directory_path(), "egg-nvcc-unit");
  const auto src = emit::render_sources(data_dir, c, cand, "builtin", "op.py");
  write_atomic(dir.path() / "include" / "egg" / (c.name + ".h"), src.header);
  write_atomic(dir.path() / "k.cu", src.cu);
  return compiler.compile_object(dir.path() / "k.cu", dir.path() / "include", {arch},
                                 dir.path() / "k.o");
}

// nvcc_compile's log on failure, "" on success.
inline std::string nvcc_compile_error(const std::filesystem::path& nvcc,
                                      const std::filesystem::path& data_dir,
                                      const contract::Contract& c, const backend::Candidate& cand,
                                      const std::string& arch = "sm_90") {
  const auto r = nvcc_compile(nvcc, data_dir, c, cand, arch);
  return r.ok ? "" : cand.id + ":\n" + r.log + "\n" + r.repro;
}

}  // namespace egg::testing
