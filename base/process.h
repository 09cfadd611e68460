// Running one child process: argv only (never a shell), the environment given (child_env.h), its
// own process group (termination.h), stdout/stderr to files, a time limit that kills the whole
// group, and progress lines while it runs long. egg-gen's ProcessRunner and egg-harness's runs of
// candidates and compute-sanitizer are built on this one function.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace egg {

// How a child process ended.
struct ProcessOutcome {
  enum class Kind { exited, signaled, timed_out, failed_to_start } kind = Kind::failed_to_start;
  int exit_code = -1;  // for exited
  int signal = 0;      // for signaled
  std::chrono::milliseconds elapsed{0};
  std::string error;  // for failed_to_start
};

// The limits and reports of one run; a bare duration converts to a run with that time limit.
struct RunOptions {
  RunOptions() = default;
  template <class Rep, class Period>
  RunOptions(std::chrono::duration<Rep, Period> limit)  // NOLINT: implicit by design
      : time_limit(std::chrono::duration_cast<std::chrono::milliseconds>(limit)) {}
  std::chrono::milliseconds time_limit{std::chrono::minutes(5)};
  // Time during which this file exists (the child waits for the GPU lock, gpu_lock.h) does not
  // count towards the limit.
  std::filesystem::path pause_marker;
  std::filesystem::path cwd;  // empty: inherit
  // Called every `progress_every` while the child runs, with the seconds it has run so far.
  std::function<void(long seconds)> on_progress;
  std::chrono::milliseconds progress_every{std::chrono::seconds(15)};
};

// Runs argv[0] (a path, or a name looked up on PATH) with `env` as its whole environment.
ProcessOutcome run_process(const std::vector<std::string>& argv,
                           const std::map<std::string, std::string>& env,
                           const std::filesystem::path& stdout_file,
                           const std::filesystem::path& stderr_file, const RunOptions& options);

// Finds an executable on PATH; nullopt when absent.
std::optional<std::filesystem::path> find_on_path(const std::string& name);

}  // namespace egg
