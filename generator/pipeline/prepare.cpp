#include "pipeline/prepare.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cache/signature.h"
#include "cache/store.h"
#include "contract/contract.h"
#include "toolchain/cudnn.h"
#include "util/error.h"

namespace egg::pipeline {
namespace fs = std::filesystem;

namespace {

void validate(const GenerateOptions& o) {
  if (o.arches.empty())
    throw UserError("no target architecture given", "pass --arch sm_90 (egg_kernel: ARCH sm_90)");
  for (const auto& a : o.arches)
    if (toolchain::arch_number(a).empty())
      throw UserError("'" + a + "' is not a CUDA architecture",
                      "write it as sm_XX, e.g. sm_80 or sm_90");
  std::error_code ec;
  if (fs::is_directory(o.op_file, ec))
    throw UserError(SourceLocation{o.op_file.string(), 0, ""}, "the op file is a folder",
                    "pass the op.py inside it (egg-gen bench takes folders)");
  if (!fs::is_regular_file(o.op_file, ec))
    throw UserError(SourceLocation{o.op_file.string(), 0, ""}, "op file not found",
                    "check the path given to egg_kernel()/egg-gen generate");
  for (const auto& [k, v] : o.options)
    if (k.empty()) throw UserError("option '=" + v + "' has no name", "write options as key=value");
}

// A UserError when `dir` cannot become a writable folder: it, or its nearest existing ancestor,
// is not a folder, or that ancestor is not writable.
void check_writable_folder(const fs::path& dir, const std::string& option) {
  std::error_code ec;
  fs::path existing = fs::absolute(dir, ec).lexically_normal();
  while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.parent_path())
    existing = existing.parent_path();
  std::string problem;
  if (!fs::is_directory(existing, ec))
    problem = existing == fs::absolute(dir, ec).lexically_normal()
                  ? "is a file, not a folder"
                  : "cannot be created: " + existing.string() + " is a file";
  else if (::access(existing.c_str(), W_OK | X_OK) != 0)
    problem = "is not writable (" + existing.string() + ": " + std::strerror(errno) + ")";
  if (problem.empty()) return;
  const std::string hint =
      option == "--out"
          ? "pass --out a folder EGG may write (egg_kernel writes into the build tree)"
          : "pass --cache-dir (or set EGG_CACHE_DIR) to a writable folder, or use --no-cache";
  throw UserError(option + " " + dir.string() + " " + problem, hint);
}

// OPTIONS deterministic=on|off (default off, PyTorch's default: torch.backends.cudnn.deterministic
// is False): whether library routes may run engines whose last bits differ from run to run.
bool deterministic(const GenerateOptions& o) {
  const auto it = o.options.find("deterministic");
  if (it == o.options.end() || it->second == "off") return false;
  if (it->second == "on") return true;
  throw UserError("OPTIONS deterministic='" + it->second + "' is not known",
                  "use OPTIONS deterministic=on for bitwise-repeatable library engines (as "
                  "torch.backends.cudnn.deterministic), or deterministic=off (the default)");
}

// The backend's configuration as the options give it (backend::check_config checks it).
backend::BackendConfig backend_config(const GenerateOptions& o,
                                      const std::vector<std::string>& arches) {
  backend::BackendConfig bc;
  bc.name = o.backend;
  bc.model = o.model;
  bc.data_dir = o.data_dir;
  if (o.options.count("transcript")) bc.replay_transcript = o.options.at("transcript");
  bc.precision = precision(o);
  bc.wgmma =
      std::all_of(arches.begin(), arches.end(), [](const std::string& a) { return a == "sm_90a"; });
  return bc;
}

}  // namespace

std::string precision(const GenerateOptions& o) {
  const std::string p = o.options.count("precision") ? o.options.at("precision") : "default";
  if (p != "default" && p != "tf32" && p != "bf16" && p != "fp32x3")
    throw UserError("PRECISION '" + p + "' is not known",
                    "use PRECISION fp32x3 (split-precision tensor-core math as accurate as "
                    "PyTorch's fp32), tf32 or bf16 to opt in to faster fp32 matrix math, or leave "
                    "it out");
  return p;
}

AccuracyMode accuracy(const GenerateOptions& o) {
  const bool split = precision(o) == "fp32x3";
  const auto it = o.options.find("accuracy");
  if (it == o.options.end()) return split ? AccuracyMode::on : AccuracyMode::automatic;
  const auto m = accuracy_mode_from_name(it->second);
  if (!m)
    throw UserError("OPTIONS accuracy='" + it->second + "' is not known",
                    "use OPTIONS accuracy=auto (the default: against float64 where PyTorch's own "
                    "output is not determined to the tolerance), on, or off");
  if (split && *m != AccuracyMode::on)
    throw UserError("OPTIONS accuracy=" + it->second + " with PRECISION fp32x3",
                    "leave OPTIONS accuracy out (PRECISION fp32x3 is always judged against the "
                    "model computed in float64: at most k times PyTorch's own error), or drop "
                    "PRECISION fp32x3");
  return *m;
}

Setup prepare(const GenerateOptions& in, ProcessRunner& runner) {
  GenerateOptions o = in;
  validate(o);
  o.op_file = fs::absolute(o.op_file).lexically_normal();
  o.out_dir = fs::absolute(o.out_dir).lexically_normal();
  std::string name = o.name.empty() ? default_name(o.op_file) : o.name;
  if (!contract::valid_kernel_name(name))
    throw UserError("'" + name + "' is not a valid kernel name",
                    "use a C identifier that is not a C++ keyword (egg_kernel NAME / --name)");
  std::vector<std::string> arches = o.arches;
  std::sort(arches.begin(), arches.end());
  arches.erase(std::unique(arches.begin(), arches.end()), arches.end());
  ArtifactDirs artifacts{o.dump_dir, o.override_dir, parse_step(o.from_step)};
  if (artifacts.from != Step::spec && o.override_dir.empty())
    throw UserError(
        "--from " + o.from_step + " needs --override-dir with the earlier steps' artifacts",
        "dump them first with --dump-dir, edit, then pass that folder as --override-dir");

  // Everything that can be checked without op.py is checked before it runs.
  check_writable_folder(o.out_dir, "--out");
  if (o.cache_enabled && !artifacts.active())
    check_writable_folder(o.cache_dir.empty() ? cache::default_root() : o.cache_dir, "--cache-dir");
  backend::BackendConfig bc = backend_config(o, arches);
  const bool bitwise = deterministic(o);
  (void)accuracy(o);  // an unknown OPTIONS accuracy= is a user error before op.py runs
  backend::check_config(bc);
  if (!o.remote_cache.empty() && !o.remote_key.empty())
    (void)cache::EntrySigner(o.remote_key);  // a key too short to sign with is a user error
  const auto cudnn = toolchain::find_cudnn(o.cudnn, o.nvcc);
  bc.cudnn = !cudnn    ? backend::Cudnn::absent
             : bitwise ? backend::Cudnn::deterministic_engines
                       : backend::Cudnn::any_engine;
  toolchain::Nvcc nvcc(runner, o.nvcc, toolchain::cudnn_compile_flags(cudnn));
  std::string nvcc_version = nvcc.version();
  nvcc.check_arches(arches);
  return Setup{std::move(o),  std::move(name), std::move(arches),      std::move(artifacts),
               std::move(bc), std::move(nvcc), std::move(nvcc_version)};
}

}  // namespace egg::pipeline
