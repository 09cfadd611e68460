// run_process (base/process.h) and termination (base/termination.h) with real children.
#include "base/process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "base/quote.h"
#include "base/termination.h"
#include "scratch.h"

namespace egg {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  return line.find(") Z") == std::string::npos;  // a zombie is dead
}

// True once `pid` is dead: a SIGKILLed process on a loaded machine dies when it next runs.
bool dies(pid_t pid) {
  for (int i = 0; i < 300 && alive(pid); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return !alive(pid);
}

pid_t read_pid(const fs::path& file, std::chrono::seconds wait = std::chrono::seconds(20)) {
  const auto until = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream in(file);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

ProcessOutcome sh(const testing::Scratch& dir, const std::string& script, RunOptions o = {},
                  const std::map<std::string, std::string>& env = {{"PATH", "/usr/bin:/bin"}}) {
  return run_process({"/bin/sh", "-c", script}, env, dir.path() / "out", dir.path() / "err", o);
}

TEST(RunProcess, TheEnvironmentIsExactlyTheOneGiven) {
  testing::Scratch dir;
  testing::ScopedEnv secret("EGG_BASE_TEST_SECRET", "leak");
  const auto o = sh(dir, "env", {}, {{"PATH", "/usr/bin:/bin"}, {"ONLY", "this"}});
  ASSERT_EQ(o.kind, ProcessOutcome::Kind::exited) << o.error;
  const std::string out = slurp(dir.path() / "out");
  EXPECT_NE(out.find("ONLY=this"), std::string::npos) << out;
  EXPECT_EQ(out.find("EGG_BASE_TEST_SECRET"), std::string::npos) << out;
}

TEST(RunProcess, ExitCodesSignalsAndMissingPrograms) {
  testing::Scratch dir;
  auto o = sh(dir, "echo err >&2; exit 3");
  EXPECT_EQ(o.kind, ProcessOutcome::Kind::exited);
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_EQ(slurp(dir.path() / "err"), "err\n");
  o = sh(dir, "kill -SEGV $$");
  EXPECT_EQ(o.kind, ProcessOutcome::Kind::signaled);
  EXPECT_EQ(o.signal, SIGSEGV);
  o = run_process({"egg-no-such-tool"}, {}, dir.path() / "out", dir.path() / "err", {});
  EXPECT_EQ(o.kind, ProcessOutcome::Kind::failed_to_start);
  EXPECT_NE(o.error.find("egg-no-such-tool"), std::string::npos);
}

TEST(RunProcess, TheTimeLimitKillsTheWholeGroup) {
  testing::Scratch dir;
  const fs::path pid_file = dir.path() / "grandchild.pid";
  RunOptions o;
  o.time_limit = std::chrono::milliseconds(500);
  const auto start = std::chrono::steady_clock::now();
  const auto r = sh(dir, "sleep 60 & echo $! > " + pid_file.string() + "; wait", o);
  EXPECT_EQ(r.kind, ProcessOutcome::Kind::timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  const pid_t grandchild = read_pid(pid_file);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(dies(grandchild)) << "the child's own child outlived the time limit";
}

TEST(RunProcess, TimeWhileThePauseMarkerExistsDoesNotCount) {
  testing::Scratch dir;
  const fs::path marker = dir.path() / "wait.marker";
  RunOptions o;
  o.time_limit = std::chrono::milliseconds(800);
  o.pause_marker = marker;
  const auto r = sh(dir, "touch " + marker.string() + "; sleep 1.5; rm " + marker.string(), o);
  EXPECT_EQ(r.kind, ProcessOutcome::Kind::exited);
  EXPECT_EQ(r.exit_code, 0);
}

TEST(RunProcess, ProgressIsReportedWhileTheChildRunsLong) {
  testing::Scratch dir;
  std::vector<long> seen;
  RunOptions o;
  o.progress_every = std::chrono::milliseconds(300);
  o.on_progress = [&](long s) { seen.push_back(s); };
  const auto r = sh(dir, "sleep 1.1", o);
  EXPECT_EQ(r.kind, ProcessOutcome::Kind::exited);
  EXPECT_GE(seen.size(), 3u);
  EXPECT_LE(seen.size(), 4u);
}

TEST(RunProcess, TheWorkingFolderIsTheOneGiven) {
  testing::Scratch dir;
  RunOptions o;
  o.cwd = dir.path();
  sh(dir, "pwd", o);
  EXPECT_EQ(slurp(dir.path() / "out"), fs::canonical(dir.path()).string() + "\n");
}

// A process that handles signals as egg-gen does, with a child that would run for a minute.
TEST(Termination, SigtermEndsTheChildGroupsAndRemovesTrackedFolders) {
  testing::Scratch dir;
  const fs::path pid_file = dir.path() / "child.pid";
  const fs::path temp = dir.path() / "egg-work-tracked";
  fs::create_directories(temp / "sub");
  const pid_t tool = ::fork();
  ASSERT_GE(tool, 0);
  if (tool == 0) {
    end_children_on_signals();
    track_temp_dir(temp);
    run_process({"/bin/sh", "-c", "echo $$ > " + pid_file.string() + "; sleep 60 & wait"},
                {{"PATH", "/usr/bin:/bin"}}, dir.path() / "out", dir.path() / "err",
                std::chrono::seconds(120));
    ::_exit(0);
  }
  const pid_t child = read_pid(pid_file);
  ASSERT_GT(child, 0);
  ::kill(tool, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(tool, &status, 0), tool);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "status " << status;
  EXPECT_TRUE(dies(child)) << "the child outlived the SIGTERM of its parent";
  EXPECT_FALSE(fs::exists(temp));
}

// SIGKILL cannot be handled: the child dies with its parent through PR_SET_PDEATHSIG.
TEST(Termination, AChildDiesWithItsKilledParent) {
  testing::Scratch dir;
  const fs::path pid_file = dir.path() / "child.pid";
  const pid_t tool = ::fork();
  ASSERT_GE(tool, 0);
  if (tool == 0) {
    run_process({"/bin/sh", "-c", "echo $$ > " + pid_file.string() + "; exec sleep 60"},
                {{"PATH", "/usr/bin:/bin"}}, dir.path() / "out", dir.path() / "err",
                std::chrono::seconds(120));
    ::_exit(0);
  }
  const pid_t child = read_pid(pid_file);
  ASSERT_GT(child, 0);
  ::kill(tool, SIGKILL);
  ::waitpid(tool, nullptr, 0);
  EXPECT_TRUE(dies(child)) << "the child outlived the SIGKILL of its parent";
}

TEST(Quote, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(quote_command({"a", "b c", "it's", "--x=1", ""}), "a 'b c' 'it'\\''s' --x=1 ''");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
}

TEST(Quote, AnExactNumberReadsBackAsTheSameDouble) {
  for (double v : {1e-7, 2.5e-8, 0.1, 1.0 / 3.0, 2.0, 1e30}) {
    const std::string text = exact_number(v);
    EXPECT_EQ(std::stod(text), v) << text;
  }
  EXPECT_EQ(exact_number(1e-7), "1e-07");
  EXPECT_EQ(exact_number(2), "2");
}

}  // namespace
}  // namespace egg
