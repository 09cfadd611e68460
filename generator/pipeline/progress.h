// Progress of a long generation for the build log: which stage, which candidate of how many, the
// best time so far and, once the baselines are timed, how it compares with PyTorch eager. At most
// one line per interval, so a quick generation (or a cache hit, which runs no stage) prints none.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace egg::pipeline {

// Where a generation is.
struct ProgressPoint {
  std::string stage;              // "stage1", "stage2"
  int candidate = 0;              // 1-based index of the candidate evaluated; 0: building them
  int candidates = 0;             // how many the stage evaluates
  std::optional<double> best_ms;  // the fastest verified time so far (measured on a GPU)
  bool measuring = true;          // false without a GPU: candidates are only compiled
};

// Writes progress lines through `sink`, throttled by `now`: the first line comes `interval` after
// the start, the next no sooner than `interval` after the previous one.
class Progress {
 public:
  using Now = std::function<std::chrono::steady_clock::time_point()>;
  using Sink = std::function<void(const std::string&)>;

  Progress(std::string kernel, std::chrono::milliseconds interval, Now now, Sink sink);

  // The generation moved on; prints a line if the interval has passed since the last one.
  void update(const ProgressPoint& point);
  // The baselines are timed: when progress lines were printed, one last line concludes them with
  // the winner against eager (so a long log ends with the result, a short one stays silent).
  void finish(std::optional<double> kernel_ms, std::optional<double> eager_ms);
  // The line a point is reported with (for tests and the log).
  std::string line(const ProgressPoint& point) const;

 private:
  std::string kernel_;
  std::chrono::milliseconds interval_;
  Now now_;
  Sink sink_;
  std::chrono::steady_clock::time_point start_, last_;
  bool printed_ = false;
};

// Progress lines to the log (`egg: <kernel>: ...`) every 5 s of the steady clock;
// EGG_PROGRESS_SECONDS sets the interval (0: every update).
Progress log_progress(const std::string& kernel);

}  // namespace egg::pipeline
