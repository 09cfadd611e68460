// The shared cache as the pipeline uses it: opened only with the team's signing key, and a remote
// entry is taken only when it is signed and its kernel compiles here for every declared arch.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cache/remote.h"
#include "toolchain/nvcc.h"

namespace egg::pipeline {

// The URL without user:password@ (for messages).
std::string url_for_message(const std::string& url);

// The shared cache at `url`, or nullopt (with a warning) when no key is set to check its entries.
std::optional<cache::RemoteStore> open_shared_cache(const std::string& url, bool read_only,
                                                    const std::string& key,
                                                    const cache::HttpCall& http,
                                                    const std::string& kernel_name);

// A remote entry's files when it is signed, well-formed and its kernel.cu (with header.h)
// compiles for every arch; otherwise nullopt, and every reason but a plain miss is warned about.
std::optional<cache::Files> checked_remote_hit(const cache::RemoteStore& remote,
                                               const std::string& key, const toolchain::Nvcc& nvcc,
                                               const std::vector<std::string>& arches,
                                               const std::string& kernel_name,
                                               const std::filesystem::path& work_dir);

}  // namespace egg::pipeline
