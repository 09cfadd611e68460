// The machine-wide quiet lock: a reader/writer lock of flock(2) on one file per machine, released
// by the kernel if a holder dies (python/egg_bench/gpu_lock.py is the same lock).
//
// Several egg-gen processes run side by side in a parallel build (Ninja -j, `egg-gen bench
// --jobs`). Verifying candidates side by side is fine; timing them side by side is not, since the
// kernels would share the SMs and DRAM, and neither is timing while other EGG jobs load the CPU
// (a baseline timed around a Python call absorbs every host delay). So:
// - every timed span (egg-harness's trials and copy bandwidth, egg_bench's eager and torch.compile
//   trials, the calls ncu replays: egg-harness --exclusive-calls) holds the lock exclusively
//   (GpuTimingLock);
// - other work that would disturb a timed span holds it shared: CPU-heavy work (nvcc compiles,
//   frontend tracing, torch.compile's compilation: CpuWorkLock) and untimed GPU work (egg-harness's
//   verification calls, the reference server's computing: Mode::shared). Any number at once,
//   never during a timed span. A shared holder waits for nothing else while it holds the lock.
// A timed span waits for the shared holders already running and blocks new ones meanwhile (writer
// preference): both kinds first take <lock>.gate exclusively, then the lock, then let the gate go;
// a timed span waiting for the lock keeps the gate, so new CPU work queues behind it. Locks are
// taken in one order (quiet lock, nothing after it), and a holder never waits for a child that
// takes the lock, so nothing deadlocks.
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

// The gate file beside `lock` (<lock>.gate) that gives timed spans precedence.
std::filesystem::path gpu_lock_gate(const std::filesystem::path& lock);

// Holds the lock exclusively from construction to destruction (blocking until it is free).
class GpuTimingLock {
 public:
  enum class Mode { exclusive, shared };
  // Locks `path`; on failure to open the file the lock is not held and error() says why
  // (timing then proceeds unlocked: a measurement, not a crash). While it waits, the file
  // `waiting_marker` (if given) exists: the parent's time limit (run_process) does not count
  // that time, so waiting for other processes' timing is never taken for a hang.
  explicit GpuTimingLock(const std::optional<std::filesystem::path>& path = gpu_lock_path(),
                         const std::filesystem::path& waiting_marker = {},
                         Mode mode = Mode::exclusive);
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

// Holds the lock shared from construction to destruction: CPU-heavy work, never during a timed
// span (blocking while one runs or waits). Failing to open the file leaves it unheld (the work
// proceeds, error() says why).
class CpuWorkLock {
 public:
  explicit CpuWorkLock(const std::optional<std::filesystem::path>& path = gpu_lock_path())
      : lock_(path, {}, GpuTimingLock::Mode::shared) {}
  bool held() const { return lock_.held(); }
  double waited_ms() const { return lock_.waited_ms(); }
  const std::string& error() const { return lock_.error(); }

 private:
  GpuTimingLock lock_;
};

}  // namespace egg
