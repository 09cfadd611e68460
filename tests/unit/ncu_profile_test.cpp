// The ncu pass (HarnessVerifier::profile) must not hold the GPU lock around ncu: the harness under
// ncu takes the lock itself, and the reference server computes a set under it, so a parent
// holding it exclusively made both wait for ncu's five-minute limit (seen on the H200: every
// quickstart build stalled there). A fake ncu on PATH tries to take the lock exclusively without
// waiting and records whether it could, and the argv it was given.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "util/files.h"
#include "verify/harness_verifier.h"
#include "verify/references.h"

namespace egg {
namespace {

namespace fs = std::filesystem;

class NcuProfile : public ::testing::Test {
 protected:
  TempDir dir{fs::temp_directory_path(), "egg-ncu-profile-test"};
  SystemProcessRunner runner;
  std::string old_path = getenv("PATH") ? getenv("PATH") : "";
  void SetUp() override {
    setenv("EGG_GPU_LOCK", (dir.path() / "gpu.lock").c_str(), 1);
    setenv("PATH", (dir.path().string() + ":" + old_path).c_str(), 1);
    unsetenv("EGG_NCU");
  }
  void TearDown() override {
    setenv("PATH", old_path.c_str(), 1);
    unsetenv("EGG_GPU_LOCK");
  }
  // <dir>/ncu: records its arguments, then whether the lock was free (flock -n), and prints no
  // metrics.
  void fake_ncu() {
    const fs::path exe = dir.path() / "ncu";
    std::ofstream(exe) << "#!/bin/sh\n"
                       << "echo \"$@\" > '" << (dir.path() / "ncu.args").string() << "'\n"
                       << "if flock -n -x \"$EGG_GPU_LOCK\" true; then r=free; else r=held; fi\n"
                       << "echo $r > '" << (dir.path() / "ncu.lock").string() << "'\n";
    ::chmod(exe.c_str(), 0755);
  }
};

TEST_F(NcuProfile, TheHarnessUnderNcuHoldsTheLockNotTheParent) {
  fake_ncu();
  verify::GpuInfo gpu{true, "Fake GPU", "sm_90"};
  verify::HarnessVerifier verifier(runner, "/bin/false", dir.path() / "egg-harness", gpu,
                                   std::chrono::seconds(20));
  struct NoServer : verify::References {
    fs::path endpoint() override { return "/tmp/refs.sock"; }
    nlohmann::json stats() const override { return {}; }
  } refs;
  const nlohmann::json metrics = verifier.profile(dir.path(), dir.path() / "spec.json", refs);
  EXPECT_TRUE(metrics.contains("unavailable")) << metrics.dump();  // the fake printed none
  const auto lock = read_file(dir.path() / "ncu.lock");
  ASSERT_TRUE(lock) << "the fake ncu did not run: " << metrics.dump();
  EXPECT_EQ(*lock, "free\n") << "egg-gen held the GPU lock while ncu ran";
  const std::string args = read_file(dir.path() / "ncu.args").value_or("");
  EXPECT_NE(args.find(" verify "), std::string::npos) << args;
  EXPECT_NE(args.find("--exclusive-calls"), std::string::npos) << args;
}

}  // namespace
}  // namespace egg
