// The code of a fusion plan: each segment's family code wrapped in its own namespace behind a
// static launch function with the segment's sub-contract, and the top-level launch() body that
// allocates the intermediates on the stream, runs the segments in order and frees each buffer after
// its last reader (templates/plan/).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backend/builtin/planner.h"
#include "render/template.h"

namespace egg::backend::builtin {

// Renders plans into one candidate.
class PlanCode {
 public:
  explicit PlanCode(const std::filesystem::path& data_dir);

  // The contract name of segment k of kernel `kernel`: "<kernel>_s<k>".
  static std::string segment_name(const std::string& kernel, size_t k);
  // The sub-contract segment k is rendered under.
  static contract::Contract segment_contract(const Plan& plan, size_t k, const std::string& kernel);
  // One candidate from one candidate per segment (parts[k] rendered under segment_contract(k));
  // its params record the plan (segments, families, nodes, each segment's id and params).
  Candidate combine(const spec::Spec& spec, const contract::Contract& contract, const Plan& plan,
                    const std::vector<Candidate>& parts) const;
  // The templates read, for the cache key.
  std::vector<std::pair<std::string, std::string>> key_inputs() const;

 private:
  render::Template device_;
  render::Template launch_;
  render::Template keep_pool_;  // the stream-ordered memory kept between calls (common/)
};

}  // namespace egg::backend::builtin
