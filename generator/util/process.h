// Running child processes: argv only (never a shell), a time limit, captured output.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace egg {

// What to run.
struct ProcessSpec {
  std::filesystem::path exe;
  std::vector<std::string> args;
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  std::filesystem::path cwd;                   // empty: inherit
  std::map<std::string, std::string> env_set;  // added or replaced
  std::vector<std::string> env_unset;          // removed
  bool scrub_secrets = false;                  // drop *KEY*, *TOKEN*, *SECRET*, ... variables
};

// How it ended.
enum class ProcessStatus { exited, timed_out, failed_to_start };

// What came back.
struct ProcessResult {
  ProcessStatus status = ProcessStatus::failed_to_start;
  int exit_code = -1;
  std::string out;
  std::string err;
  // True when it exited with status 0.
  bool ok() const { return status == ProcessStatus::exited && exit_code == 0; }
};

// The command line as a copy-pasteable repro line (shell-quoted).
std::string repro_line(const ProcessSpec& spec);

// True for environment variable names that may carry credentials.
bool is_secret_env_name(const std::string& name);

// Runs processes; the seam that tests replace with a fake.
class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  virtual ProcessResult run(const ProcessSpec& spec) = 0;
};

// The real runner (Boost.Process).
class SystemProcessRunner : public ProcessRunner {
 public:
  ProcessResult run(const ProcessSpec& spec) override;
};

// Finds an executable on PATH; nullopt when absent.
std::optional<std::filesystem::path> find_on_path(const std::string& name);

}  // namespace egg
