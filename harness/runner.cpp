#include "runner.h"

#include <signal.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "base/child_env.h"
#include "base/gpu_lock.h"
#include "base/process.h"
#include "base/quote.h"

namespace egg::harness {
namespace fs = std::filesystem;

namespace {

std::string tail_of(const fs::path& file, std::size_t max_chars) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > max_chars) s = "..." + s.substr(s.size() - max_chars);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string signal_text(int sig) {
  const char* name = ::sigabbrev_np(sig);
  return std::string("SIG") + (name ? name : "?") + " (signal " + std::to_string(sig) + ")";
}

}  // namespace

std::vector<std::string> harness_argv(const CandidateRun& run, const fs::path& result_json,
                                      const fs::path& kept_source) {
  std::vector<std::string> argv = {fs::absolute(run.harness).string(),
                                   "verify",
                                   "--lib",
                                   fs::absolute(run.library).string(),
                                   "--spec",
                                   fs::absolute(run.spec).string(),
                                   "--work",
                                   fs::absolute(run.work_dir).string(),
                                   "--out",
                                   fs::absolute(result_json).string()};
  if (!run.refs.empty()) argv.insert(argv.end(), {"--refs", fs::absolute(run.refs).string()});
  if (!kept_source.empty())
    argv.insert(argv.end(), {"--source", fs::absolute(kept_source).string()});
  if (run.tolerance)
    argv.insert(argv.end(), {"--atol", exact_number(run.tolerance->atol), "--rtol",
                             exact_number(run.tolerance->rtol)});
  if (run.accuracy != AccuracyMode::automatic)
    argv.insert(argv.end(), {"--accuracy", std::string(accuracy_mode_name(run.accuracy))});
  if (run.accuracy_factor != kDefaultAccuracyFactor)
    argv.insert(argv.end(), {"--accuracy-factor", exact_number(run.accuracy_factor)});
  if (run.time) argv.push_back("--time");
  if (run.time && run.time_cutoff_ms)
    argv.insert(argv.end(), {"--cutoff-ms", exact_number(*run.time_cutoff_ms)});
  if (run.strict) argv.push_back("--strict");
  argv.insert(argv.end(), run.extra_args.begin(), run.extra_args.end());
  return argv;
}

VerifyResult run_candidate(const CandidateRun& run) {
  VerifyResult result;
  result.work_dir = fs::absolute(run.work_dir).string();
  std::error_code ec;
  fs::create_directories(run.work_dir, ec);
  if (ec) {
    result.status = VerifyStatus::harness_error;
    result.message = "cannot create work folder " + run.work_dir.string() + ": " + ec.message();
    return result;
  }
  // Keep the candidate's source beside its logs, so a failure can be inspected and replayed.
  fs::path kept_source;
  if (!run.source.empty()) {
    kept_source = run.work_dir / ("candidate" + run.source.extension().string());
    if (fs::absolute(run.source) != fs::absolute(kept_source))
      fs::copy_file(run.source, kept_source, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      result.status = VerifyStatus::harness_error;
      result.message = "cannot copy " + run.source.string() + " into " + run.work_dir.string() +
                       ": " + ec.message();
      return result;
    }
  }
  const fs::path result_json = run.work_dir / "result.json";
  const fs::path out_log = run.work_dir / "harness.stdout.log";
  const fs::path err_log = run.work_dir / "harness.stderr.log";
  fs::remove(result_json, ec);
  const auto argv = harness_argv(run, result_json, kept_source);
  const std::string repro = quote_command(argv);
  const fs::path wait_marker = run.work_dir / kGpuLockWaitMarker;
  fs::remove(wait_marker, ec);
  RunOptions options;
  options.time_limit = run.time_limit;
  options.pause_marker = wait_marker;
  const ProcessOutcome outcome = run_process(argv, child_environment(), out_log, err_log, options);

  auto finish = [&](VerifyResult r) {
    r.repro = repro;
    r.work_dir = result.work_dir;
    return r;
  };
  const std::string err_tail = tail_of(err_log, 1500);
  auto with_log = [&](std::string msg) {
    if (!err_tail.empty()) msg += "\n--- egg-harness stderr (tail) ---\n" + err_tail;
    return msg;
  };

  switch (outcome.kind) {
    case ProcessOutcome::Kind::failed_to_start:
      result.status = VerifyStatus::harness_error;
      result.message = outcome.error;
      result.exit_code = -1;
      return finish(result);
    case ProcessOutcome::Kind::timed_out:
      result.status = VerifyStatus::timeout;
      result.message = with_log("no result within the time limit of " +
                                std::to_string(run.time_limit.count() / 1000.0).substr(0, 5) +
                                " s: the candidate hangs or is far too slow; killed");
      result.exit_code = 128 + SIGKILL;
      return finish(result);
    case ProcessOutcome::Kind::signaled:
      result.status = VerifyStatus::crash;
      result.message = with_log("egg-harness died from " + signal_text(outcome.signal) +
                                " while running the candidate");
      result.exit_code = 128 + outcome.signal;
      return finish(result);
    case ProcessOutcome::Kind::exited:
      break;
  }
  // The harness writes result.json for every outcome it can observe (exit 0 verified, 10 rejected,
  // 2 usage, 3 internal, 4 no GPU). A missing or unreadable file means it died on its own.
  std::ifstream in(result_json);
  if (in) {
    try {
      VerifyResult parsed = result_from_json(nlohmann::json::parse(in));
      parsed.exit_code = outcome.exit_code;
      return finish(parsed);
    } catch (const std::exception& e) {
      result.status = VerifyStatus::harness_error;
      result.message = with_log(std::string("malformed ") + result_json.string() + ": " + e.what());
      result.exit_code = outcome.exit_code;
      return finish(result);
    }
  }
  result.status = VerifyStatus::crash;
  result.message =
      with_log("egg-harness exited with code " + std::to_string(outcome.exit_code) +
               " without writing " + result_json.string() + " (the candidate called exit?)");
  result.exit_code = outcome.exit_code;
  return finish(result);
}

}  // namespace egg::harness
