#include "pipeline/cache_lookup.h"

#include <algorithm>
#include <exception>

#include "pipeline/shared_cache.h"
#include "util/files.h"
#include "util/log.h"

namespace egg::pipeline {
namespace fs = std::filesystem;
using nlohmann::json;

CacheLookup::CacheLookup(const CacheQuery& query, const Services& services)
    : query_(query), key_(query.key.key()) {
  const GenerateOptions& o = query_.options;
  if (o.cache_enabled && !query_.bypassed)
    store_.emplace(o.cache_dir.empty() ? cache::default_root() : o.cache_dir);
  if (query_.bypassed) log::info(query_.name + ": overrides in effect, the cache is bypassed");
  if (!store_) return;  // status "off"

  hit_ = store_->lookup(key_);
  if (hit_.status != cache::LookupStatus::hit) lock_and_look_again();
  // The shared cache, behind the local one: a signed remote hit that compiles here is copied into
  // the local store (pipeline/shared_cache.h).
  remote_ = open_shared_cache(o.remote_cache, o.remote_read_only, o.remote_key, services.http,
                              query_.name);
  bool remote_hit = false;
  if (remote_ && hit_.status != cache::LookupStatus::hit) remote_hit = take_remote_hit();
  status_ = hit_.status == cache::LookupStatus::hit       ? (remote_hit ? "remote-hit" : "hit")
            : hit_.status == cache::LookupStatus::corrupt ? "corrupt"
                                                          : "miss";
  check_verified(services.gpu);
  taken_ = !reverify_ && hit_.status == cache::LookupStatus::hit && hit_.files.count("kernel.cu") &&
           hit_.files.count("header.h") && hit_.files.count("record.json");
  if (!taken_ && (status_ == "hit" || status_ == "remote-hit")) status_ = "corrupt";
}

// A miss is generated under the key's lock: another egg-gen generating the same kernel into this
// cache (a second build tree) is waited for, and its entry is then a hit.
void CacheLookup::lock_and_look_again() {
  key_lock_.emplace(store_->root(), key_, [this](long holder) {
    log::info(query_.name + ": another egg-gen" +
              (holder > 0 ? " (pid " + std::to_string(holder) + ")" : std::string()) +
              " is generating this kernel into " + store_->root().string() +
              "; waiting for its result");
  });
  if (!key_lock_->error().empty())
    log::warning(query_.name + ": " + key_lock_->error() +
                 " (the kernel is generated without the cache's lock)");
  if (key_lock_->waited()) hit_ = store_->lookup(key_);
}

bool CacheLookup::take_remote_hit() {
  auto files =
      checked_remote_hit(*remote_, key_, query_.nvcc, query_.arches, query_.name, query_.work_dir);
  if (!files) return false;
  hit_ = cache::Lookup{cache::LookupStatus::hit, *files};
  store_->store(key_, query_.key.describe(), *files);
  return true;
}

// A kernel cached unverified (by a machine without a GPU) is generated again where a GPU can
// verify it.
void CacheLookup::check_verified(verify::GpuVerifier* gpu) {
  if (hit_.status != cache::LookupStatus::hit || !gpu || !hit_.files.count("record.json")) return;
  json cached = json::parse(hit_.files["record.json"], nullptr, false);
  const std::string arch = gpu->gpu_arch();
  const auto& arches = query_.arches;
  reverify_ = !cached.is_discarded() &&
              std::find(arches.begin(), arches.end(), arch) != arches.end() &&
              cached["status"].value(arch, json::object()).value("state", "") != "verified";
  if (reverify_) {
    status_ = "unverified-hit";
    log::info(query_.name +
              ": the cached kernel was never verified; generating it again on this GPU");
  }
}

void CacheLookup::log_miss_reason(const fs::path& manifest) const {
  auto old = read_file(manifest);
  if (!old) return;
  json m = json::parse(*old, nullptr, false);
  if (m.is_discarded() || !m.contains("cache_fields")) return;
  std::string list;
  for (const auto& f : cache::changed_fields(m["cache_fields"], query_.key.describe()))
    list += (list.empty() ? "" : ", ") + f;
  if (!list.empty()) log::info(query_.name + ": cache miss, changed: " + list);
}

void CacheLookup::store(const emit::Sources& sources, const json& record,
                        const std::string& transcript) const {
  if (!store_) return;
  cache::Files files{
      {"kernel.cu", sources.cu}, {"header.h", sources.header}, {"record.json", record.dump(2)}};
  if (!transcript.empty()) files["transcript.jsonl"] = transcript;
  try {  // a cache that fails now (a full disk) must not throw the kernel away
    store_->store(key_, query_.key.describe(), files, reverify_);
  } catch (const std::exception& e) {
    log::warning(query_.name + ": the kernel was not stored in the cache " +
                 store_->root().string() + ": " + e.what());
  }
  std::string why;
  if (remote_ && !remote_->read_only() && !remote_->put(key_, query_.key.describe(), files, why))
    log::warning(query_.name + ": " + why + " (shared cache " +
                 url_for_message(remote_->base_url()) + ", --remote-cache / EGG_REMOTE_CACHE)");
}

}  // namespace egg::pipeline
