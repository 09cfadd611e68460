#include "util/files.h"

#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>

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
    fs::path candidate = parent / (prefix + "-" + random_suffix());
    if (fs::create_directory(candidate, ec)) {
      path_ = candidate;
      return;
    }
  }
  throw UserError("cannot create a temporary folder in " + parent.string(),
                  "check that the folder is writable");
}

TempDir::~TempDir() {
  if (keep_ || path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace egg
