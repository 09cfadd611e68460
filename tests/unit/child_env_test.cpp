// Every kind of child the generator starts (the frontend running op.py, the PyTorch baselines,
// nvcc, egg-harness) gets the allowlisted environment of base/child_env.h: each call site runs a
// fake program through the real SystemProcessRunner, and the fake records what it saw.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "frontend/frontend.h"
#include "toolchain/nvcc.h"
#include "util/error.h"
#include "util/files.h"
#include "verify/harness_verifier.h"
#include "verify/references.h"

namespace egg {
namespace {

namespace fs = std::filesystem;

class ChildEnvironments : public ::testing::Test {
 protected:
  TempDir dir{fs::temp_directory_path(), "egg-child-env-test"};
  SystemProcessRunner runner;
  const char* kLeaks[5] = {"github_token", "DATABASE_URL", "EGG_LLM_API_KEY", "AWS_SESSION_TOKEN",
                           "SOME_RANDOM_SETTING"};
  void SetUp() override {
    for (const char* name : kLeaks) setenv(name, "leaked-value", 1);
    setenv("EGG_GPU_LOCK", "/tmp/egg-child-env-test.lock", 1);
    setenv("EGG_PASS_ENV", "EGG_TEST_PASSED", 1);
    setenv("EGG_TEST_PASSED", "1", 1);
  }
  void TearDown() override {
    for (const char* name : kLeaks) unsetenv(name);
    for (const char* name : {"EGG_GPU_LOCK", "EGG_PASS_ENV", "EGG_TEST_PASSED"}) unsetenv(name);
  }
  // A program that writes its environment to <dir>/<name>.env and exits with `code`.
  fs::path fake(const std::string& name, int code = 0, const std::string& extra = "") {
    const fs::path exe = dir.path() / name;
    std::ofstream(exe) << "#!/bin/sh\nenv > '" << (dir.path() / (name + ".env")).string() << "'\n"
                       << extra << "exit " << code << "\n";
    ::chmod(exe.c_str(), 0755);
    return exe;
  }
  void expect_allowlisted(const std::string& name) {
    const auto env = read_file(dir.path() / (name + ".env"));
    ASSERT_TRUE(env) << name << " did not run";
    EXPECT_EQ(env->find("leaked-value"), std::string::npos) << name << " saw:\n" << *env;
    EXPECT_NE(env->find("\nPATH="), std::string::npos) << name;
    EXPECT_NE(env->find("EGG_GPU_LOCK=/tmp/egg-child-env-test.lock"), std::string::npos) << name;
    EXPECT_NE(env->find("EGG_TEST_PASSED=1"), std::string::npos) << name;
  }
};

TEST_F(ChildEnvironments, TheFrontendRunningOpPy) {
  frontend::FrontendConfig config;
  config.python = fake("python", 3);
  config.data_dir = "/data";
  // (a frontend that ends without reporting is op.py's fault: a user error, issue 12)
  EXPECT_THROW(frontend::trace(runner, config, dir.path() / "op.py", dir.path() / "frontend"),
               UserError);
  expect_allowlisted("python");
  const auto env = read_file(dir.path() / "python.env").value_or("");
  EXPECT_NE(env.find("PYTHONPATH=/data/python"), std::string::npos) << env;
}

TEST_F(ChildEnvironments, TheBaselines) {
  const verify::Baseline b =
      verify::time_baseline(runner, fake("python", 1), "/data", dir.path() / "op.py", dir.path());
  EXPECT_FALSE(b.error.empty());
  expect_allowlisted("python");
}

TEST_F(ChildEnvironments, NvccInAPrivateTmpdir) {
  toolchain::Nvcc nvcc(
      runner, fake("nvcc", 1, "echo $TMPDIR > '" + (dir.path() / "tmpdir").string() + "'\n"));
  nvcc.compile_object(dir.path() / "k.cu", dir.path(), {"sm_90"}, dir.path() / "k.o");
  expect_allowlisted("nvcc");
  const std::string tmp = read_file(dir.path() / "tmpdir").value_or("");
  EXPECT_NE(tmp.find("egg-proc-"), std::string::npos) << tmp;
}

TEST_F(ChildEnvironments, TheCandidatesNvccAndEggHarness) {
  verify::GpuInfo gpu{true, "Fake GPU", "sm_90"};
  verify::HarnessVerifier verifier(runner, fake("nvcc"), fake("egg-harness", 3), gpu,
                                   std::chrono::seconds(20));
  std::ofstream(dir.path() / "k.cu") << "// candidate\n";
  struct NoServer : verify::References {
    fs::path endpoint() override { return dir_ / "refs.sock"; }
    nlohmann::json stats() const override { return {}; }
    fs::path dir_;
  } refs;
  refs.dir_ = dir.path();
  const verify::GpuOutcome out =
      verifier.run(dir.path() / "k.cu", dir.path(), dir.path() / "spec.json", refs,
                   dir.path() / "work", verify::RunOptions{});
  EXPECT_FALSE(out.ok());
  expect_allowlisted("nvcc");
  expect_allowlisted("egg-harness");
}

}  // namespace
}  // namespace egg
