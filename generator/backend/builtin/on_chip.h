// Rows kept on chip in the shared memory of a thread block cluster (sm_90): the limits and the
// prior that the reduction family (row normalize, ReductionParams::cluster) and the norm family
// (the "cluster" structure) share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>

namespace egg::backend::builtin {

// Dynamic shared memory one block of such a cluster may take: below the H100/H200 opt-in limit
// of 227 KiB, leaving room for the merge's static shared memory.
inline constexpr std::int64_t kOnChipMaxBytes = 220 * 1024;
// A chunk small enough for three blocks per multiprocessor: on the H200 the L1 norm's rows over
// 4 blocks of 64 KiB ran at 90 % of copy, while 1 MiB instance-norm rows over 8 blocks of 128 KiB
// and 1.5 MiB softmax rows over 8 blocks of 192 KiB (one block per multiprocessor) lost to the
// two-pass kernels.
inline constexpr std::int64_t kOnChipThreeBlocksBytes = 72 * 1024;

// Blocks per row and threads per block.
struct OnChipShape {
  int cluster = 0, block = 0;
};

// One block's chunk of a row: its shared-memory bytes and its 16-byte vectors.
struct OnChipChunk {
  std::int64_t bytes = 0, vectors = 0;
};

// The prior: the fewest blocks per row whose chunks leave room for two blocks per multiprocessor
// (about 112 KiB each), else one (the portable cluster sizes first, 16 last), no chunk above
// `most` bytes; enough threads for several vectors each (1024 from 8192 vectors per chunk, 512
// from 2048, else 256). `chunk_of(cluster)` sizes a chunk; `valid` is the family's own check.
inline std::optional<OnChipShape> on_chip_prior(const std::function<OnChipChunk(int)>& chunk_of,
                                                const std::function<bool(OnChipShape)>& valid,
                                                std::int64_t most = kOnChipMaxBytes) {
  for (const std::int64_t limit : {std::int64_t{112} * 1024, kOnChipMaxBytes})
    for (const int cluster : {1, 2, 4, 8, 16}) {
      if (cluster == 16 && limit != kOnChipMaxBytes) continue;
      const OnChipChunk c = chunk_of(cluster);
      if (c.bytes > std::min(limit, most)) continue;
      const OnChipShape s{cluster, c.vectors >= 8192 ? 1024 : c.vectors >= 2048 ? 512 : 256};
      if (valid(s)) return s;
    }
  return std::nullopt;
}

}  // namespace egg::backend::builtin
