// The real process runner: exit codes, signals, time limits, environment scrubbing.
#include "util/process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

namespace egg {
namespace {

ProcessSpec shell(const std::string& script) {
  ProcessSpec p;
  p.exe = "/bin/sh";
  p.args = {"-c", script};
  p.timeout = std::chrono::seconds(20);
  return p;
}

TEST(Process, CapturesOutputAndExitCode) {
  SystemProcessRunner runner;
  auto r = runner.run(shell("echo out; echo err >&2; exit 3"));
  EXPECT_EQ(r.status, ProcessStatus::exited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(Process, TimeLimitKillsAHang) {
  SystemProcessRunner runner;
  auto p = shell("sleep 30");
  p.timeout = std::chrono::milliseconds(200);
  auto start = std::chrono::steady_clock::now();
  auto r = runner.run(p);
  EXPECT_EQ(r.status, ProcessStatus::timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(Process, SignalIsReportedAs128PlusSignal) {
  SystemProcessRunner runner;
  auto r = runner.run(shell("kill -SEGV $$"));
  EXPECT_EQ(r.exit_code, 128 + 11);
}

TEST(Process, MissingExecutableFailsToStart) {
  SystemProcessRunner runner;
  ProcessSpec p;
  p.exe = "/nonexistent/egg-tool";
  EXPECT_EQ(runner.run(p).status, ProcessStatus::failed_to_start);
}

TEST(Process, SecretsAreScrubbedWhenAsked) {
  setenv("EGG_LLM_API_KEY", "sk-should-not-leak", 1);
  setenv("MY_TOKEN", "t0k3n", 1);
  SystemProcessRunner runner;
  auto p = shell("env");
  p.scrub_secrets = true;
  p.env_set["EGG_VISIBLE"] = "yes";
  auto r = runner.run(p);
  EXPECT_EQ(r.out.find("sk-should-not-leak"), std::string::npos);
  EXPECT_EQ(r.out.find("t0k3n"), std::string::npos);
  EXPECT_NE(r.out.find("EGG_VISIBLE=yes"), std::string::npos);
  unsetenv("EGG_LLM_API_KEY");
  unsetenv("MY_TOKEN");
}

TEST(Process, ReproLineQuotes) {
  ProcessSpec p;
  p.exe = "/usr/bin/nvcc";
  p.args = {"-c", "a b.cu", "it's"};
  EXPECT_EQ(repro_line(p), "/usr/bin/nvcc -c 'a b.cu' 'it'\\''s'");
}

}  // namespace
}  // namespace egg
