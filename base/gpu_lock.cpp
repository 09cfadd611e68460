#include "base/gpu_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/flock.h"

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

std::filesystem::path gpu_lock_gate(const std::filesystem::path& lock) {
  return std::filesystem::path(lock.string() + ".gate");
}

std::optional<std::filesystem::path> cpu_lock_path(
    const std::optional<std::filesystem::path>& gpu_lock) {
  if (!gpu_lock) return std::nullopt;
  return std::filesystem::path(gpu_lock->string() + ".cpu");
}

GpuTimingLock::GpuTimingLock(const std::optional<std::filesystem::path>& path,
                             const std::filesystem::path& waiting_marker, Mode mode) {
  if (!path) return;
  fd_ = ::open(path->c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    error_ = "cannot open EGG's lock file " + path->string() + ": " + std::strerror(errno) +
             " (set EGG_GPU_LOCK to a writable file, or to off)";
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  if (!waiting_marker.empty()) std::ofstream(waiting_marker) << getpid() << "\n";
  // The gate first (a timed span waiting for the lock holds it, so new shared holders queue),
  // then the lock; the gate goes as soon as the lock is held. Without a gate (it cannot be
  // opened) the lock still works, without the precedence.
  const int gate = ::open(gpu_lock_gate(*path).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (gate >= 0) flock_retrying(gate, LOCK_EX);
  const int rc = flock_retrying(fd_, mode == Mode::exclusive ? LOCK_EX : LOCK_SH);
  if (gate >= 0) {
    ::flock(gate, LOCK_UN);
    ::close(gate);
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
