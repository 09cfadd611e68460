#include "verify/verifier.h"

#include <algorithm>

namespace egg::verify {

GpuInfo probe_gpu(ProcessRunner& runner) {
  GpuInfo info;
  ProcessSpec p;
  p.exe = "nvidia-smi";  // looked up on PATH; absent means no GPU
  p.args = {"--query-gpu=name,compute_cap", "--format=csv,noheader"};
  p.timeout = std::chrono::seconds(30);
  ProcessResult r = runner.run(p);
  if (!r.ok() || r.out.empty()) return info;
  std::string line = r.out.substr(0, r.out.find('\n'));
  size_t comma = line.rfind(',');
  if (comma == std::string::npos) return info;
  info.present = true;
  info.name = line.substr(0, comma);
  std::string cap = line.substr(comma + 1);
  cap.erase(0, cap.find_first_not_of(' '));
  std::string digits;
  for (char c : cap)
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  info.arch = "sm_" + digits;
  return info;
}

std::string verified_arch(const std::string& gpu_arch, const std::vector<std::string>& requested) {
  auto has = [&](const std::string& a) {
    return std::find(requested.begin(), requested.end(), a) != requested.end();
  };
  if (has(gpu_arch) || !has(gpu_arch + "a")) return gpu_arch;
  return gpu_arch + "a";
}

std::vector<ArchStatus> all_unverified(const std::vector<std::string>& arches,
                                       const std::string& reason) {
  std::vector<ArchStatus> out;
  for (const auto& a : arches) out.push_back({a, "unverified", reason, nlohmann::json::object()});
  return out;
}

}  // namespace egg::verify
