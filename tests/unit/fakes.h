// Fakes for the generator's side effects: a scripted ProcessRunner (python, nvcc, nvidia-smi).
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "util/process.h"

namespace egg::testing {

// Answers each run with a handler and records every spec it was given.
class FakeProcessRunner : public ProcessRunner {
 public:
  using Handler = std::function<ProcessResult(const ProcessSpec&)>;
  explicit FakeProcessRunner(Handler handler) : handler_(std::move(handler)) {}

  // Safe from several threads (parallel generations); the handler runs concurrently.
  ProcessResult run(const ProcessSpec& spec) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      calls.push_back(spec);
    }
    return handler_(spec);
  }

  // Every run, in order.
  std::vector<ProcessSpec> calls;

  // How many runs used an executable whose file name is `name`.
  int count(const std::string& name) const {
    int n = 0;
    for (const auto& c : calls) n += c.exe.filename() == name;
    return n;
  }

 private:
  Handler handler_;
  std::mutex mutex_;
};

// A result that exited with `code` and printed `out`.
inline ProcessResult exited(int code, std::string out = {}, std::string err = {}) {
  ProcessResult r;
  r.status = ProcessStatus::exited;
  r.exit_code = code;
  r.out = std::move(out);
  r.err = std::move(err);
  return r;
}

}  // namespace egg::testing
