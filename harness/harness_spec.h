// The part of spec.json (docs/SPEC.md, schema 2) that the harness needs: the candidate's arguments
// in ABI order (inputs, params, outputs); the reference sets come from the reference server
// (ref_client.h). Plain C++.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace egg::harness {

struct TensorDecl {
  std::string name;
  std::vector<std::int64_t> shape;
  std::string dtype;  // spec dtype name
  std::int64_t numel() const;
  std::int64_t bytes() const;  // numel * element size
};

struct HarnessSpec {
  std::filesystem::path spec_dir;
  std::vector<TensorDecl> inputs, params, outputs;
};

// Element size of a spec dtype; 0 for an unknown name.
int dtype_size(const std::string& dtype);

// Reads spec.json. Throws std::runtime_error naming the file and the field on malformed input.
HarnessSpec load_harness_spec(const std::filesystem::path& spec_json);

}  // namespace egg::harness
