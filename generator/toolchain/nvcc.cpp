#include "toolchain/nvcc.h"

#include <set>
#include <sstream>

#include "util/error.h"

namespace egg::toolchain {

std::string arch_number(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0 || arch.size() < 5) return "";
  std::string num = arch.substr(3);
  size_t digits = 0;
  while (digits < num.size() && std::isdigit(static_cast<unsigned char>(num[digits]))) ++digits;
  if (digits < 2) return "";
  std::string suffix = num.substr(digits);
  if (!(suffix.empty() || suffix == "a" || suffix == "f")) return "";
  return num;
}

std::string Nvcc::version() const {
  ProcessSpec p;
  p.exe = exe_;
  p.args = {"--version"};
  p.timeout = std::chrono::seconds(60);
  ProcessResult r = runner_.run(p);
  if (!r.ok())
    throw UserError("cannot run nvcc at " + exe_.string() + ": " + (r.err.empty() ? r.out : r.err),
                    "pass --nvcc <path to nvcc> (CMake passes CMAKE_CUDA_COMPILER)");
  size_t pos = r.out.find("release ");
  if (pos == std::string::npos) return r.out;
  size_t end = r.out.find('\n', pos);
  return r.out.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

void Nvcc::check_arches(const std::vector<std::string>& arches) const {
  ProcessSpec p;
  p.exe = exe_;
  p.args = {"--list-gpu-code"};
  p.timeout = std::chrono::seconds(60);
  ProcessResult r = runner_.run(p);
  if (!r.ok()) return;
  std::set<std::string> known;
  std::string list;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("sm_", 0) != 0) continue;
    known.insert(line);
    list += (list.empty() ? "" : ", ") + line;
  }
  if (known.empty()) return;
  for (const auto& arch : arches) {
    std::string num = arch_number(arch);
    while (!num.empty() && !std::isdigit(static_cast<unsigned char>(num.back()))) num.pop_back();
    if (!known.count("sm_" + num))
      throw UserError("nvcc at " + exe_.string() + " cannot compile for " + arch,
                      "use one of " + list + " (ARCH / --arch), or a CUDA toolkit that knows " +
                          arch + " (--nvcc, CMAKE_CUDA_COMPILER)");
  }
}

CompileResult Nvcc::compile_object(const std::filesystem::path& cu,
                                   const std::filesystem::path& include_dir,
                                   const std::vector<std::string>& arches,
                                   const std::filesystem::path& object) const {
  ProcessSpec p;
  p.exe = exe_;
  p.args = {"-c",  cu.string(), "-o", object.string(), "-I", include_dir.string(), "-std=c++17",
            "-O3", "-Xptxas",   "-v"};
  p.args.insert(p.args.end(), extra_flags_.begin(), extra_flags_.end());
  for (const auto& arch : arches) {
    std::string num = arch_number(arch);
    p.args.push_back("-gencode");
    p.args.push_back("arch=compute_" + num + ",code=sm_" + num);
  }
  p.timeout = std::chrono::minutes(5);
  p.activity = "compiling " + cu.filename().string() + " with nvcc";
  p.private_tmp = true;  // nvcc's tmpxft_* files go with the run, even when it is killed
  p.cpu_work = true;     // never during a timed span (base/gpu_lock.h)
  // A plan of hundreds of kernels is one translation unit: cicc and ptxas split it over the
  // cores that are free (DenseNet121's: 86 of nvcc's 111 s in cicc and ptxas).
  p.max_threads = kNvccMaxThreads;
  p.threads_flag = "--split-compile=";
  ProcessResult r = runner_.run(p);
  CompileResult c;
  c.ok = r.ok();
  c.log = r.out + r.err;
  if (r.status == ProcessStatus::timed_out) c.log += "\nnvcc did not finish within 5 minutes";
  if (r.status == ProcessStatus::failed_to_start) c.log += "\ncannot start nvcc: " + exe_.string();
  c.repro = repro_line(p);
  return c;
}

}  // namespace egg::toolchain
