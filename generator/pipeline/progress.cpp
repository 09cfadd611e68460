#include "pipeline/progress.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "util/log.h"

namespace egg::pipeline {

namespace {

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g ms", ms);
  return buf;
}

std::string seconds_text(std::chrono::steady_clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + " s";
}

}  // namespace

Progress::Progress(std::string kernel, std::chrono::milliseconds interval, Now now, Sink sink)
    : kernel_(std::move(kernel)),
      interval_(interval),
      now_(std::move(now)),
      sink_(std::move(sink)),
      start_(now_()),
      last_(start_) {}

std::string Progress::line(const ProgressPoint& point) const {
  std::string text = kernel_ + ": " + point.stage;
  text += point.candidate == 0 ? ", building " + std::to_string(point.candidates) + " candidates"
                               : ", candidate " + std::to_string(point.candidate) + "/" +
                                     std::to_string(point.candidates);
  if (point.best_ms)
    text += ", best so far " + ms_text(*point.best_ms);
  else
    text += point.measuring ? ", none verified yet" : ", compile checks only (no GPU)";
  return text + " (" + seconds_text(now_() - start_) + ")";
}

void Progress::update(const ProgressPoint& point) {
  const auto t = now_();
  if (t - last_ < interval_) return;
  last_ = t;
  printed_ = true;
  sink_(line(point));
}

void Progress::finish(std::optional<double> kernel_ms, std::optional<double> eager_ms) {
  if (!printed_) return;
  std::string text = kernel_ + ": done in " + seconds_text(now_() - start_);
  if (kernel_ms) {
    text += ", " + ms_text(*kernel_ms);
    if (eager_ms && *kernel_ms > 0) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.2fx", *eager_ms / *kernel_ms);
      text += " against eager's " + ms_text(*eager_ms) + " (" + ratio + ")";
    }
  } else {
    text += " (not measured: no GPU)";
  }
  sink_(text);
}

Progress log_progress(const std::string& kernel) {
  std::chrono::milliseconds interval(5000);
  if (const char* env = std::getenv("EGG_PROGRESS_SECONDS"); env && *env) {
    char* end = nullptr;
    const double s = std::strtod(env, &end);
    if (end != env && *end == '\0' && s >= 0)
      interval = std::chrono::milliseconds(static_cast<long long>(s * 1000));
  }
  return Progress(
      kernel, interval, [] { return std::chrono::steady_clock::now(); },
      [](const std::string& text) { log::info(text); });
}

}  // namespace egg::pipeline
