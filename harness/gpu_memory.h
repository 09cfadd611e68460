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

// Memory a candidate may keep after its call (library workspaces, small pools) before it counts as
// holding what the reference server waits for.
inline constexpr std::size_t kCandidateKeptBytes = std::size_t{1} << 30;

// Whether the reference server can compute its next set (`need` bytes) while this harness holds
// its buffers and the candidate what it kept after its call: `kept`, the free memory's drop across
// the candidate's first call. nullopt when
// `need` (+ the margin) is free, or when what is missing is not the candidate's (other jobs hold
// it: the server waits for them, as every job does). Otherwise it waits up to `max_wait` for
// other jobs to free enough (with `pause_marker` present, so the run's time limit does not count
// the wait), then says why not: the server would wait for memory that only this process, itself
// waiting on the server, could free.
std::optional<std::string> server_room_blocked(std::size_t need,
                                               const std::function<std::size_t()>& free_bytes,
                                               std::size_t kept, std::chrono::milliseconds max_wait,
                                               const std::filesystem::path& pause_marker = {});

}  // namespace egg::harness
