// The real process runner: exit codes, signals, time limits, environment scrubbing, the quiet lock.
#include "util/process.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <thread>

#include "base/cpu_slot.h"
#include "base/gpu_lock.h"
#include "util/files.h"

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

// Every child the generator starts gets the allowlist of base/child_env.h plus what it sets.
TEST(Process, ChildrenSeeTheAllowlistOnly) {
  setenv("EGG_LLM_API_KEY", "sk-should-not-leak", 1);
  setenv("github_token", "ghp-should-not-leak", 1);
  setenv("DATABASE_URL", "postgres://u:should-not-leak@db", 1);
  SystemProcessRunner runner;
  auto p = shell("env");
  p.env_set["EGG_VISIBLE"] = "yes";
  auto r = runner.run(p);
  EXPECT_EQ(r.out.find("should-not-leak"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("EGG_VISIBLE=yes"), std::string::npos);
  EXPECT_NE(r.out.find("PATH="), std::string::npos);
  unsetenv("EGG_LLM_API_KEY");
  unsetenv("github_token");
  unsetenv("DATABASE_URL");
}

TEST(Process, APrivateTmpIsTheChildsTmpdirAndGoesWithTheRun) {
  SystemProcessRunner runner;
  auto p = shell("echo $TMPDIR; touch $TMPDIR/tmpxft_left_behind");
  p.private_tmp = true;
  auto r = runner.run(p);
  ASSERT_TRUE(r.ok()) << r.err;
  const std::filesystem::path tmp = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(tmp, std::filesystem::temp_directory_path());
  EXPECT_NE(tmp.string().find("egg-proc-"), std::string::npos) << tmp;
  EXPECT_FALSE(std::filesystem::exists(tmp));
}

TEST(Process, ALongRunPrintsWhatItIsStillDoing) {
  SystemProcessRunner runner;
  auto p = shell("sleep 0.7");
  p.activity = "tracing op.py";
  p.progress_every = std::chrono::milliseconds(300);
  ::testing::internal::CaptureStderr();
  auto r = runner.run(p);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(r.ok());
  EXPECT_NE(err.find("egg: still tracing op.py after 0 s"), std::string::npos) << err;
  auto q = shell("true");
  ::testing::internal::CaptureStderr();
  runner.run(q);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(Process, ReproLineQuotes) {
  ProcessSpec p;
  p.exe = "/usr/bin/nvcc";
  p.args = {"-c", "a b.cu", "it's"};
  EXPECT_EQ(repro_line(p), "/usr/bin/nvcc -c 'a b.cu' 'it'\\''s'");
}

// Runs `true` through the real process runner as cpu_work, then sets `done`.
void run_cpu_work_child(std::atomic<bool>& done) {
  SystemProcessRunner runner;
  ProcessSpec p;
  p.exe = "/bin/sh";
  p.args = {"-c", "true"};
  p.cpu_work = true;
  EXPECT_TRUE(runner.run(p).ok());
  done = true;
}

// The real process runner holds the CPU lock shared around a child marked cpu_work: such a child
// does not start while a timed span that includes the host runs (a baseline holds the CPU lock
// exclusively), and goes on beside egg-harness's device-timed trials (the GPU lock alone).
TEST(GpuLock, CpuWorkChildrenWaitForAHostTimedSpanOnly) {
  TempDir dir(std::filesystem::temp_directory_path(), "egg-lock-test");
  const auto path = dir.path() / "gpu.lock";
  setenv("EGG_GPU_LOCK", path.c_str(), 1);
  {
    GpuTimingLock device_timed(path);
    ASSERT_TRUE(device_timed.held()) << device_timed.error();
    std::atomic<bool> done{false};
    std::thread child(run_cpu_work_child, std::ref(done));
    child.join();
    EXPECT_TRUE(done) << "a cpu_work child waited for a device-timed span";
  }
  std::atomic<bool> done{false};
  std::thread child;
  {
    GpuTimingLock host_timed(cpu_lock_path(path));
    ASSERT_TRUE(host_timed.held()) << host_timed.error();
    child = std::thread(run_cpu_work_child, std::ref(done));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(done) << "a cpu_work child ran during a timed span that includes the host";
  }
  child.join();
  unsetenv("EGG_GPU_LOCK");
  EXPECT_TRUE(done);
}

// A cpu_work child takes one of the machine's CPU slots: with EGG_CPU_SLOTS=1 and the slot held
// elsewhere (another egg-gen's nvcc), it starts only once the slot is free.
TEST(CpuSlot, CpuWorkChildrenTakeAMachineSlot) {
  TempDir dir(std::filesystem::temp_directory_path(), "egg-slot-test");
  const auto path = dir.path() / "gpu.lock";
  setenv("EGG_GPU_LOCK", path.c_str(), 1);
  setenv("EGG_CPU_SLOTS", "1", 1);
  std::atomic<bool> done{false};
  std::thread child;
  {
    CpuSlot other(cpu_lock_path(path), 1);
    ASSERT_TRUE(other.held()) << other.error();
    child = std::thread(run_cpu_work_child, std::ref(done));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(done) << "a cpu_work child ran with the machine's one CPU slot taken";
  }
  child.join();
  unsetenv("EGG_CPU_SLOTS");
  unsetenv("EGG_GPU_LOCK");
  EXPECT_TRUE(done);
}

// A cpu_work child that can use several threads (nvcc's --split-compile) gets the free slots, up
// to its max_threads, and is told how many; a single slot adds no flag.
TEST(CpuSlot, AThreadedChildIsGivenTheFreeSlots) {
  TempDir dir(std::filesystem::temp_directory_path(), "egg-slot-test");
  const auto path = dir.path() / "gpu.lock";
  setenv("EGG_GPU_LOCK", path.c_str(), 1);
  setenv("EGG_CPU_SLOTS", "4", 1);
  SystemProcessRunner runner;
  // sh -c 'echo "$@"' sh [--threads=N]: prints the arguments after $0, the flag if any.
  auto threads = [&](int max_threads) {
    ProcessSpec p;
    p.exe = "/bin/sh";
    p.args = {"-c", "echo \"$@\"", "sh"};
    p.cpu_work = true;
    p.max_threads = max_threads;
    p.threads_flag = "--threads=";
    const ProcessResult r = runner.run(p);
    EXPECT_TRUE(r.ok()) << r.err;
    return r.out;
  };
  EXPECT_EQ(threads(8), "--threads=4\n");
  EXPECT_EQ(threads(3), "--threads=3\n");
  EXPECT_EQ(threads(1), "\n");
  {
    CpuSlot other(cpu_lock_path(path), 4), another(cpu_lock_path(path), 4);
    ASSERT_TRUE(other.held() && another.held());
    EXPECT_EQ(threads(8), "--threads=2\n");
    CpuSlot third(cpu_lock_path(path), 4);
    EXPECT_EQ(threads(8), "\n");  // one slot left: one thread, no flag
  }
  unsetenv("EGG_CPU_SLOTS");
  unsetenv("EGG_GPU_LOCK");
}

}  // namespace
}  // namespace egg
