// The builtin backend's element-wise family: any chain of element-wise ops fused into one
// vectorized kernel (templates/elementwise/).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "backend/builtin/family.h"
#include "backend/builtin/op_table.h"
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

// The element-wise family: any chain of element-wise ops, fused into one vectorized pass.
class ElementwiseFamily : public Family {
 public:
  explicit ElementwiseFamily(const std::filesystem::path& data_dir);

  std::string name() const override { return "elementwise"; }
  std::optional<UserError> cannot_implement(const spec::Spec& spec) const override;
  std::vector<Candidate> structures(const spec::Spec& spec,
                                    const contract::Contract& contract) const override;
  std::vector<Candidate> tunings(const spec::Spec& spec, const contract::Contract& contract,
                                 const Candidate& incumbent,
                                 const std::string& bottleneck) const override;
  std::optional<Candidate> fallback(const spec::Spec& spec, const contract::Contract& contract,
                                    const Candidate& failed) const override;
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;

  // Renders a candidate with these parameters.
  Candidate render(const spec::Spec& spec, const contract::Contract& contract,
                   const ElementwiseParams& params) const;

 private:
  OpTable ops_;
  render::Template kernel_;
  render::Template launch_;
};

// Stage-2 parameter sets for an element-wise problem of `numel` elements, best prior first.
std::vector<ElementwiseParams> elementwise_tuning_space(std::int64_t numel,
                                                        const std::string& bottleneck,
                                                        bool vectorized);

}  // namespace egg::backend::builtin
