// The builtin backend's sort family: ONE torch.topk, torch.sort (torch.argsort, torch.msort),
// torch.kthvalue or torch.median along a dim of a tensor (median: or of all of it), returning its
// values and/or int64 indices (templates/sort/). A block owns a row (the elements along the dim: a
// contiguous run, or strided when dims follow it), loads it into shared memory padded to a power
// of two, sorts it with a bitonic network and writes its first k (topk), all (sort) or its k-th
// smallest (kthvalue; median: the lower middle one, or the row's first NaN) element.
//
// Order as PyTorch's: values largest first for topk(largest=True) and sort(descending=True), NaN
// counting as larger than every number; ties keep the lower index first (what a stable sort
// gives; PyTorch's unstable sort and topk leave the order of equal values unspecified).
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

// What the graph is, in the terms of the sort template.
struct SortPlan {
  const spec::Node* anchor = nullptr;
  std::string op;           // topk, sort, kthvalue, median
  bool descending = false;  // largest first (topk's largest, sort's descending)
  bool nan_first = false;   // NaN sorts before every number (descending; median: to find one)
  std::int64_t first = 0;   // the sorted position of the first element written
  std::string input;        // the tensor sorted (an input, param or earlier kernel's value)
  std::int64_t outer = 1;   // rows = outer * inner
  std::int64_t len = 1;     // elements along the dim
  std::int64_t inner = 1;   // the stride of the dim (product of the dims after it)
  std::int64_t k = 1;       // elements written per row: topk's k, sort's len, else 1
  std::vector<std::string> values;   // nodes that are the sorted values (getitem 0)
  std::vector<std::string> indices;  // nodes that are the int64 indices (getitem 1)
  std::int64_t padded() const;       // the row length as the network sorts it (a power of two)
  std::int64_t rows() const { return outer * inner; }
};

// The plan of a spec, or why the sort family cannot implement it (naming op and line).
std::variant<SortPlan, UserError> plan_sort(const spec::Spec& spec);

// Tunable parameters of the sort template.
struct SortParams {
  int block = 256;  // threads per block (one row per block at a time)
  nlohmann::json to_json() const;
  static SortParams from_json(const nlohmann::json& j);
};

// The sort family.
class SortFamily : public PlannedFamily<SortPlan, SortParams> {
 public:
  explicit SortFamily(const std::filesystem::path& data_dir);

  std::string name() const override { return "sort"; }
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;
  std::variant<SortPlan, UserError> analyze(const spec::Spec& spec) const override;
  Candidate render(const spec::Spec& spec, const contract::Contract& contract, const SortPlan& plan,
                   const SortParams& params) const override;

 protected:
  std::vector<SortParams> structure_params(const spec::Spec& spec,
                                           const contract::Contract& contract,
                                           const SortPlan& plan) const override;
  std::vector<SortParams> tuning_params(const spec::Spec& spec, const contract::Contract& contract,
                                        const SortPlan& plan, const SortParams& incumbent,
                                        const std::string& bottleneck) const override;
  std::optional<SortParams> fallback_params(const spec::Spec& spec,
                                            const contract::Contract& contract,
                                            const SortPlan& plan,
                                            const SortParams& failed) const override;

 private:
  OpTable ops_;
  render::Template kernel_, launch_;
};

}  // namespace egg::backend::builtin
