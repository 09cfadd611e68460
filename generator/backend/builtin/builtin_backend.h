// The builtin backend: a deterministic expert system with no network and no key. Stage 1 picks a
// structure among template variants; stage 2 searches the template's parameters, steered by the
// profile agent's bottleneck class.
#pragma once

#include "backend/backend.h"
#include "backend/builtin/elementwise.h"

namespace egg::backend::builtin {

// The builtin expert backend.
class BuiltinBackend : public Backend {
 public:
  explicit BuiltinBackend(const std::filesystem::path& data_dir);

  std::string name() const override { return "builtin"; }
  void check_supported(const spec::Spec& spec) const override;
  std::vector<Candidate> propose(const StageRequest& request) override;
  std::optional<Candidate> repair(const StageRequest& request, const Candidate& failed,
                                  const std::string& failure_report) override;
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;

 private:
  ElementwiseFamily elementwise_;
};

// Stage-2 parameter sets for an element-wise problem of `numel` elements, best prior first.
std::vector<ElementwiseParams> elementwise_tuning_space(std::int64_t numel, const std::string& bottleneck,
                                                        bool vectorized);

}  // namespace egg::backend::builtin
