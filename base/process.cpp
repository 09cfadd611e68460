#include "base/process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <cstdlib>
#include <system_error>
#include <thread>

#include "base/termination.h"

namespace egg {
namespace fs = std::filesystem;
namespace bp = boost::process;

std::optional<fs::path> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr || name.empty()) return std::nullopt;
  const std::string all = path;
  for (size_t start = 0, end; start <= all.size(); start = end + 1) {
    end = all.find(':', start);
    if (end == std::string::npos) end = all.size();
    if (end == start) continue;
    const fs::path candidate = fs::path(all.substr(start, end - start)) / name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return std::nullopt;
}

ProcessOutcome run_process(const std::vector<std::string>& argv,
                           const std::map<std::string, std::string>& env,
                           const fs::path& stdout_file, const fs::path& stderr_file,
                           const RunOptions& options) {
  ProcessOutcome outcome;
  if (argv.empty()) {
    outcome.error = "empty command";
    return outcome;
  }
  wait_if_stopping();
  std::string exe = argv[0];
  if (exe.find('/') == std::string::npos) {
    const auto found = find_on_path(exe);
    if (!found) {
      outcome.error = "'" + exe + "' not found on PATH";
      return outcome;
    }
    exe = found->string();
  }
  bp::environment child_env;
  for (const auto& [k, v] : env) child_env[k] = v;
  const std::vector<std::string> args(argv.begin() + 1, argv.end());
  const std::string cwd = options.cwd.empty() ? fs::current_path().string() : options.cwd.string();
  const auto start = std::chrono::steady_clock::now();
  const pid_t self = ::getpid();
  std::error_code ec;
  bp::child child(
      bp::exe = exe, bp::args = args, child_env,
      bp::std_in<bp::null, bp::std_out> stdout_file.string(), bp::std_err > stderr_file.string(),
      bp::start_dir(cwd),
      bp::extend::on_exec_setup = [self](auto&) { prepare_child_after_fork(self); }, ec);
  if (ec) {
    outcome.error = "cannot start " + exe + ": " + ec.message();
    return outcome;
  }
  const pid_t pid = child.id();
  track_child_group(pid);
  if (stopping_on_signal()) ::kill(-pid, SIGKILL);  // started while the signal was handled
  bool timed_out = false;
  // Polling, not child.wait_for: wait_for is unreliable across the Boost versions we support.
  std::chrono::steady_clock::duration paused{0};
  auto last = start;
  auto next_progress = start + options.progress_every;
  auto pause = std::chrono::milliseconds(1);
  while (child.running(ec)) {
    const auto now = std::chrono::steady_clock::now();
    std::error_code marker_ec;
    if (!options.pause_marker.empty() && fs::exists(options.pause_marker, marker_ec))
      paused += now - last;
    last = now;
    if (now - start - paused >= options.time_limit) {
      timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      break;
    }
    if (options.on_progress && now >= next_progress) {
      options.on_progress(std::chrono::duration_cast<std::chrono::seconds>(now - start).count());
      next_progress += options.progress_every;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
  child.wait(ec);
  ::kill(-pid, SIGKILL);  // anything the child left behind in its group
  untrack_child_group(pid);
  wait_if_stopping();  // killed by the signal handler: the process ends with the signal
  outcome.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
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

}  // namespace egg
