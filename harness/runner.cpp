#include "runner.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include "env_scrub.h"
#include "gpu_lock.h"

namespace egg::harness {
namespace fs = std::filesystem;
namespace bp = boost::process;

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

std::string quote_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789_-+=/.,:@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

ProcessOutcome run_process(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                           const fs::path& stdout_file, const fs::path& stderr_file,
                           std::chrono::milliseconds time_limit, const fs::path& pause_marker) {
  ProcessOutcome outcome;
  if (argv.empty()) {
    outcome.error = "empty command";
    return outcome;
  }
  std::string exe = argv[0];
  if (exe.find('/') == std::string::npos) {
    const auto found = bp::search_path(exe);
    if (found.empty()) {
      outcome.error = "'" + exe + "' not found on PATH";
      return outcome;
    }
    exe = found.string();
  }
  bp::environment child_env;
  for (const auto& [k, v] : env) child_env[k] = v;
  const std::vector<std::string> args(argv.begin() + 1, argv.end());
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  // Its own process group, so that a hang under compute-sanitizer is killed with its child too.
  bp::child child(bp::exe = exe, bp::args = args, child_env, bp::std_in < bp::null,
                  bp::std_out > stdout_file.string(), bp::std_err > stderr_file.string(),
                  bp::extend::on_exec_setup = [](auto&) { ::setpgid(0, 0); }, ec);
  if (ec) {
    outcome.error = "cannot start " + exe + ": " + ec.message();
    return outcome;
  }
  const pid_t pid = child.id();
  bool timed_out = false;
  // Polling, not child.wait_for: wait_for is unreliable across the Boost versions we support.
  std::chrono::steady_clock::duration paused{0};
  auto last = start;
  while (child.running(ec)) {
    const auto now = std::chrono::steady_clock::now();
    std::error_code marker_ec;
    if (!pause_marker.empty() && fs::exists(pause_marker, marker_ec)) paused += now - last;
    last = now;
    if (now - start - paused >= time_limit) {
      timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  child.wait(ec);
  ::kill(-pid, SIGKILL);  // anything the child left behind in its group
  outcome.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  const int status = child.native_exit_code();
  if (timed_out) {
    outcome.kind = ProcessOutcome::Kind::timed_out;
  } else if (WIFSIGNALED(status)) {
    outcome.kind = ProcessOutcome::Kind::signaled;
    outcome.signal = WTERMSIG(status);
  } else {
    outcome.kind = ProcessOutcome::Kind::exited;
    outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : status;
  }
  return outcome;
}

std::vector<std::string> harness_argv(const CandidateRun& run, const fs::path& result_json,
                                      const fs::path& kept_source) {
  std::vector<std::string> argv = {fs::absolute(run.harness).string(), "verify",
                                   "--lib", fs::absolute(run.library).string(),
                                   "--spec", fs::absolute(run.spec).string(),
                                   "--work", fs::absolute(run.work_dir).string(),
                                   "--out", fs::absolute(result_json).string()};
  if (!run.refs.empty()) argv.insert(argv.end(), {"--refs", fs::absolute(run.refs).string()});
  if (!kept_source.empty()) argv.insert(argv.end(), {"--source", fs::absolute(kept_source).string()});
  if (run.tolerance) {
    std::ostringstream a, r;
    a.precision(17);
    r.precision(17);
    a << run.tolerance->atol;
    r << run.tolerance->rtol;
    argv.insert(argv.end(), {"--atol", a.str(), "--rtol", r.str()});
  }
  if (run.time) argv.push_back("--time");
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
      result.message = "cannot copy " + run.source.string() + " into " + run.work_dir.string() + ": " + ec.message();
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
  const ProcessOutcome outcome =
      run_process(argv, scrubbed_environment(), out_log, err_log, run.time_limit, wait_marker);

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
  result.message = with_log("egg-harness exited with code " + std::to_string(outcome.exit_code) +
                            " without writing " + result_json.string() + " (the candidate called exit?)");
  result.exit_code = outcome.exit_code;
  return finish(result);
}

}  // namespace egg::harness
