// run_candidate() with fake harnesses (tests/harness/fakes/*.sh): no GPU, no LibTorch.
#include "runner.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include <gtest/gtest.h>

using namespace egg;
using namespace egg::harness;
namespace fs = std::filesystem;

namespace {

class Runner : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / ("egg_runner_" + std::to_string(::getpid()));
  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "cand.cu") << "// the candidate's source\n";
  }
  void TearDown() override { fs::remove_all(dir); }
  CandidateRun run_with(const std::string& fake) {
    CandidateRun r;
    r.harness = fs::path(EGG_HARNESS_FAKES_DIR) / fake;
    r.library = dir / "cand.so";
    r.spec = dir / "spec.json";
    r.work_dir = dir / "work";
    r.source = dir / "cand.cu";
    r.time_limit = std::chrono::seconds(20);
    return r;
  }
};

}  // namespace

TEST_F(Runner, VerifiedResultIsReadAndSourceKept) {
  const VerifyResult r = run_candidate(run_with("ok.sh"));
  EXPECT_EQ(r.status, VerifyStatus::verified) << r.message;
  EXPECT_EQ(r.gpu.name, "Fake GPU");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(fs::exists(dir / "work" / "candidate.cu"));
  EXPECT_NE(r.repro.find("ok.sh verify --lib"), std::string::npos) << r.repro;
  EXPECT_EQ(r.work_dir, fs::absolute(dir / "work").string());
}

TEST_F(Runner, OptionsBecomeArgv) {
  CandidateRun run = run_with("args.sh");
  run.time = true;
  run.strict = true;
  run.tolerance = Tolerance{0.5, 0.25};
  run.time_cutoff_ms = 1.5;
  run.accuracy = egg::AccuracyMode::on;
  run.accuracy_factor = 3;
  const VerifyResult r = run_candidate(run);
  EXPECT_EQ(r.status, VerifyStatus::mismatch);
  EXPECT_EQ(r.exit_code, 10);
  for (const char* s :
       {"--time", "--cutoff-ms 1.5", "--strict", "--atol 0.5", "--rtol 0.25", "--source",
        "candidate.cu", "--spec", "--accuracy on", "--accuracy-factor 3"})
    EXPECT_NE(r.message.find(s), std::string::npos) << s << " not in " << r.message;
  // The defaults (auto, k = 2) are the harness's own: nothing on the command line.
  const VerifyResult plain = run_candidate(run_with("args.sh"));
  EXPECT_EQ(plain.message.find("--accuracy"), std::string::npos) << plain.message;
}

// The harness (and the candidate it loads) sees the allowlist of base/child_env.h: the settings it
// reads pass, nothing else does.
TEST_F(Runner, EnvironmentIsAllowlisted) {
  for (const char* name :
       {"OPENAI_API_KEY", "EGG_LLM_ENDPOINT", "MY_TOKEN", "DATABASE_URL", "DB_PASSWORD",
        "github_token", "ANTHROPIC_BASE_URL", "EGG_HARNESS_TEST_OTHER", "EGG_PASSED_ON"})
    ::setenv(name, "x", 1);
  ::setenv("EGG_GPU_LOCK", "/tmp/egg-runner-test.lock", 1);
  ::setenv("EGG_HARNESS_HOLD", "off", 1);
  ::setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  ::setenv("EGG_PASS_ENV", "EGG_PASSED_ON", 1);
  const VerifyResult r = run_candidate(run_with("env.sh"));
  const std::string names = " " + r.message + " ";
  for (const char* name :
       {"OPENAI_API_KEY", "EGG_LLM_ENDPOINT", "MY_TOKEN", "DATABASE_URL", "DB_PASSWORD",
        "github_token", "ANTHROPIC_BASE_URL", "EGG_HARNESS_TEST_OTHER"})
    EXPECT_EQ(names.find(std::string(" ") + name + " "), std::string::npos)
        << name << " leaked: " << r.message;
  for (const char* name :
       {"PATH", "EGG_GPU_LOCK", "EGG_HARNESS_HOLD", "CUDA_VISIBLE_DEVICES", "EGG_PASSED_ON"})
    EXPECT_NE(names.find(std::string(" ") + name + " "), std::string::npos)
        << name << " missing: " << r.message;
  for (const char* name :
       {"OPENAI_API_KEY", "EGG_LLM_ENDPOINT", "MY_TOKEN", "DATABASE_URL", "DB_PASSWORD",
        "github_token", "ANTHROPIC_BASE_URL", "EGG_HARNESS_TEST_OTHER", "EGG_PASSED_ON",
        "EGG_GPU_LOCK", "EGG_HARNESS_HOLD", "CUDA_VISIBLE_DEVICES", "EGG_PASS_ENV"})
    ::unsetenv(name);
}

TEST_F(Runner, HangIsATimeoutAndTheWholeGroupIsKilled) {
  CandidateRun run = run_with("sleep.sh");
  run.time_limit = std::chrono::milliseconds(1500);
  const auto t0 = std::chrono::steady_clock::now();
  const VerifyResult r = run_candidate(run);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, VerifyStatus::timeout) << r.message;
  EXPECT_LT(s, 10.0);
  std::ifstream pid_file(dir / "work" / "grandchild.pid");
  pid_t pid = 0;
  ASSERT_TRUE(pid_file >> pid);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Killed and reaped by its parent's death (re-parented to init): signal 0 must fail, or it is a
  // zombie.
  const bool alive = ::kill(pid, 0) == 0;
  if (alive) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    EXPECT_NE(line.find(") Z"), std::string::npos) << "grandchild still running: " << line;
  }
}

TEST_F(Runner, TimeWaitingForTheGpuLockIsNotCountedAgainstTheLimit) {
  CandidateRun run = run_with("lockwait.sh");
  run.time_limit = std::chrono::milliseconds(1500);  // shorter than the 2.5 s wait
  const VerifyResult r = run_candidate(run);
  EXPECT_EQ(r.status, VerifyStatus::verified) << r.message;
  EXPECT_FALSE(fs::exists(dir / "work" / "gpu-lock.wait"));
}

TEST_F(Runner, SignalIsACrashWithTheLog) {
  const VerifyResult r = run_candidate(run_with("segv.sh"));
  EXPECT_EQ(r.status, VerifyStatus::crash);
  EXPECT_NE(r.message.find("SIGSEGV"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("about to crash"), std::string::npos) << r.message;
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV);
}

TEST_F(Runner, ExitWithoutResultIsACrash) {
  const VerifyResult r = run_candidate(run_with("noresult.sh"));
  EXPECT_EQ(r.status, VerifyStatus::crash);
  EXPECT_EQ(r.exit_code, 3);
}

TEST_F(Runner, MalformedResultIsAHarnessError) {
  const VerifyResult r = run_candidate(run_with("garbage.sh"));
  EXPECT_EQ(r.status, VerifyStatus::harness_error);
  EXPECT_NE(r.message.find("malformed"), std::string::npos);
}

TEST_F(Runner, MissingHarnessIsAHarnessError) {
  const VerifyResult r = run_candidate(run_with("does-not-exist.sh"));
  EXPECT_TRUE(r.status == VerifyStatus::harness_error || r.status == VerifyStatus::crash)
      << r.message;
  EXPECT_FALSE(is_candidate_failure(r.status) && r.status != VerifyStatus::crash);
}
