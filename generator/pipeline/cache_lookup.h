// The cache in front of the stages (docs/ARCHITECTURE.md, "The pipeline"): the local store, the
// key's lock while a miss is generated, the shared cache behind the local one, and a kernel cached
// unverified generated again where a GPU can verify it; after a miss, the new kernel is stored in
// both.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cache/key.h"
#include "cache/key_lock.h"
#include "cache/remote.h"
#include "cache/store.h"
#include "emit/emit.h"
#include "pipeline/generate.h"
#include "toolchain/nvcc.h"

namespace egg::pipeline {

// What the lookup needs of a generation; each refers to the generation's own, which outlive it.
struct CacheQuery {
  const GenerateOptions& options;  // the cache's folder and the shared cache's settings
  bool bypassed = false;           // overrides or a resume in effect: no cache at all
  const std::string& name;         // the kernel's, for messages
  const cache::KeyBuilder& key;
  const toolchain::Nvcc& nvcc;             // a shared entry must compile here...
  const std::vector<std::string>& arches;  // ...for every declared arch...
  const std::filesystem::path& work_dir;   // ...in the work folder
};

// One generation's cache. The key's lock, taken on a local miss, is held as long as this lives:
// the kernel is generated and stored under it.
class CacheLookup {
 public:
  // Looks the key up in the local store (unless the cache is off or bypassed), again under the
  // key's lock when another egg-gen held it, then in the shared cache; says so as it goes.
  CacheLookup(const CacheQuery& query, const Services& services);
  CacheLookup(const CacheLookup&) = delete;
  CacheLookup& operator=(const CacheLookup&) = delete;

  // off | hit | remote-hit | unverified-hit | corrupt | miss (GenerateResult::cache_status).
  const std::string& status() const { return status_; }
  // The entry's files when they are taken (a hit with kernel.cu, header.h and record.json that
  // need not be verified again here); null: the kernel is generated.
  const cache::Files* files() const { return taken_ ? &hit_.files : nullptr; }
  // Says which key fields changed against the previous manifest at `manifest`, if any.
  void log_miss_reason(const std::filesystem::path& manifest) const;
  // Stores a generated kernel in the local store (replacing an entry cached unverified) and
  // uploads it to the shared cache unless that is read-only; a failure is a warning.
  void store(const emit::Sources& sources, const nlohmann::json& record,
             const std::string& transcript) const;

 private:
  void lock_and_look_again();
  bool take_remote_hit();
  void check_verified(verify::GpuVerifier* gpu);

  CacheQuery query_;
  std::string key_;
  std::optional<cache::LocalStore> store_;  // none: the cache is off or bypassed
  std::optional<cache::KeyLock> key_lock_;
  std::optional<cache::RemoteStore> remote_;
  cache::Lookup hit_;
  bool reverify_ = false;  // cached unverified, generated again on this GPU
  bool taken_ = false;
  std::string status_ = "off";
};

}  // namespace egg::pipeline
