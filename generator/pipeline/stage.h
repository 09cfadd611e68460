// One stage of the pipeline: the code agent proposes, every candidate is evaluated, the debug agent
// repairs failures (bounded), the profile agent's feedback steers the next stage; the winner is the
// fastest verified candidate that beats the incumbent by more than the noise margin, or, with no
// GPU to measure on, the first candidate in the expert prior's order that passes the checks.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "pipeline/evaluate.h"
#include "pipeline/progress.h"

namespace egg::pipeline {

// A stage's budget and acceptance rule.
struct StageBudget {
  int max_candidates = 8;    // candidates evaluated
  int max_repairs = 3;       // debug-agent attempts per candidate
  int max_same_failure = 2;  // a failure class the debug agent failed to fix this often is given up
  double noise_margin = 0.03;  // a challenger must be this much faster than the incumbent
  // A challenger whose fastest trials take this many times the best's time cannot win: its
  // timing stops after a few trials (RunOptions::time_cutoff_ms).
  double time_cutoff_factor = 1.5;
  int recent_window = 6;             // attempts summarized for the agents
  std::int64_t max_tokens = 400000;  // tokens sent and received by the stage's agents
  double max_seconds = 900;          // wall time of the stage
};

// The stage's winner with its evaluation and the stage's record for the manifest.
struct StageOutcome {
  backend::Candidate winner;
  Evaluation evaluation;
  nlohmann::json record;
  // The other verified candidates of this stage and the ones before it, fastest first: the
  // verify step takes the next one when the winner fails its final check (compute-sanitizer,
  // another arch).
  std::vector<std::pair<backend::Candidate, Evaluation>> runners_up;
};

// A failed candidate as the manifest records it: {candidate, failure_class, message (first line)}.
nlohmann::json failure_record(const std::string& candidate, const backend::Failure& failure);

// How many runners-up a stage keeps.
inline constexpr std::size_t kRunnersUpKept = 3;

// Runs a stage; throws UserError when no candidate passes (with the last failure report). Each
// candidate's evaluation is reported to `progress` when one is given.
StageOutcome run_stage(backend::Backend& backend, backend::StageRequest request,
                       Evaluator& evaluator, const StageBudget& budget,
                       const std::optional<StageOutcome>& incumbent, Progress* progress = nullptr);

}  // namespace egg::pipeline
