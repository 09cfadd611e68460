#include "toolchain/cudnn.h"

#include <cstdlib>
#include <sstream>

#include "util/error.h"

namespace egg::toolchain {
namespace fs = std::filesystem;

std::optional<CudnnLocation> cudnn_at(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_regular_file(root / "include" / "cudnn.h", ec)) return std::nullopt;
  for (const char* lib : {"lib64", "lib"})
    for (const char* name : {"libcudnn.so", "libcudnn.so.9", "libcudnn.so.8"}) {
      const fs::path p = root / lib / name;
      if (fs::exists(p, ec)) return CudnnLocation{root / "include", p};
    }
  return std::nullopt;
}

namespace {

// nvcc's absolute path: as given when it has a folder, else the first match on PATH.
std::optional<fs::path> resolve(const fs::path& exe) {
  std::error_code ec;
  if (exe.has_parent_path()) return fs::exists(exe, ec) ? std::optional(exe) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && fs::exists(fs::path(dir) / exe, ec)) return fs::path(dir) / exe;
  return std::nullopt;
}

}  // namespace

std::optional<CudnnLocation> find_cudnn(const std::string& setting, const fs::path& nvcc) {
  if (setting == "none") return std::nullopt;
  if (!setting.empty()) {
    if (auto at = cudnn_at(setting)) return at;
    throw UserError(
        "no cuDNN under " + setting + " (it needs include/cudnn.h and lib64/ or lib/libcudnn.so*)",
        "pass the folder that holds include/ and lib/ of cuDNN, or --cudnn none");
  }
  if (const char* env = std::getenv("EGG_CUDNN_ROOT"); env && *env) {
    if (std::string(env) == "none") return std::nullopt;
    if (auto at = cudnn_at(env)) return at;
    throw UserError(
        std::string("no cuDNN under $EGG_CUDNN_ROOT=") + env,
        "point EGG_CUDNN_ROOT at the folder that holds include/cudnn.h and lib/libcudnn.so*, "
        "or set it to none");
  }
  if (auto exe = resolve(nvcc)) {
    std::error_code ec;
    const fs::path real = fs::weakly_canonical(*exe, ec);
    if (!ec && real.parent_path().has_parent_path())
      return cudnn_at(real.parent_path().parent_path());
  }
  return std::nullopt;
}

std::vector<std::string> cudnn_compile_flags(const std::optional<CudnnLocation>& cudnn) {
  if (!cudnn) return {};
  return {"-I", cudnn->include_dir.string()};
}

std::vector<std::string> cudnn_link_flags(const std::optional<CudnnLocation>& cudnn) {
  if (!cudnn) return {};
  // --as-needed: a library that no cuDNN call uses adds no dependency (most candidates).
  return {
      "-Xlinker", "--as-needed",    "-Xlinker", cudnn->library.string(),
      "-Xlinker", "--no-as-needed", "-Xlinker", "-rpath=" + cudnn->library.parent_path().string()};
}

}  // namespace egg::toolchain
