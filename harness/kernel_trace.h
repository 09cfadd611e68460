// Every kernel the GPU ran, on any stream, from CUPTI's activity API
// (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL). Timestamps are CUPTI's (nanoseconds, the same clock as
// now()), so host-side marks can bound the kernels of one launch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernel_breakdown.h"

namespace egg::harness {

class KernelTrace {
 public:
  // Enables the activity kind; false (and a reason in error()) if CUPTI can't be used here.
  bool start();
  // Disables the activity kind and delivers what is buffered.
  void stop();
  bool active() const { return active_; }
  const std::string& error() const { return error_; }
  // CUPTI's timestamp now (ns).
  std::uint64_t now() const;
  // CUPTI's id of `stream` (for telling the given stream from side streams); 0 if unknown.
  std::uint32_t stream_id(cudaStream_t stream) const;
  // Forces delivery of every completed record and returns (and forgets) them all.
  std::vector<KernelRecord> take();

 private:
  bool active_ = false;
  std::string error_;
};

}  // namespace egg::harness
