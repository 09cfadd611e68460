#include "base/gpu_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "scratch.h"

namespace egg {
namespace {

using testing::ScopedEnv;

TEST(GpuLock, PathFromEnvironmentOrPerUserDefault) {
  {
    ScopedEnv env("EGG_GPU_LOCK", "/some/where/gpu.lock");
    EXPECT_EQ(gpu_lock_path(), std::filesystem::path("/some/where/gpu.lock"));
  }
  {
    ScopedEnv env("EGG_GPU_LOCK", "off");
    EXPECT_EQ(gpu_lock_path(), std::nullopt);
  }
  ScopedEnv env("EGG_GPU_LOCK", nullptr);
  auto p = gpu_lock_path();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->filename().string(), "egg-gpu-" + std::to_string(getuid()) + ".lock");
}

TEST(GpuLock, SecondHolderWaitsForTheFirst) {
  testing::Scratch dir;
  const auto path = dir.path() / "gpu.lock";
  std::atomic<bool> second_holds{false};
  std::thread second;
  {
    GpuTimingLock first(path);
    ASSERT_TRUE(first.held()) << first.error();
    second = std::thread([&] {
      // A second open file description: flock(2) makes it wait, with its marker present.
      GpuTimingLock lock(path, dir.path() / "wait.marker");
      second_holds = lock.held();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(second_holds) << "the second holder took the lock while the first held it";
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "wait.marker"));
  }
  second.join();
  EXPECT_TRUE(second_holds);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "wait.marker"));
}

// CPU work shares the CPU lock; a timed span that includes the host (a baseline: the CPU lock
// exclusively) waits for the running CPU work and goes before CPU work that comes while it waits;
// CPU work waits for it.
TEST(GpuLock, CpuWorkSharesAndTimedSpansGoFirst) {
  testing::Scratch dir;
  const auto path = dir.path() / "gpu.lock";
  std::mutex m;
  std::vector<std::string> order;
  auto log = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(m);
    order.push_back(what);
  };
  std::thread timed, late;
  {
    CpuWorkLock first(path);
    ASSERT_TRUE(first.held()) << first.error();
    {
      CpuWorkLock second(path);  // shared: no wait
      EXPECT_TRUE(second.held());
      log("two cpu holders");
    }
    timed = std::thread([&] {
      GpuTimingLock lock(cpu_lock_path(path));
      log("timed");
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // it waits, holding the gate
    late = std::thread([&] {
      CpuWorkLock lock(path);
      log("late cpu work");
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    log("first cpu work done");
  }
  timed.join();
  late.join();
  EXPECT_EQ(order, (std::vector<std::string>{"two cpu holders", "first cpu work done", "timed",
                                             "late cpu work"}));
  EXPECT_TRUE(std::filesystem::exists(gpu_lock_gate(*cpu_lock_path(path))));
}

TEST(GpuLock, DisabledOrUnopenableLockIsNotHeldAndSaysWhy) {
  GpuTimingLock off(std::nullopt);
  EXPECT_FALSE(off.held());
  EXPECT_TRUE(off.error().empty());
  GpuTimingLock bad(std::filesystem::path("/nonexistent-dir-egg/x/gpu.lock"));
  EXPECT_FALSE(bad.held());
  EXPECT_NE(bad.error().find("EGG_GPU_LOCK"), std::string::npos) << bad.error();
}

}  // namespace
}  // namespace egg
