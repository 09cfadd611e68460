// The builtin backend's element-wise family: any chain of element-wise ops fused into one
// vectorized kernel (templates/elementwise/).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "render/template.h"

namespace egg::backend::builtin {

// Tunable parameters of the element-wise template.
struct ElementwiseParams {
  int block = 256;          // threads per block
  int unroll = 2;           // vectors per thread per tile
  bool vectorized = true;   // 16-byte vector path when pointers are aligned
  bool persistent = false;  // grid capped at blocks_per_sm * SMs (grid-stride loop)
  int blocks_per_sm = 8;
  nlohmann::json to_json() const;
};

// The element-wise family: its op table and templates.
class ElementwiseFamily {
 public:
  explicit ElementwiseFamily(const std::filesystem::path& data_dir);

  // Why the spec is not an element-wise chain this family implements (op named, with location),
  // or nullopt when it can.
  std::optional<UserError> cannot_implement(const spec::Spec& spec) const;
  // Renders a candidate with these parameters.
  Candidate render(const spec::Spec& spec, const contract::Contract& contract,
                   const ElementwiseParams& params) const;
  // The template files this family reads, for the cache key.
  std::vector<std::pair<std::string, std::string>> key_inputs() const;

 private:
  nlohmann::json ops_;
  render::Template ops_table_;
  render::Template helpers_;
  render::Template kernel_;
  render::Template launch_;
};

}  // namespace egg::backend::builtin
