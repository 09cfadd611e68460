// Admission to GPU memory shared by every EGG process on a machine
// (python/egg_frontend/gpu_memory.py is the reference server's side of it).
//
// A parallel build runs many generations on one GPU: each egg-harness and each reference server
// takes one machine-wide flock(2) while it checks that the GPU has the memory it needs free and
// allocates it, and waits (polling) while it has not. A generation waits for memory another job
// holds; it never fails because of it. While it waits, the file `pause_marker` exists, so
// run_process's time limit does not count the wait.
//
// The file: $EGG_GPU_MEM_LOCK if set ("off" disables the lock, not the check), else
// <tmp>/egg-gpu-mem-<uid>.lock.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace egg::harness {

// Memory left free for CUDA contexts, library workspaces and fragmentation.
inline constexpr std::size_t kGpuMemoryMargin = std::size_t{512} << 20;

std::optional<std::filesystem::path> gpu_memory_lock_path();

// Holds the memory lock from the moment `need` + margin bytes are free (as `free_bytes` reports)
// until destruction. Gives up after `max_wait` (admitted() false, error() says why): the GPU is
// then too small for the op, or something outside EGG holds its memory.
class GpuMemoryAdmission {
 public:
  GpuMemoryAdmission(std::size_t need, const std::function<std::size_t()>& free_bytes,
                     const std::filesystem::path& pause_marker = {},
                     std::chrono::milliseconds max_wait = std::chrono::hours(1),
                     const std::optional<std::filesystem::path>& lock = gpu_memory_lock_path());
  ~GpuMemoryAdmission();
  GpuMemoryAdmission(const GpuMemoryAdmission&) = delete;
  GpuMemoryAdmission& operator=(const GpuMemoryAdmission&) = delete;

  bool admitted() const { return admitted_; }
  double waited_ms() const { return waited_ms_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  bool admitted_ = false;
  double waited_ms_ = 0;
  std::string error_;
};

}  // namespace egg::harness
