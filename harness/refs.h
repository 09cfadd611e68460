// The reference tensors of a spec (written by the frontend with torch.save) as plain host buffers,
// and saving host buffers as tensors for mismatch reports. The only LibTorch user in the harness.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "harness_spec.h"

namespace egg::harness {

// A contiguous host tensor: the spec's dtype name, its shape and raw bytes.
struct HostTensor {
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> data;
};

struct RefSetData {
  std::vector<HostTensor> inputs, outputs;
};

// The params in spec order, from reference.params. Throws std::runtime_error naming the file and
// tensor when the file is missing or disagrees with the spec (name, shape or dtype).
std::vector<HostTensor> load_params(const HarnessSpec& spec);

// One reference set ({"inputs": [...], "outputs": [...]}), checked against the spec likewise.
RefSetData load_set(const HarnessSpec& spec, const RefSet& set);

// The values as doubles (for comparison).
std::vector<double> to_double(const HostTensor& t);

// Writes `t` with torch::pickle_save (loadable with torch.load in Python).
void save_tensor(const HostTensor& t, const std::filesystem::path& file);

}  // namespace egg::harness
