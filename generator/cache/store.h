// The local content-addressed store: <root>/v1/<key[0:2]>/<key>/{entry.json, files...}.
//
// entry.json: {"key": hex, "fields": KeyBuilder::describe(), "files": {name: sha256}, "created": s}
// An entry is published by renaming a finished temp folder into place, so readers never see half of
// one; an entry whose files are missing or do not match their digests is a miss and is removed.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace egg::cache {

// The files of one entry, by name.
using Files = std::map<std::string, std::string>;

// What `stats` reports.
struct Stats {
  std::size_t entries = 0;
  std::uintmax_t bytes = 0;
};

// Outcome of a lookup.
enum class LookupStatus { hit, miss, corrupt };

// A lookup's outcome and, on a hit, the files.
struct Lookup {
  LookupStatus status = LookupStatus::miss;
  Files files;
};

// True for a file name that stays inside its entry folder: letters, digits, '.', '_', '-', no
// "..", not entry.json.
bool valid_entry_file_name(const std::string& name);

// The default root: $EGG_CACHE_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/egg.
std::filesystem::path default_root();
// False when EGG_CACHE=off (or 0/false/no).
bool enabled_by_env();

// A local cache folder.
class LocalStore {
 public:
  explicit LocalStore(std::filesystem::path root) : root_(std::move(root)) {}

  // Finds an entry; a corrupt one is removed and reported as such.
  Lookup lookup(const std::string& key) const;
  // Publishes an entry atomically; an existing complete entry for the key is kept unless `replace`
  // (a GPU verified what a GPU-less machine had stored unverified).
  void store(const std::string& key, const nlohmann::json& fields, const Files& files,
             bool replace = false) const;
  // The entry's recorded key fields, or nullopt.
  std::optional<nlohmann::json> fields(const std::string& key) const;
  // Counts entries and bytes.
  Stats stats() const;
  // Removes every entry; returns how many.
  std::size_t clear() const;

  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path entry_dir(const std::string& key) const;
  std::filesystem::path root_;
};

}  // namespace egg::cache
