#include "base/gpu_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace egg {

std::optional<std::filesystem::path> gpu_lock_path() {
  if (const char* v = std::getenv("EGG_GPU_LOCK"); v && *v) {
    if (std::string(v) == "off") return std::nullopt;
    return std::filesystem::path(v);
  }
  std::error_code ec;
  auto tmp = std::filesystem::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return tmp / ("egg-gpu-" + std::to_string(getuid()) + ".lock");
}

GpuTimingLock::GpuTimingLock(const std::optional<std::filesystem::path>& path,
                             const std::filesystem::path& waiting_marker) {
  if (!path) return;
  fd_ = ::open(path->c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    error_ = "cannot open the GPU lock " + path->string() + ": " + std::strerror(errno) +
             " (set EGG_GPU_LOCK to a writable file, or to off)";
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  if (!waiting_marker.empty()) std::ofstream(waiting_marker) << getpid() << "\n";
  int rc;
  while ((rc = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
  }
  if (!waiting_marker.empty()) {
    std::error_code ec;
    std::filesystem::remove(waiting_marker, ec);
  }
  waited_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (rc != 0) {
    error_ = "cannot lock " + path->string() + ": " + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
  }
}

GpuTimingLock::~GpuTimingLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

}  // namespace egg
