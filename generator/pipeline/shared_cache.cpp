#include "pipeline/shared_cache.h"

#include "util/files.h"
#include "util/log.h"

namespace egg::pipeline {
namespace fs = std::filesystem;

std::string url_for_message(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const auto host = scheme + 3;
  const auto at = url.find('@', host);
  const auto slash = url.find('/', host);
  if (at == std::string::npos || (slash != std::string::npos && at > slash)) return url;
  return url.substr(0, host) + url.substr(at + 1);
}

std::optional<cache::RemoteStore> open_shared_cache(const std::string& url, bool read_only,
                                                    const std::string& key,
                                                    const cache::HttpCall& http,
                                                    const std::string& kernel_name) {
  if (url.empty() || !http) return std::nullopt;
  if (key.empty()) {
    log::warning(kernel_name + ": the shared cache " + url_for_message(url) +
                 " is not used: EGG_REMOTE_CACHE_KEY is not set, so its entries cannot be checked "
                 "(set it to the team's key, or drop --remote-cache / EGG_REMOTE_CACHE)");
    return std::nullopt;
  }
  return cache::RemoteStore(url, read_only, http, cache::EntrySigner(key));
}

std::optional<cache::Files> checked_remote_hit(const cache::RemoteStore& remote,
                                               const std::string& key, const toolchain::Nvcc& nvcc,
                                               const std::vector<std::string>& arches,
                                               const std::string& kernel_name,
                                               const fs::path& work_dir) {
  const std::string where = " (shared cache " + url_for_message(remote.base_url()) +
                            ", --remote-cache / EGG_REMOTE_CACHE); generating locally";
  cache::RemoteLookup found = remote.get(key);
  if (found.status == cache::RemoteStatus::miss) return std::nullopt;
  if (found.status != cache::RemoteStatus::hit) {
    log::warning(kernel_name + ": " + found.detail + where);
    return std::nullopt;
  }
  if (!found.files.count("kernel.cu") || !found.files.count("header.h") ||
      !found.files.count("record.json")) {
    log::warning(kernel_name + ": remote entry lacks kernel.cu, header.h or record.json" + where);
    return std::nullopt;
  }
  // The server is not trusted to have checked anything: the kernel must compile here first.
  const fs::path dir = work_dir / "remote-entry";
  write_atomic(dir / "include" / "egg" / (kernel_name + ".h"), found.files.at("header.h"));
  write_atomic(dir / (kernel_name + ".cu"), found.files.at("kernel.cu"));
  auto compiled =
      nvcc.compile_object(dir / (kernel_name + ".cu"), dir / "include", arches, dir / "kernel.o");
  if (!compiled.ok) {
    std::string first_error = compiled.log.substr(0, compiled.log.find('\n'));
    log::warning(kernel_name + ": the remote entry's kernel does not compile (" + first_error +
                 ")" + where);
    return std::nullopt;
  }
  return std::move(found.files);
}

}  // namespace egg::pipeline
