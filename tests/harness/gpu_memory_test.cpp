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

// The reference server's next set beside a candidate that keeps memory after its call: fine when
// the memory is free, not the candidate's business when other jobs hold it, and refused (after a
// bounded wait) when the candidate itself holds it: the server would wait for this very process.
TEST(ServerRoom, RefusedOnlyWhereTheCandidateKeepsWhatTheServerNeeds) {
  constexpr std::size_t GB = std::size_t{1} << 30;
  const auto never = std::chrono::milliseconds(300);
  EXPECT_FALSE(server_room_blocked(
      10 * GB, [] { return 40 * GB; }, 14 * GB, never));
  // 30 GB free, 34 needed, the candidate kept nothing: other jobs' memory, the server waits.
  EXPECT_FALSE(server_room_blocked(
      34 * GB, [] { return 30 * GB; }, 0, never));
  // The candidate kept 14 GiB after its first call, and nothing frees it.
  auto why = server_room_blocked(
      34 * GB, [] { return 30 * GB; }, 14 * GB, never);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("the candidate keeps 15.0"), std::string::npos) << *why;
  EXPECT_NE(why->find("too large to verify"), std::string::npos) << *why;
  // Another job frees memory within the wait: the server gets its room.
  std::atomic<std::size_t> free{30 * GB};
  std::thread other([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    free = 40 * GB;
  });
  EXPECT_FALSE(server_room_blocked(
      34 * GB, [&] { return free.load(); }, 14 * GB, std::chrono::seconds(5)));
  other.join();
  // The wait pauses the run's time limit: the marker exists while it waits, and not after.
  const fs::path marker = temp("room_marker");
  fs::remove(marker);
  std::atomic<bool> seen{false};
  std::thread watch([&] {
    for (int k = 0; k < 100 && !seen; ++k) {
      seen = fs::exists(marker);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  EXPECT_TRUE(server_room_blocked(
                  34 * GB, [] { return 30 * GB; }, 14 * GB, never, marker)
                  .has_value());
  watch.join();
  EXPECT_TRUE(seen);
  EXPECT_FALSE(fs::exists(marker));
  // Free memory that cannot be read (0) is no reason to refuse.
  EXPECT_FALSE(server_room_blocked(
      34 * GB, [] { return std::size_t{0}; }, 14 * GB, never));
}
