// The builtin backend: a deterministic expert system with no network and no key. Stage 1 picks a
// structure among template variants; stage 2 searches the template's parameters, steered by the
// profile agent's bottleneck class.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "backend/builtin/family.h"

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
  // The family that implements the spec (checked by check_supported), or null.
  const Family* family_for(const spec::Spec& spec) const;

  std::vector<std::unique_ptr<Family>> families_;
};

}  // namespace egg::backend::builtin
