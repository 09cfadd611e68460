// Progress lines: throttled by a fake clock, worded for the build log.
#include "pipeline/progress.h"

#include <gtest/gtest.h>

#include <vector>

namespace egg::pipeline {
namespace {

using namespace std::chrono_literals;

struct FakeClock {
  std::chrono::steady_clock::time_point t{};
  Progress::Now now() {
    return [this] { return t; };
  }
};

TEST(Progress, PrintsAtMostOneLinePerIntervalAndNothingBeforeTheFirstInterval) {
  FakeClock clock;
  std::vector<std::string> lines;
  Progress p("gelu", 5s, clock.now(), [&](const std::string& l) { lines.push_back(l); });
  p.update({"stage1", 0, 4, std::nullopt});
  clock.t += 2s;
  p.update({"stage1", 1, 4, std::nullopt});
  EXPECT_TRUE(lines.empty());  // a quick generation says nothing
  clock.t += 4s;
  p.update({"stage1", 2, 4, 0.25});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "gelu: stage1, candidate 2/4, best so far 0.25 ms (6 s)");
  clock.t += 4s;
  p.update({"stage1", 3, 4, 0.2});
  EXPECT_EQ(lines.size(), 1u);  // 4 s after the last line
  clock.t += 1s;
  p.update({"stage2", 1, 8, 0.2});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "gelu: stage2, candidate 1/8, best so far 0.2 ms (11 s)");
}

TEST(Progress, NamesTheBuildStepAndAStageWithoutAVerifiedCandidate) {
  FakeClock clock;
  std::vector<std::string> lines;
  Progress p("k", 0s, clock.now(), [&](const std::string& l) { lines.push_back(l); });
  p.update({"stage1", 0, 3, std::nullopt});
  p.update({"stage1", 1, 3, std::nullopt});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "k: stage1, building 3 candidates, none verified yet (0 s)");
  EXPECT_EQ(lines[1], "k: stage1, candidate 1/3, none verified yet (0 s)");
  p.update({"stage2", 2, 3, std::nullopt, false});
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "k: stage2, candidate 2/3, compile checks only (no GPU) (0 s)");
}

TEST(Progress, FinishConcludesWithTheSpeedupOnlyAfterProgressWasShown) {
  FakeClock clock;
  std::vector<std::string> lines;
  Progress quiet("k", 5s, clock.now(), [&](const std::string& l) { lines.push_back(l); });
  quiet.finish(0.1, 0.2);
  EXPECT_TRUE(lines.empty());

  Progress p("k", 5s, clock.now(), [&](const std::string& l) { lines.push_back(l); });
  clock.t += 7s;
  p.update({"stage2", 2, 2, 0.1});
  clock.t += 1s;
  p.finish(0.1, 0.25);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "k: done in 8 s, 0.1 ms against eager's 0.25 ms (2.50x)");
  p.finish(std::nullopt, std::nullopt);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "k: done in 8 s (not measured: no GPU)");
}

}  // namespace
}  // namespace egg::pipeline
