#include "backend/builtin/builtin_backend.h"

#include "backend/builtin/elementwise.h"
#include "backend/builtin/families.h"

namespace egg::backend::builtin {

BuiltinBackend::BuiltinBackend(const std::filesystem::path& data_dir) : families_(make_families(data_dir)) {}

const Family* BuiltinBackend::family_for(const spec::Spec& spec) const {
  for (const auto& f : families_)
    if (!f->cannot_implement(spec)) return f.get();
  return nullptr;
}

void BuiltinBackend::check_supported(const spec::Spec& spec) const {
  if (family_for(spec)) return;
  // No family takes the whole graph: report the most specific reason. A family whose anchor op is
  // in the graph explains best; otherwise the element-wise family names the first unknown op.
  std::optional<UserError> best;
  for (const auto& f : families_) {
    auto why = f->cannot_implement(spec);
    if (!best || (why && why->where().line > 0 && best->where().line == 0)) best = why;
  }
  throw UserError(best->where(), best->what(),
                  best->hint() + ". Around element-wise chains the builtin backend fuses one anchor: linear, "
                                 "matmul, mm, bmm, addmm; layer_norm, rms_norm, group_norm, instance_norm, "
                                 "batch_norm; sum, mean, prod, amax, amin, max, min, argmax, argmin, logsumexp, "
                                 "softmax, log_softmax, cumsum, cumprod");
}

std::vector<Candidate> BuiltinBackend::propose(const StageRequest& request) {
  const Family* family = family_for(*request.spec);
  if (!family) return {};
  if (request.stage == "stage1") return family->structures(*request.spec, *request.contract);
  if (!request.incumbent) return family->structures(*request.spec, *request.contract);
  return family->tunings(*request.spec, *request.contract, *request.incumbent, request.bottleneck);
}

std::optional<Candidate> BuiltinBackend::repair(const StageRequest& request, const Candidate& failed,
                                                const std::string& failure_report) {
  // Templates are verified ahead; the repair the expert knows is a family's simpler fallback.
  (void)failure_report;
  const Family* family = family_for(*request.spec);
  if (!family) return std::nullopt;
  return family->fallback(*request.spec, *request.contract, failed);
}

std::vector<std::pair<std::string, std::string>> BuiltinBackend::key_inputs() const {
  std::vector<std::pair<std::string, std::string>> all;
  for (const auto& f : families_)
    for (auto& input : f->key_inputs()) all.push_back(std::move(input));
  return all;
}

}  // namespace egg::backend::builtin
