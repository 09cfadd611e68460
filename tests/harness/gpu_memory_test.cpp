#include "gpu_memory.h"

#include <atomic>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

using namespace egg::harness;
namespace fs = std::filesystem;

namespace {
fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("egg_gpu_memory_" + std::to_string(::getpid()) + "_" + name);
}
}  // namespace

TEST(GpuMemoryAdmission, AdmitsAtOnceWhenTheMemoryIsFree) {
  const GpuMemoryAdmission a(
      1 << 20, [] { return kGpuMemoryMargin + (2u << 20); }, {}, std::chrono::seconds(5),
      temp("lock1"));
  EXPECT_TRUE(a.admitted());
  EXPECT_LT(a.waited_ms(), 1000);
}

TEST(GpuMemoryAdmission, WaitsWhileAnotherJobHoldsTheMemoryWithThePauseMarkerPresent) {
  const fs::path marker = temp("marker");
  fs::remove(marker);
  std::atomic<std::size_t> free{0};
  std::atomic<bool> marker_seen{false};
  std::thread other([&] {
    for (int i = 0; i < 100 && !fs::exists(marker); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    marker_seen = fs::exists(marker);
    free = kGpuMemoryMargin + (8u << 20);  // the other job finished
  });
  const GpuMemoryAdmission a(
      4 << 20, [&] { return free.load(); }, marker, std::chrono::seconds(10), temp("lock2"));
  other.join();
  EXPECT_TRUE(a.admitted());
  EXPECT_TRUE(marker_seen) << "the runner's time limit pauses only while the marker exists";
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_GT(a.waited_ms(), 0);
}

TEST(GpuMemoryAdmission, GivesUpWithAMessageThatSaysWhatToDo) {
  const GpuMemoryAdmission a(
      std::size_t{8} << 30, [] { return std::size_t{1} << 30; }, {}, std::chrono::milliseconds(300),
      temp("lock3"));
  EXPECT_FALSE(a.admitted());
  EXPECT_NE(a.error().find("run fewer jobs side by side"), std::string::npos) << a.error();
}

TEST(GpuMemoryAdmission, OneHolderAtATime) {
  const fs::path lock = temp("lock4");
  std::atomic<int> inside{0}, most{0};
  auto job = [&] {
    const GpuMemoryAdmission a(
        0, [] { return kGpuMemoryMargin; }, {}, std::chrono::seconds(5), lock);
    const int n = ++inside;
    most = std::max(most.load(), n);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    --inside;
  };
  std::thread t1(job), t2(job), t3(job);
  t1.join();
  t2.join();
  t3.join();
  EXPECT_EQ(most.load(), 1);
}
