#include "util/files.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fstream>
#include <random>
#include <sstream>

#include "base/termination.h"
#include "util/error.h"

namespace egg {
namespace {

std::string random_suffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^ static_cast<unsigned>(getpid())};
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s;
  for (int i = 0; i < 8; ++i) s.push_back(kChars[rng() % (sizeof(kChars) - 1)]);
  return s;
}

}  // namespace

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

void write_atomic(const fs::path& path, const std::string& content) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec)
    throw UserError("cannot create folder " + path.parent_path().string() + ": " + ec.message(),
                    "check the permissions of the output folder");
  fs::path tmp = path;
  tmp += ".tmp-" + random_suffix();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      throw UserError("cannot write " + tmp.string(), "check free disk space and permissions");
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw UserError("cannot rename into " + path.string() + ": " + ec.message(),
                    "check the permissions of the output folder");
  }
}

WriteOutcome write_if_changed(const fs::path& path, const std::string& content) {
  if (auto old = read_file(path); old && *old == content) return WriteOutcome::unchanged;
  write_atomic(path, content);
  return WriteOutcome::written;
}

TempDir::TempDir(const fs::path& parent, const std::string& prefix) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  for (int attempt = 0; attempt < 16; ++attempt) {
    fs::path candidate = parent / (prefix + "-" + std::to_string(getpid()) + "-" + random_suffix());
    if (fs::create_directory(candidate, ec)) {
      path_ = candidate;
      track_temp_dir(path_);
      return;
    }
  }
  throw UserError("cannot create a temporary folder in " + parent.string(),
                  "check that the folder is writable");
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  untrack_temp_dir(path_);
  if (keep_) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void TempDir::keep() {
  keep_ = true;
  untrack_temp_dir(path_);
}

int sweep_stale_temp_entries(const fs::path& parent, const std::vector<std::string>& prefixes) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    bool ours = false;
    for (const auto& p : prefixes) ours = ours || name.rfind(p, 0) == 0;
    // <prefix>-<pid>-<random characters>[.sock]
    const auto last = name.rfind('-');
    if (!ours || last == std::string::npos || last == 0) continue;
    const auto before = name.rfind('-', last - 1);
    if (before == std::string::npos) continue;
    const std::string pid_text = name.substr(before + 1, last - before - 1);
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos ||
        pid_text.size() > 9)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode)) ||
        st.st_uid != getuid())
      continue;
    if (pid == getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours)
    std::error_code rm_ec;
    fs::remove_all(it->path(), rm_ec);
    if (!rm_ec) ++removed;
  }
  return removed;
}

}  // namespace egg
