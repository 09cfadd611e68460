// The builtin backend's element-wise family: any chain of element-wise ops fused into one
// vectorized kernel (templates/elementwise/).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "backend/builtin/family.h"
#include "backend/builtin/op_table.h"
#include "backend/builtin/planned_family.h"
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
  static ElementwiseParams from_json(const nlohmann::json& j);
};

// What the family's analysis finds: the elements every output has (the kernel walks them).
struct ElementwisePlan {
  std::int64_t numel = 0;
};

// The element-wise family: any chain of element-wise ops, fused into one vectorized pass.
class ElementwiseFamily : public PlannedFamily<ElementwisePlan, ElementwiseParams> {
 public:
  explicit ElementwiseFamily(const std::filesystem::path& data_dir);

  std::string name() const override { return "elementwise"; }
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;
  std::variant<ElementwisePlan, UserError> analyze(const spec::Spec& spec) const override;
  Candidate render(const spec::Spec& spec, const contract::Contract& contract,
                   const ElementwisePlan& plan, const ElementwiseParams& params) const override;

 protected:
  std::vector<ElementwiseParams> structure_params(const spec::Spec& spec,
                                                  const contract::Contract& contract,
                                                  const ElementwisePlan& plan) const override;
  std::vector<ElementwiseParams> tuning_params(const spec::Spec& spec,
                                               const contract::Contract& contract,
                                               const ElementwisePlan& plan,
                                               const ElementwiseParams& incumbent,
                                               const std::string& bottleneck) const override;
  std::optional<ElementwiseParams> fallback_params(const spec::Spec& spec,
                                                   const contract::Contract& contract,
                                                   const ElementwisePlan& plan,
                                                   const ElementwiseParams& failed) const override;

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
