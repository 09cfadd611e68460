#include "pipeline/stage.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "util/error.h"
#include "util/log.h"

namespace egg::pipeline {

using nlohmann::json;

namespace {

std::string result_text(const Evaluation& ev) {
  if (!ev.ok()) return std::string(backend::failure_name(ev.failure->cls));
  if (ev.kernel_ms) return "verified " + std::to_string(*ev.kernel_ms) + " ms";
  return "compiles (not measured)";
}

// Tokens the stage's agents have used so far (the backend counts them).
std::int64_t stage_tokens(const backend::Backend& backend, const std::string& stage) {
  std::int64_t total = 0;
  const json usage = backend.usage();
  if (!usage.contains(stage)) return 0;
  for (const auto& agent : usage[stage])
    total += agent.value("tokens_in", 0) + agent.value("tokens_out", 0);
  return total;
}

std::string first_lines(const std::string& text, int lines) {
  size_t pos = 0;
  for (int i = 0; i < lines && pos != std::string::npos; ++i) pos = text.find('\n', pos + 1);
  return pos == std::string::npos ? text : text.substr(0, pos);
}

}  // namespace

json failure_record(const std::string& candidate, const backend::Failure& failure) {
  return {{"candidate", candidate},
          {"failure_class", std::string(backend::failure_name(failure.cls))},
          {"message", failure.first_line()}};  // the manifest says why, not only the class
}

StageOutcome run_stage(backend::Backend& backend, backend::StageRequest request,
                       Evaluator& evaluator, const StageBudget& budget,
                       const std::optional<StageOutcome>& incumbent, Progress* progress) {
  const bool measure = evaluator.can_measure();
  const auto start = std::chrono::steady_clock::now();
  std::string budget_stop;
  // The stage's budget: wall time and tokens; once spent, the best so far stands.
  auto over_budget = [&] {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > budget.max_seconds)
      budget_stop = "wall time budget spent (" + std::to_string(int(seconds)) + " s)";
    else if (stage_tokens(backend, request.stage) > budget.max_tokens)
      budget_stop = "token budget spent";
    return !budget_stop.empty();
  };
  std::vector<backend::Candidate> proposals = backend.propose(request);
  // A proposal the incumbent's stage measured already (its winner or a runner-up: the same id and
  // code) is not measured again: its evaluation stands, and the budget goes to new candidates.
  if (incumbent) {
    auto measured = [&](const backend::Candidate& c) {
      auto same = [&](const backend::Candidate& m) {
        return m.id == c.id && m.code.device_code == c.code.device_code &&
               m.code.launch_body == c.code.launch_body;
      };
      if (same(incumbent->winner)) return true;
      return std::any_of(incumbent->runners_up.begin(), incumbent->runners_up.end(),
                         [&](const auto& r) { return same(r.first); });
    };
    std::erase_if(proposals, measured);
  }
  int evaluated = 0;
  const int planned = static_cast<int>(std::min<size_t>(proposals.size(), budget.max_candidates));
  std::optional<StageOutcome> best = incumbent;
  auto report = [&] {
    if (progress)
      progress->update({request.stage, evaluated, planned,
                        best ? best->evaluation.kernel_ms : std::nullopt, measure});
  };
  // With a GPU every candidate within the budget is measured: build them side by side first.
  report();
  if (measure)
    evaluator.prepare(std::vector<backend::Candidate>(
        proposals.begin(),
        proposals.begin() + std::min<size_t>(proposals.size(), budget.max_candidates)));
  json attempts = json::array();
  bool took_new = false;
  // Every verified candidate (the runners-up are those that did not win).
  std::vector<std::pair<backend::Candidate, Evaluation>> passed;
  if (incumbent) {
    passed.emplace_back(incumbent->winner, incumbent->evaluation);
    passed.insert(passed.end(), incumbent->runners_up.begin(), incumbent->runners_up.end());
  }
  // Every candidate that failed, with its class and report, for the message when none passes.
  std::vector<std::pair<std::string, backend::Failure>> failed;
  auto attempt_record = [](const std::string& id, const Evaluation& ev) {
    json a = ev.ok() ? json{{"candidate", id}} : failure_record(id, *ev.failure);
    a["result"] = result_text(ev);
    return a;
  };
  for (auto candidate : proposals) {
    if (evaluated >= budget.max_candidates) break;
    if (over_budget()) break;
    ++evaluated;
    report();
    auto cutoff = [&]() -> std::optional<double> {
      if (!best || !best->evaluation.kernel_ms) return std::nullopt;
      return *best->evaluation.kernel_ms * budget.time_cutoff_factor;
    };
    Evaluation ev = evaluator.evaluate(candidate, measure, false, false, cutoff());
    std::map<backend::FailureClass, int> failures;
    bool listed = false;
    for (int repair = 0; !ev.ok() && repair < budget.max_repairs; ++repair) {
      if (++failures[ev.failure->cls] > budget.max_same_failure) break;
      if (over_budget()) break;
      failed.emplace_back(candidate.id, *ev.failure);
      request.recent.push_back({candidate.id, "as proposed", result_text(ev)});
      auto fixed = backend.repair(request, candidate, *ev.failure);
      if (!fixed) {
        listed = true;              // this evaluation is in `failed` already
        request.recent.pop_back();  // and goes to `recent` and `attempts` once, below
        break;
      }
      // The failed attempt the debug agent repairs (the repaired one is recorded below).
      json a = attempt_record(candidate.id, ev);
      a["agent"] = "code";
      attempts.push_back(a);
      log::info(request.stage + ": debug agent repairs " + candidate.id + " (" + result_text(ev) +
                ")");
      candidate = *fixed;
      report();
      ev = evaluator.evaluate(candidate, measure, false, false, cutoff());
    }
    json a = attempt_record(candidate.id, ev);
    a["profile"] = ev.profile;
    attempts.push_back(a);
    request.recent.push_back({candidate.id, candidate.summary, result_text(ev)});
    if (request.recent.size() > static_cast<size_t>(budget.recent_window))
      request.recent.erase(request.recent.begin());
    if (!ev.ok()) {
      if (!listed) failed.emplace_back(candidate.id, *ev.failure);
      continue;
    }
    passed.emplace_back(candidate, ev);
    // The library floor is preferred: it replaces a kernel of EGG's own when faster at all, while
    // any other challenger must beat the incumbent beyond the timing noise.
    const double margin =
        best && backend::library_route(candidate) && !backend::library_route(best->winner)
            ? 0.0
            : budget.noise_margin;
    const bool better = !best || (!took_new && !measure) ||
                        (ev.kernel_ms && best->evaluation.kernel_ms &&
                         *ev.kernel_ms < *best->evaluation.kernel_ms * (1.0 - margin)) ||
                        (ev.kernel_ms && !best->evaluation.kernel_ms);
    if (better) {
      best = StageOutcome{candidate, ev, json::object(), {}};
      took_new = true;
    }
    if (!measure) break;  // nothing to compare: the first passing candidate in prior order wins
  }
  if (!best) {
    // Every candidate's class and first line; the last one's report in full (up to 40 lines).
    std::string text = request.stage + ": no candidate passed (" + std::to_string(evaluated) +
                       " tried" + (budget_stop.empty() ? "" : "; " + budget_stop) + ")";
    if (proposals.empty()) text += ": the backend proposed none";
    for (const auto& [id, f] : failed)
      text +=
          "\n  " + id + ": " + std::string(backend::failure_name(f.cls)) + ": " + f.first_line();
    if (!failed.empty()) text += "\nlast failure:\n" + first_lines(failed.back().second.text(), 40);
    throw UserError(text,
                    "inspect the candidates with --keep-work, or try another backend or model");
  }
  // The runners-up: every other verified candidate, fastest first (an unmeasured one last), each
  // id once.
  best->runners_up.clear();
  std::stable_sort(passed.begin(), passed.end(), [](const auto& a, const auto& b) {
    const double x = a.second.kernel_ms.value_or(1e300), y = b.second.kernel_ms.value_or(1e300);
    return x < y;
  });
  for (const auto& p : passed) {
    if (best->runners_up.size() >= kRunnersUpKept) break;
    bool seen = p.first.id == best->winner.id;
    for (const auto& r : best->runners_up) seen = seen || r.first.id == p.first.id;
    if (!seen) best->runners_up.push_back(p);
  }
  best->record = {
      {"step", request.stage},
      {"objective", request.objective.substr(0, request.objective.find('\n'))},
      {"agents",
       {{"code", backend.name()},
        {"debug", backend.name()},
        {"profile", measure ? "measured on the GPU" : "static facts only (no GPU)"}}},
      {"bottleneck_in", request.bottleneck},
      {"attempts", attempts},
      {"chosen", best->winner.id},
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()},
      {"kept_incumbent", !took_new},
      {"budget",
       {{"candidates", budget.max_candidates},
        {"repairs", budget.max_repairs},
        {"tokens", budget.max_tokens},
        {"seconds", budget.max_seconds},
        {"stopped", budget_stop}}},
      {"summary", best->winner.summary},
      {"params", best->winner.params},
      {"profile", best->evaluation.profile},
      {"decision", measure ? "fastest verified candidate, beating the incumbent by more than " +
                                 std::to_string(static_cast<int>(budget.noise_margin * 100)) +
                                 "% (a library route replaces an own kernel when faster at all)"
                           : "no GPU to measure on: first candidate in the expert prior's order "
                             "that passes the checks"}};
  return *best;
}

}  // namespace egg::pipeline
