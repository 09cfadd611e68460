// The generator's seam for child processes (python, nvcc, nvidia-smi, ncu, egg-harness): tests
// replace ProcessRunner with a fake; the real one runs children through base/process.h, in the
// allowlisted environment of base/child_env.h, with captured output.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/process.h"

namespace egg {

// What to run.
struct ProcessSpec {
  std::filesystem::path exe;
  std::vector<std::string> args;
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  std::filesystem::path cwd;                   // empty: inherit
  std::map<std::string, std::string> env_set;  // added to the allowlisted environment
  // What the child does, for a line every 15 s while it runs long: "tracing op.py" prints
  // "egg: still tracing op.py after 30 s". Empty: no lines.
  std::string activity;
  std::chrono::milliseconds progress_every{std::chrono::seconds(15)};
  // A TMPDIR of its own, removed with the run (nvcc leaves tmpxft_* files when it is killed).
  bool private_tmp = false;
  // CPU-heavy work (nvcc, frontend tracing): the real runner holds one of the machine's CPU slots
  // (base/cpu_slot.h) and the machine-wide CPU lock shared while the child runs, so at most
  // EGG_CPU_SLOTS such children run at once and none during a timed span (base/gpu_lock.h).
  // Never for a child that takes the lock itself (egg-harness, egg_bench).
  bool cpu_work = false;
  // CPU work that can use several threads (nvcc's --split-compile): besides the slot it waits
  // for, the runner takes up to max_threads - 1 more that are free right now (never waiting, so
  // a loaded machine gives it one) and, when it holds more than one, appends `threads_flag`
  // followed by their count to the arguments (e.g. "--split-compile=" gives --split-compile=4).
  int max_threads = 1;
  std::string threads_flag;
};

// How it ended.
enum class ProcessStatus { exited, timed_out, failed_to_start };

// What came back.
struct ProcessResult {
  ProcessStatus status = ProcessStatus::failed_to_start;
  int exit_code = -1;  // 128 + signal for a child killed by a signal
  std::string out;
  std::string err;
  // True when it exited with status 0.
  bool ok() const { return status == ProcessStatus::exited && exit_code == 0; }
};

// The command line as a copy-pasteable repro line (shell-quoted, env_set first).
std::string repro_line(const ProcessSpec& spec);

// Runs processes; the seam that tests replace with a fake.
class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  virtual ProcessResult run(const ProcessSpec& spec) = 0;
};

// The real runner.
class SystemProcessRunner : public ProcessRunner {
 public:
  ProcessResult run(const ProcessSpec& spec) override;
};

}  // namespace egg
