// The machine's CPU slots: at most N CPU-heavy children (nvcc, frontend tracing) of all EGG
// processes of a machine run at once, N = $EGG_CPU_SLOTS, else the number of cores. A parallel
// build runs many egg-gen at once (Ninja -j 16, `egg-gen bench --jobs`), and each compiles its
// candidates side by side: without a bound, 16 generations start over 100 nvcc on 16 cores, every
// compile slows down alike and the machine's memory fills with cicc processes.
//
// Slot K is the file <cpu lock>.slot<K> (base/gpu_lock.h), held with flock(2) exclusively, so a
// slot whose holder dies is free again. A child takes the first free slot it finds, starting at
// one picked by its process id; with none free it waits on that one. Slots are taken before the
// CPU lock and never while a lock is held, so they add no wait to a cycle.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace egg {

// The number of slots: $EGG_CPU_SLOTS when it is a positive integer, else the number of cores.
int cpu_slot_count();

// The file of slot `k` beside the CPU lock `cpu_lock`.
std::filesystem::path cpu_slot_file(const std::filesystem::path& cpu_lock, int k);

// Holds one of `slots` slots from construction to destruction (blocking until one is free, or
// with `wait` false only taking one that is free now: not held() when none is). No lock path
// (locking disabled) or a slot file that cannot be opened: not held, error() says why, and the
// work proceeds unbounded.
class CpuSlot {
 public:
  explicit CpuSlot(const std::optional<std::filesystem::path>& cpu_lock,
                   int slots = cpu_slot_count(), bool wait = true);
  ~CpuSlot();
  CpuSlot(const CpuSlot&) = delete;
  CpuSlot& operator=(const CpuSlot&) = delete;

  bool held() const { return fd_ >= 0; }
  int slot() const { return slot_; }
  double waited_ms() const { return waited_ms_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  int slot_ = -1;
  double waited_ms_ = 0;
  std::string error_;
};

}  // namespace egg
