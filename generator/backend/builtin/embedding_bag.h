// The builtin backend's embedding-bag family: ONE nn.EmbeddingBag / F.embedding_bag over bags of
// varying length (1-D indices and offsets, as recommendation models write it; bags of one length,
// a 2-D input, are decomposed while capturing into a gather and a reduction instead). Each bag's
// rows are gathered in entry order, times their per-sample weights, and summed, averaged or maxed
// in float (templates/embedding_bag/): entries equal to padding_idx left out, an empty bag 0, as
// ATen's CUDA kernels compute it. A group of threads owns a bag, each thread 16-byte vectors of
// its columns, several entries' indices and rows in flight.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "backend/builtin/op_table.h"
#include "backend/builtin/planned_family.h"
#include "render/template.h"

namespace egg::backend::builtin {

// What the graph is, in the terms of the bag template.
struct BagPlan {
  const spec::Node* anchor = nullptr;
  std::string mode;                                          // sum, mean, max
  std::string weight, indices, offsets, per_sample_weights;  // tensors; the last may be empty
  std::int64_t num_embeddings = 0, dim = 0;                  // weight [num_embeddings, dim]
  std::int64_t num_indices = 0, num_offsets = 0, bags = 0;
  std::optional<std::int64_t> padding_idx;  // a row index in [0, num_embeddings)
  bool include_last_offset = false;
};

// The plan of a spec, or why the family cannot implement it (naming op and line).
std::variant<BagPlan, UserError> plan_embedding_bag(const spec::Spec& spec);

// Tunable parameters of the bag template.
struct BagParams {
  int vec = 4;      // columns per thread per step (16-byte vectors at most)
  int tpb = 32;     // threads per bag (a power of two)
  int block = 256;  // threads per block (a multiple of tpb)
  int unroll = 4;   // entries whose indices and rows are loaded before they are accumulated
  nlohmann::json to_json() const;
  static BagParams from_json(const nlohmann::json& j);
};

// True when the parameters suit the plan (vec divides the row and fits 16 bytes, ...).
bool bag_params_valid(const BagPlan& plan, int elem_size, const BagParams& p);

class EmbeddingBagFamily : public PlannedFamily<BagPlan, BagParams> {
 public:
  explicit EmbeddingBagFamily(const std::filesystem::path& data_dir);

  std::string name() const override { return "embedding_bag"; }
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;
  std::variant<BagPlan, UserError> analyze(const spec::Spec& spec) const override;
  Candidate render(const spec::Spec& spec, const contract::Contract& contract, const BagPlan& plan,
                   const BagParams& params) const override;

 protected:
  std::vector<BagParams> structure_params(const spec::Spec& spec,
                                          const contract::Contract& contract,
                                          const BagPlan& plan) const override;
  std::vector<BagParams> tuning_params(const spec::Spec& spec, const contract::Contract& contract,
                                       const BagPlan& plan, const BagParams& incumbent,
                                       const std::string& bottleneck) const override;
  std::optional<BagParams> fallback_params(const spec::Spec& spec,
                                           const contract::Contract& contract, const BagPlan& plan,
                                           const BagParams& failed) const override;

 private:
  OpTable ops_;
  render::Template kernel_, launch_;
};

}  // namespace egg::backend::builtin
