#include "cache/store.h"

#include <unistd.h>
#include <chrono>

#include <cstdlib>

#include "util/error.h"
#include "util/files.h"
#include "util/sha256.h"

namespace egg::cache {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kVersionDir = "v1";

bool valid_key(const std::string& key) {
  if (key.size() != 64) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

bool valid_entry_file_name(const std::string& name) {
  if (name.empty() || name.size() > 128 || name == "entry.json" ||
      name.find("..") != std::string::npos)
    return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '-'))
      return false;
  return true;
}

fs::path default_root() {
  if (const char* dir = std::getenv("EGG_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "egg";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "egg";
  return fs::temp_directory_path() / "egg-cache";
}

bool enabled_by_env() {
  const char* v = std::getenv("EGG_CACHE");
  if (v == nullptr) return true;
  std::string s = v;
  return !(s == "off" || s == "0" || s == "false" || s == "no");
}

fs::path LocalStore::entry_dir(const std::string& key) const {
  if (!valid_key(key))
    throw UserError("'" + key + "' is not a cache key", "a key is 64 lowercase hex digits");
  return root_ / kVersionDir / key.substr(0, 2) / key;
}

Lookup LocalStore::lookup(const std::string& key) const {
  Lookup result;
  fs::path dir = entry_dir(key);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return result;
  auto corrupt = [&] {
    // Move aside first so a concurrent reader never sees a half-removed entry.
    fs::path trash = root_ / kVersionDir / "tmp" / ("corrupt-" + key);
    fs::create_directories(trash.parent_path(), ec);
    fs::remove_all(trash, ec);
    fs::rename(dir, trash, ec);
    fs::remove_all(trash, ec);
    result.status = LookupStatus::corrupt;
    result.files.clear();
    return result;
  };
  auto text = read_file(dir / "entry.json");
  if (!text) return corrupt();
  json entry = json::parse(*text, nullptr, false);
  if (entry.is_discarded() || !entry.is_object() || entry.value("key", "") != key ||
      !entry.contains("files") || !entry["files"].is_object())
    return corrupt();
  for (auto it = entry["files"].begin(); it != entry["files"].end(); ++it) {
    if (!valid_entry_file_name(it.key()) || !it->is_string()) return corrupt();
    auto content = read_file(dir / it.key());
    if (!content || sha256_hex(*content) != it->get<std::string>()) return corrupt();
    result.files[it.key()] = std::move(*content);
  }
  result.status = LookupStatus::hit;
  return result;
}

void LocalStore::store(const std::string& key, const json& fields, const Files& files,
                       bool replace) const {
  fs::path dir = entry_dir(key);
  std::error_code ec;
  if (!replace && lookup(key).status == LookupStatus::hit) return;
  TempDir tmp(root_ / kVersionDir / "tmp", "entry");
  json entry = {{"key", key}, {"fields", fields}, {"files", json::object()}};
  entry["created"] = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  for (const auto& [name, content] : files) {
    if (!valid_entry_file_name(name)) throw InternalError("bad cache file name: " + name);
    write_atomic(tmp.path() / name, content);
    entry["files"][name] = sha256_hex(content);
  }
  write_atomic(tmp.path() / "entry.json", entry.dump(2) + "\n");
  fs::create_directories(dir.parent_path(), ec);
  // A leftover (corrupt, or the entry being replaced) is moved aside first, then removed.
  fs::path old = root_ / kVersionDir / "tmp" / ("old-" + key + "-" + std::to_string(::getpid()));
  fs::rename(dir, old, ec);
  fs::rename(tmp.path(), dir, ec);
  fs::remove_all(old, ec);
  // If another process published the same key first, its entry stands; ours is removed with tmp.
}

std::optional<json> LocalStore::fields(const std::string& key) const {
  auto text = read_file(entry_dir(key) / "entry.json");
  if (!text) return std::nullopt;
  json entry = json::parse(*text, nullptr, false);
  if (entry.is_discarded() || !entry.contains("fields")) return std::nullopt;
  return entry["fields"];
}

Stats LocalStore::stats() const {
  Stats s;
  std::error_code ec;
  fs::path base = root_ / kVersionDir;
  if (!fs::is_directory(base, ec)) return s;
  for (const auto& shard : fs::directory_iterator(base, ec)) {
    if (!shard.is_directory() || shard.path().filename() == "tmp") continue;
    for (const auto& entry : fs::directory_iterator(shard.path(), ec)) {
      if (!fs::exists(entry.path() / "entry.json")) continue;
      ++s.entries;
      for (const auto& f : fs::directory_iterator(entry.path(), ec))
        if (f.is_regular_file()) s.bytes += f.file_size();
    }
  }
  return s;
}

std::size_t LocalStore::clear() const {
  std::size_t n = stats().entries;
  std::error_code ec;
  fs::path base = root_ / kVersionDir;
  if (!fs::exists(base, ec)) return 0;
  fs::path trash = root_ / ("v1-clearing-" + std::to_string(::getpid()));
  fs::rename(base, trash, ec);
  fs::remove_all(ec ? base : trash, ec);
  return n;
}

}  // namespace egg::cache
