// The GPU the families' priors are sized for: grids, split counts and occupancy targets assume
// this many multiprocessors (the H100 and H200 have 132). Priors only: stage 1 and 2 measure on
// the real device, and no kernel's result depends on it.
#pragma once

#include <cstdint>

namespace egg::backend::builtin {

inline constexpr std::int64_t kSms = 132;

}  // namespace egg::backend::builtin
