// The machine-wide quiet locks: two reader/writer locks of flock(2), one file each per machine,
// released by the kernel if a holder dies (python/egg_bench/gpu_lock.py takes the same ones).
//
// Several egg-gen processes run side by side in a parallel build (Ninja -j, `egg-gen bench
// --jobs`). Verifying candidates side by side is fine; timing them side by side is not, since the
// kernels would share the SMs and DRAM, and neither is timing a Python call while other EGG jobs
// load the CPU (a baseline timed around a Python call absorbs every host delay). So:
// - the GPU lock: every timed span on the GPU holds it exclusively (egg-harness's trials and copy
//   bandwidth, the calls ncu replays: egg-harness --exclusive-calls, egg_bench's baselines:
//   GpuTimingLock); untimed GPU work holds it shared (egg-harness's verification calls, the
//   reference server's computing: Mode::shared);
// - the CPU lock (<lock>.cpu): CPU-heavy work holds it shared (nvcc compiles, frontend tracing,
//   torch.compile's compilation, building a model: CpuWorkLock); only a timed span whose figure
//   includes the host's time holds it exclusively (egg_bench's baselines, in Python). egg-harness
//   times on a held stream (the launch is enqueued before the start event runs: device time), so
//   compiles go on beside its trials.
// Each lock gives a waiting exclusive holder precedence (writer preference): both kinds first take
// <lock>.gate exclusively, then the lock, then let the gate go; a timed span waiting for the lock
// keeps the gate, so new work queues behind it. Locks are taken in one order (the CPU lock, then
// the GPU lock, nothing after it; nobody holding the GPU lock waits for the CPU lock), and a
// holder never waits for a child that takes a lock, so nothing deadlocks.
//
// The GPU lock's file: $EGG_GPU_LOCK if set ("off" disables both), else <tmp>/egg-gpu-<uid>.lock;
// the CPU lock's is beside it.
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

// The CPU lock's file beside the GPU lock's (<lock>.cpu), or nullopt when locking is disabled.
std::optional<std::filesystem::path> cpu_lock_path(
    const std::optional<std::filesystem::path>& gpu_lock = gpu_lock_path());

// Holds a lock (the GPU lock unless told otherwise) exclusively or shared from construction to
// destruction (blocking until it is free).
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

// Holds the CPU lock shared from construction to destruction: CPU-heavy work, never during a
// timed span that includes the host (blocking while one runs or waits); device-timed spans do not
// stop it. Failing to open the file leaves it unheld (the work proceeds, error() says why).
class CpuWorkLock {
 public:
  explicit CpuWorkLock(const std::optional<std::filesystem::path>& gpu_lock = gpu_lock_path())
      : lock_(cpu_lock_path(gpu_lock), {}, GpuTimingLock::Mode::shared) {}
  bool held() const { return lock_.held(); }
  double waited_ms() const { return lock_.waited_ms(); }
  const std::string& error() const { return lock_.error(); }

 private:
  GpuTimingLock lock_;
};

}  // namespace egg
