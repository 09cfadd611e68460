#include "gpu_memory.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "base/flock.h"

namespace egg::harness {
namespace fs = std::filesystem;

std::optional<fs::path> gpu_memory_lock_path() {
  if (const char* v = std::getenv("EGG_GPU_MEM_LOCK"); v && *v) {
    if (std::string(v) == "off") return std::nullopt;
    return fs::path(v);
  }
  std::error_code ec;
  auto tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return tmp / ("egg-gpu-mem-" + std::to_string(getuid()) + ".lock");
}

namespace {
void lock_fd(int fd, int op) {
  if (fd >= 0) egg::flock_retrying(fd, op);
}
std::string gb(std::size_t bytes) {
  return std::to_string(bytes / 100'000'000 / 10.0).substr(0, 5) + " GB";
}
}  // namespace

GpuMemoryAdmission::GpuMemoryAdmission(std::size_t need,
                                       const std::function<std::size_t()>& free_bytes,
                                       const fs::path& pause_marker,
                                       std::chrono::milliseconds max_wait,
                                       const std::optional<fs::path>& lock) {
  if (lock) fd_ = ::open(lock->c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  const auto start = std::chrono::steady_clock::now();
  bool marked = false;
  while (true) {
    lock_fd(fd_, LOCK_EX);
    const std::size_t free = free_bytes();
    if (free >= need + kGpuMemoryMargin) {
      admitted_ = true;
      break;
    }
    lock_fd(fd_, LOCK_UN);
    if (std::chrono::steady_clock::now() - start > max_wait) {
      error_ = "waited " + std::to_string(max_wait.count() / 1000) + " s for " + gb(need) +
               " of free GPU memory (" + gb(free) +
               " free): the op needs more than the GPU has free; "
               "run fewer jobs side by side or use a GPU with more memory";
      break;
    }
    if (!marked && !pause_marker.empty()) std::ofstream(pause_marker) << getpid() << "\n";
    marked = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  if (marked) {
    std::error_code ec;
    fs::remove(pause_marker, ec);
  }
  waited_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::optional<std::string> server_room_blocked(std::size_t need,
                                               const std::function<std::size_t()>& free_bytes,
                                               std::size_t kept, std::chrono::milliseconds max_wait,
                                               const fs::path& pause_marker) {
  const auto start = std::chrono::steady_clock::now();
  std::size_t free = free_bytes();
  if (free == 0 || free >= need + kGpuMemoryMargin) return std::nullopt;  // 0: unknown
  if (kept < kCandidateKeptBytes) return std::nullopt;
  // Waiting for other jobs is not the candidate's time: the marker pauses the run's time limit.
  if (!pause_marker.empty()) std::ofstream(pause_marker) << getpid() << "\n";
  bool room = false;
  while (!room && std::chrono::steady_clock::now() - start < max_wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    free = free_bytes();
    room = free >= need + kGpuMemoryMargin;
  }
  if (!pause_marker.empty()) {
    std::error_code ec;
    fs::remove(pause_marker, ec);
  }
  if (room) return std::nullopt;
  return "the candidate keeps " + gb(kept) +
         " of GPU memory after its call; beside it and the harness's buffers the reference "
         "server cannot compute the next input set (" +
         gb(need) + " needed, " + gb(free) +
         " free): on this GPU the candidate is too large to verify; a candidate that keeps less "
         "memory, or a GPU with more, verifies it";
}

GpuMemoryAdmission::~GpuMemoryAdmission() {
  if (fd_ >= 0) {
    lock_fd(fd_, LOCK_UN);
    ::close(fd_);
  }
}

}  // namespace egg::harness
