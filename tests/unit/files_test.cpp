#include "util/files.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <thread>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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

TEST(Files, TempDirNamesCarryThePidAndOnlyDeadProcessesEntriesAreSwept) {
  TempDir parent(fs::temp_directory_path(), "egg-sweep-test");
  TempDir mine(parent.path(), "egg-work-relu");
  const std::string name = mine.path().filename().string();
  EXPECT_EQ(name.rfind("egg-work-relu-" + std::to_string(getpid()) + "-", 0), 0u) << name;
  // A pid no process has (above the kernel's pid_max), a folder of this live process, one of
  // another tool, and a file that only looks like ours.
  const fs::path dead = parent.path() / "egg-work-relu-999999999-abcdefgh";
  const fs::path dead_proc = parent.path() / "egg-proc-999999998-abcdefgh";
  const fs::path other = parent.path() / "other-999999999-abcdefgh";
  fs::create_directories(dead / "frontend" / "refs");
  fs::create_directories(dead_proc);
  fs::create_directories(other);
  write_atomic(parent.path() / "egg-work-x-999999999-file", "not a folder");
  // A reference server's socket of a dead process, and one of this live process.
  auto make_socket = [](const fs::path& path) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return bound;
  };
  const fs::path dead_socket = parent.path() / "egg-ref-999999997-0123456789abcdef.sock";
  const fs::path live_socket =
      parent.path() / ("egg-ref-" + std::to_string(getpid()) + "-0123456789abcdef.sock");
  ASSERT_TRUE(make_socket(dead_socket)) << dead_socket;
  ASSERT_TRUE(make_socket(live_socket)) << live_socket;
  EXPECT_EQ(sweep_stale_temp_entries(parent.path(), {"egg-work-", "egg-proc-", "egg-ref-"}), 3);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_FALSE(fs::exists(dead_proc));
  EXPECT_FALSE(fs::exists(dead_socket));
  EXPECT_TRUE(fs::exists(live_socket));
  EXPECT_TRUE(fs::exists(mine.path()));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_TRUE(fs::exists(parent.path() / "egg-work-x-999999999-file"));
}

TEST(Files, ReadMissingFileIsNullopt) {
  EXPECT_FALSE(read_file("/nonexistent/egg/file").has_value());
}

}  // namespace
}  // namespace egg
