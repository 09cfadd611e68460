// File helpers: whole-file reads, atomic writes that skip unchanged content, temp folders.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace egg {

namespace fs = std::filesystem;

// Reads a whole file; nullopt when it does not exist or cannot be read.
std::optional<std::string> read_file(const fs::path& path);

// Result of write_if_changed.
enum class WriteOutcome { written, unchanged };

// Writes `content` to `path` through a temp file in the same folder and a rename, so readers see
// the old or the new file, never half of one. Leaves the file (and its mtime) alone when it already
// holds exactly `content`. Creates parent folders.
WriteOutcome write_if_changed(const fs::path& path, const std::string& content);

// Writes unconditionally, atomically (temp + rename).
void write_atomic(const fs::path& path, const std::string& content);

// A fresh folder `parent/prefix-<pid>-XXXXXXXX`, removed on destruction unless kept, and on
// SIGINT/SIGTERM/SIGHUP (base/termination.h). The pid lets a later run sweep the folders of a
// process that was killed (sweep_stale_temp_entries).
class TempDir {
 public:
  TempDir(const fs::path& parent, const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  // Keeps the folder on disk after destruction (and after a signal).
  void keep();

 private:
  fs::path path_;
  bool keep_ = false;
};

// Removes the folders (TempDir's) and Unix sockets (the reference server's, egg-ref-<pid>-*.sock)
// left in `parent` under one of `prefixes` (e.g. "egg-work-") whose process is gone (killed before
// it could clean up), if this user owns them. Returns how many.
int sweep_stale_temp_entries(const fs::path& parent, const std::vector<std::string>& prefixes);

}  // namespace egg
