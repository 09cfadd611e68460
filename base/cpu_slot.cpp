#include "base/cpu_slot.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "base/flock.h"

namespace egg {

int cpu_slot_count() {
  if (const char* v = std::getenv("EGG_CPU_SLOTS"); v && *v) {
    int n = 0;
    const char* end = v + std::strlen(v);
    if (auto [p, ec] = std::from_chars(v, end, n); ec == std::errc() && p == end && n > 0) return n;
  }
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 0 ? static_cast<int>(cores) : 1;
}

std::filesystem::path cpu_slot_file(const std::filesystem::path& cpu_lock, int k) {
  return std::filesystem::path(cpu_lock.string() + ".slot" + std::to_string(k));
}

CpuSlot::CpuSlot(const std::optional<std::filesystem::path>& cpu_lock, int slots, bool wait) {
  if (!cpu_lock || slots < 1) return;
  const auto start = std::chrono::steady_clock::now();
  const int first = static_cast<int>(getpid() % slots);
  // Slots are tried in turn from `first` without waiting; the first free one is taken.
  int waiting_fd = -1;
  for (int i = 0; i < slots && fd_ < 0; ++i) {
    const int k = (first + i) % slots;
    const int fd = ::open(cpu_slot_file(*cpu_lock, k).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
      error_ = "cannot open EGG's CPU slot " + cpu_slot_file(*cpu_lock, k).string() + ": " +
               std::strerror(errno) +
               " (set EGG_GPU_LOCK to a file in a writable folder, or to off)";
      break;
    }
    if (flock_retrying(fd, LOCK_EX | LOCK_NB) == 0) {
      fd_ = fd;
      slot_ = k;
    } else if (i == 0) {
      waiting_fd = fd;  // kept to wait on if every slot is taken
    } else {
      ::close(fd);
    }
  }
  if (fd_ < 0 && waiting_fd >= 0 && error_.empty() && wait) {
    if (flock_retrying(waiting_fd, LOCK_EX) == 0) {
      fd_ = waiting_fd;
      slot_ = first;
      waiting_fd = -1;
    } else {
      error_ =
          "cannot lock " + cpu_slot_file(*cpu_lock, first).string() + ": " + std::strerror(errno);
    }
  }
  if (waiting_fd >= 0) ::close(waiting_fd);
  waited_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

CpuSlot::~CpuSlot() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

}  // namespace egg
