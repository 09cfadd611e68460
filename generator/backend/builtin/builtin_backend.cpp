#include "backend/builtin/builtin_backend.h"

namespace egg::backend::builtin {

BuiltinBackend::BuiltinBackend(const std::filesystem::path& data_dir) : elementwise_(data_dir) {}

void BuiltinBackend::check_supported(const spec::Spec& spec) const {
  if (auto why = elementwise_.cannot_implement(spec)) throw *why;
}

std::vector<ElementwiseParams> elementwise_tuning_space(std::int64_t numel, const std::string& bottleneck,
                                                        bool vectorized) {
  // Expert prior: a memory-bound stream wants enough bytes in flight per SM (unroll 2-4 of 16-byte
  // vectors, 256 threads); a small problem is latency-bound and wants more, smaller blocks.
  const bool small = numel < (1 << 20);
  std::vector<ElementwiseParams> space;
  auto add = [&](int block, int unroll, bool persistent) {
    ElementwiseParams p;
    p.block = block;
    p.unroll = unroll;
    p.vectorized = vectorized;
    p.persistent = persistent;
    space.push_back(p);
  };
  if (small || bottleneck == "latency" || bottleneck == "launch") {
    add(128, 1, false);
    add(256, 1, false);
    add(64, 1, false);
  } else {
    add(256, 2, false);
    add(256, 4, false);
    add(512, 2, false);
    add(128, 4, false);
    add(256, 1, false);
    add(256, 4, true);
  }
  return space;
}

std::vector<Candidate> BuiltinBackend::propose(const StageRequest& request) {
  const spec::Spec& s = *request.spec;
  const contract::Contract& c = *request.contract;
  std::vector<Candidate> out;
  if (request.stage == "stage1") {
    // Structures: one fused pass with 16-byte vectors (least traffic, fewest instructions), then the
    // scalar fused pass as a fallback structure.
    for (bool vectorized : {true, false}) {
      ElementwiseParams p;
      p.vectorized = vectorized;
      out.push_back(elementwise_.render(s, c, p));
    }
    return out;
  }
  const bool vectorized = !request.incumbent || request.incumbent->params.value("vectorized", true);
  for (const auto& p : elementwise_tuning_space(spec::numel(s.outputs.front().shape), request.bottleneck,
                                                vectorized))
    out.push_back(elementwise_.render(s, c, p));
  return out;
}

std::optional<Candidate> BuiltinBackend::repair(const StageRequest& request, const Candidate& failed,
                                                const std::string& failure_report) {
  // Templates are verified ahead; the one repair the expert knows is falling back from the vector path.
  (void)failure_report;
  if (!failed.params.value("vectorized", true)) return std::nullopt;
  ElementwiseParams p;
  p.vectorized = false;
  return elementwise_.render(*request.spec, *request.contract, p);
}

std::vector<std::pair<std::string, std::string>> BuiltinBackend::key_inputs() const {
  return elementwise_.key_inputs();
}

}  // namespace egg::backend::builtin
