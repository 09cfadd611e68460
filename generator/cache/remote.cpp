#include "cache/remote.h"

#include "util/sha256.h"

namespace egg::cache {

using nlohmann::json;

std::optional<Files> RemoteStore::get(const std::string& key, std::string& why) const {
  HttpExchange r = http_("GET", url(key), "");
  if (r.status == 404) {
    why = "miss";
    return std::nullopt;
  }
  if (r.status != 200) {
    why = r.status == 0 ? "remote cache unreachable: " + r.error
                        : "remote cache answered HTTP " + std::to_string(r.status);
    return std::nullopt;
  }
  json entry = json::parse(r.body, nullptr, false);
  if (entry.is_discarded() || !entry.is_object() || entry.value("key", "") != key ||
      !entry.contains("files") || !entry["files"].is_object() || !entry.contains("sha256")) {
    why = "remote entry is malformed";
    return std::nullopt;
  }
  Files files;
  for (auto it = entry["files"].begin(); it != entry["files"].end(); ++it) {
    if (!it->is_string() || !entry["sha256"].contains(it.key()) ||
        sha256_hex(it->get<std::string>()) != entry["sha256"][it.key()].get<std::string>()) {
      why = "remote entry is corrupt (" + it.key() + " does not match its digest)";
      return std::nullopt;
    }
    files[it.key()] = it->get<std::string>();
  }
  why = "hit";
  return files;
}

bool RemoteStore::put(const std::string& key, const json& fields, const Files& files,
                      std::string& why) const {
  if (read_only_) {
    why = "read-only";
    return false;
  }
  json entry = {
      {"key", key}, {"fields", fields}, {"files", json::object()}, {"sha256", json::object()}};
  for (const auto& [name, content] : files) {
    entry["files"][name] = content;
    entry["sha256"][name] = sha256_hex(content);
  }
  HttpExchange r = http_("PUT", url(key), entry.dump());
  if (r.status >= 200 && r.status < 300) return true;
  why = r.status == 0 ? "remote cache unreachable: " + r.error
                      : "remote cache refused the upload: HTTP " + std::to_string(r.status);
  return false;
}

}  // namespace egg::cache
