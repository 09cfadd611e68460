// A template family of the builtin backend: one anchor pattern (element-wise chain, reduction,
// softmax, norm, GEMM, ...) with fused element-wise prologues/epilogues, its host-side
// can_implement, its stage-1 structures and its stage-2 tuning space.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"

namespace egg::backend::builtin {

// One family.
class Family {
 public:
  virtual ~Family() = default;
  // Short name, e.g. "elementwise".
  virtual std::string name() const = 0;
  // Why this family cannot implement the whole spec (an error naming the op and its line), or
  // nullopt when it can. Called before anything compiles.
  virtual std::optional<UserError> cannot_implement(const spec::Spec& spec) const = 0;
  // Stage 1: the structures that make sense for the spec, best expert prior first.
  virtual std::vector<Candidate> structures(const spec::Spec& spec,
                                            const contract::Contract& contract) const = 0;
  // Stage 2: parameter variants of the incumbent's structure, steered by the bottleneck class.
  virtual std::vector<Candidate> tunings(const spec::Spec& spec, const contract::Contract& contract,
                                         const Candidate& incumbent,
                                         const std::string& bottleneck) const = 0;
  // The debug agent's fallback for a failed candidate (e.g. a simpler structure), or nullopt.
  virtual std::optional<Candidate> fallback(const spec::Spec& spec,
                                            const contract::Contract& contract,
                                            const Candidate& failed) const = 0;
  // Template files read (name, contents), for the cache key.
  virtual std::vector<std::pair<std::string, std::string>> key_inputs() const = 0;
};

}  // namespace egg::backend::builtin
