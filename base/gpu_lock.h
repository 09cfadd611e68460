// An exclusive, cross-process lock on the GPU for the spans that measure time.
//
// Several egg-gen processes run side by side in a parallel build (Ninja -j, `egg-gen bench
// --jobs`). Verifying candidates side by side is fine; timing them side by side is not, since the
// kernels would share the SMs and DRAM. Every timed span (egg-harness's trials and copy bandwidth,
// egg_bench's eager and torch.compile trials, ncu) holds this lock: flock(2) on one file per
// machine, released by the kernel if the holder dies.
//
// The file: $EGG_GPU_LOCK if set ("off" disables locking), else <tmp>/egg-gpu-<uid>.lock.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace egg {

// The file egg-harness keeps in its work folder while it waits for the lock (run_candidate's
// time limit pauses while it exists).
inline constexpr const char* kGpuLockWaitMarker = "gpu-lock.wait";

// The lock file to use, or nullopt when locking is disabled (EGG_GPU_LOCK=off).
std::optional<std::filesystem::path> gpu_lock_path();

// Holds the lock from construction to destruction (blocking until it is free).
class GpuTimingLock {
 public:
  // Locks `path`; on failure to open the file the lock is not held and error() says why
  // (timing then proceeds unlocked: a measurement, not a crash). While it waits, the file
  // `waiting_marker` (if given) exists: the parent's time limit (run_process) does not count
  // that time, so waiting for other processes' timing is never taken for a hang.
  explicit GpuTimingLock(const std::optional<std::filesystem::path>& path = gpu_lock_path(),
                         const std::filesystem::path& waiting_marker = {});
  ~GpuTimingLock();
  GpuTimingLock(const GpuTimingLock&) = delete;
  GpuTimingLock& operator=(const GpuTimingLock&) = delete;

  bool held() const { return fd_ >= 0; }
  // Milliseconds spent waiting for other holders.
  double waited_ms() const { return waited_ms_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  double waited_ms_ = 0;
  std::string error_;
};

}  // namespace egg
