// Where a launch's GPU time goes: the kernels CUPTI saw during the timed trials, split into trials
// by host-side marks, summed per trial and, kernel by kernel, per position in the launch. Plain
// C++ (no CUDA), so the generator's tests can run it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "verify_result.h"

namespace egg::harness {

// One kernel CUPTI recorded (timestamps in ns, CUPTI's clock; the name as CUPTI gives it: mangled).
struct KernelRecord {
  std::uint64_t start = 0, end = 0;
  std::uint32_t stream_id = 0;
  std::string name;
};

struct KernelBreakdown {
  std::vector<double> trial_ms;  // per trial: the sum of its kernels' GPU time
  std::size_t kernels = 0;       // kernels that fell inside a trial
  // Per position in the launch (sorted by start), when every trial ran as many kernels with the
  // same names; empty otherwise.
  std::vector<KernelTime> per_kernel;
};

// `marks` bound the trials: trial i is [marks[i], marks[i + 1]). Records outside every trial (the
// L2 flushes are memsets, not kernels; warm-ups precede marks[0]) are left out.
KernelBreakdown kernel_breakdown(const std::vector<KernelRecord>& records,
                                 const std::vector<std::uint64_t>& marks);

// A kernel's name for a report: demangled, without its parameter list, at most 160 characters.
std::string short_kernel_name(std::string_view mangled);

}  // namespace egg::harness
