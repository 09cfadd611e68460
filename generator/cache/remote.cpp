#include "cache/remote.h"

#include "util/sha256.h"

namespace egg::cache {

using nlohmann::json;

namespace {

RemoteLookup miss(RemoteStatus status, std::string detail) {
  return RemoteLookup{status, {}, std::move(detail)};
}

}  // namespace

RemoteLookup RemoteStore::get(const std::string& key) const {
  HttpExchange r = http_("GET", url(key), "");
  if (r.status == 404) return miss(RemoteStatus::miss, "miss");
  if (r.status == 0) return miss(RemoteStatus::unreachable, "remote cache unreachable: " + r.error);
  if (r.status != 200)
    return miss(RemoteStatus::http_error, "remote cache answered HTTP " + std::to_string(r.status));
  json entry = json::parse(r.body, nullptr, false);
  if (entry.is_discarded() || !entry.is_object() || entry.value("key", "") != key ||
      !entry.contains("files") || !entry["files"].is_object() || !entry.contains("sha256") ||
      !entry["sha256"].is_object())
    return miss(RemoteStatus::malformed, "remote entry is malformed");
  Files files;
  for (auto it = entry["files"].begin(); it != entry["files"].end(); ++it) {
    if (!valid_entry_file_name(it.key()))
      return miss(
          RemoteStatus::bad_file_name,
          "remote entry has a file name that is not allowed (" + json(it.key()).dump() + ")");
    const json& digest = entry["sha256"].value(it.key(), json());
    if (!it->is_string() || !digest.is_string() ||
        sha256_hex(it->get<std::string>()) != digest.get<std::string>())
      return miss(RemoteStatus::corrupt,
                  "remote entry is corrupt (" + it.key() + " does not match its digest)");
    files[it.key()] = it->get<std::string>();
  }
  if (!signer_.verify(key, files, entry.value("signature", json())))
    return miss(RemoteStatus::bad_signature,
                entry.contains("signature")
                    ? "remote entry's signature was not made with EGG_REMOTE_CACHE_KEY"
                    : "remote entry is not signed");
  return RemoteLookup{RemoteStatus::hit, std::move(files), "hit"};
}

bool RemoteStore::put(const std::string& key, const json& fields, const Files& files,
                      std::string& why) const {
  if (read_only_) {
    why = "read-only";
    return false;
  }
  json entry = {{"key", key},
                {"fields", fields},
                {"files", json::object()},
                {"sha256", json::object()},
                {"signature", signer_.sign(key, files)}};
  for (const auto& [name, content] : files) {
    entry["files"][name] = content;
    entry["sha256"][name] = sha256_hex(content);
  }
  HttpExchange r = http_("PUT", url(key), entry.dump());
  if (r.status >= 200 && r.status < 300) return true;
  why = r.status == 0
            ? "remote cache unreachable: " + r.error
            : "remote cache refused the upload: HTTP " + std::to_string(r.status) +
                  (r.status == 401 || r.status == 403 ? " (check EGG_REMOTE_CACHE_TOKEN)" : "");
  return false;
}

}  // namespace egg::cache
