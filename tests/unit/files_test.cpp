#include "util/files.h"

#include <gtest/gtest.h>

#include <thread>

namespace egg {
namespace {

TEST(Files, WriteIfChangedLeavesIdenticalFilesAlone) {
  TempDir dir(fs::temp_directory_path(), "egg-files-test");
  fs::path p = dir.path() / "sub" / "a.txt";
  EXPECT_EQ(write_if_changed(p, "hello"), WriteOutcome::written);
  auto before = fs::last_write_time(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(write_if_changed(p, "hello"), WriteOutcome::unchanged);
  EXPECT_EQ(fs::last_write_time(p), before);
  EXPECT_EQ(write_if_changed(p, "world"), WriteOutcome::written);
  EXPECT_EQ(read_file(p).value(), "world");
}

TEST(Files, AtomicWriteLeavesNoTempFiles) {
  TempDir dir(fs::temp_directory_path(), "egg-files-test");
  write_atomic(dir.path() / "x", "1");
  write_atomic(dir.path() / "x", "22");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1);
  EXPECT_EQ(read_file(dir.path() / "x").value(), "22");
}

TEST(Files, TempDirIsRemovedUnlessKept) {
  fs::path kept, removed;
  {
    TempDir a(fs::temp_directory_path(), "egg-files-test");
    TempDir b(fs::temp_directory_path(), "egg-files-test");
    b.keep();
    removed = a.path();
    kept = b.path();
  }
  EXPECT_FALSE(fs::exists(removed));
  EXPECT_TRUE(fs::exists(kept));
  fs::remove_all(kept);
}

TEST(Files, ReadMissingFileIsNullopt) {
  EXPECT_FALSE(read_file("/nonexistent/egg/file").has_value());
}

}  // namespace
}  // namespace egg
