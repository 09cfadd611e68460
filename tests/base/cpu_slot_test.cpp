#include "base/cpu_slot.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include <unistd.h>

#include "scratch.h"

namespace egg {
namespace {

using testing::ScopedEnv;

TEST(CpuSlot, CountFromEnvironmentOrTheCores) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  {
    ScopedEnv env("EGG_CPU_SLOTS", "3");
    EXPECT_EQ(cpu_slot_count(), 3);
  }
  for (const char* bad : {"0", "-2", "4x", "many", ""}) {
    ScopedEnv env("EGG_CPU_SLOTS", bad);
    EXPECT_EQ(cpu_slot_count(), cores) << bad;
  }
  ScopedEnv unset("EGG_CPU_SLOTS", nullptr);
  EXPECT_EQ(cpu_slot_count(), cores);
}

// Two slots: two holders take one each, a third waits until one is let go and then takes that one.
TEST(CpuSlot, AtMostNHoldersAndAWaiterTakesTheFirstFreedSlot) {
  testing::Scratch dir;
  const auto lock = dir.path() / "gpu.lock.cpu";
  std::optional<CpuSlot> a(std::in_place, lock, 2);
  std::optional<CpuSlot> b(std::in_place, lock, 2);
  ASSERT_TRUE(a->held()) << a->error();
  ASSERT_TRUE(b->held()) << b->error();
  EXPECT_NE(a->slot(), b->slot());
  std::atomic<int> third_slot{-1};
  std::thread third([&] {
    CpuSlot c(lock, 2);
    EXPECT_TRUE(c.held()) << c.error();
    third_slot = c.slot();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(third_slot, -1) << "a third holder ran beside two others with two slots";
  // The waiter waits on the slot its process id picks; let that one go.
  (a->slot() == static_cast<int>(getpid() % 2) ? a : b).reset();
  third.join();
  EXPECT_EQ(third_slot, static_cast<int>(getpid() % 2));
  EXPECT_TRUE(std::filesystem::exists(cpu_slot_file(lock, 0)));
  EXPECT_TRUE(std::filesystem::exists(cpu_slot_file(lock, 1)));
}

// A free slot is found wherever it is: with slot getpid() % 3 taken, the next holder takes
// another without waiting.
TEST(CpuSlot, AFreeSlotIsTakenWithoutWaiting) {
  testing::Scratch dir;
  const auto lock = dir.path() / "gpu.lock.cpu";
  CpuSlot a(lock, 3), b(lock, 3), c(lock, 3);
  EXPECT_TRUE(a.held() && b.held() && c.held());
  EXPECT_EQ(a.slot() + b.slot() + c.slot(), 0 + 1 + 2);
  EXPECT_LT(c.waited_ms(), 250);
}

// Without waiting, a slot is taken only when one is free now.
TEST(CpuSlot, OneThatDoesNotWaitTakesOnlyAFreeSlot) {
  testing::Scratch dir;
  const auto lock = dir.path() / "gpu.lock.cpu";
  CpuSlot a(lock, 2);
  CpuSlot b(lock, 2, false);
  EXPECT_TRUE(a.held() && b.held());
  const auto t0 = std::chrono::steady_clock::now();
  CpuSlot c(lock, 2, false);
  EXPECT_FALSE(c.held());
  EXPECT_TRUE(c.error().empty()) << c.error();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(250));
}

TEST(CpuSlot, DisabledOrUnopenableIsNotHeldAndSaysWhy) {
  CpuSlot off(std::nullopt, 4);
  EXPECT_FALSE(off.held());
  EXPECT_TRUE(off.error().empty());
  CpuSlot bad(std::filesystem::path("/nonexistent-dir-egg/x/gpu.lock.cpu"), 4);
  EXPECT_FALSE(bad.held());
  EXPECT_NE(bad.error().find("EGG_GPU_LOCK"), std::string::npos) << bad.error();
}

}  // namespace
}  // namespace egg
