// The remote cache: the same entries as the local store, shared over HTTP in the Bazel style
// (GET/PUT <base>/ac/<key>), so bazel-remote (with AC validation off), nginx WebDAV or any object
// store behind HTTP serves a team. A remote problem is never a build failure: it is a miss, with a
// warning.
//
// Body of an entry (JSON): {"key": hex, "fields": KeyBuilder::describe(),
//                           "files": {name: content}, "sha256": {name: hex}}
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "cache/store.h"

namespace egg::cache {

// What the remote store needs from HTTP (the pipeline adapts its transport to this).
struct HttpExchange {
  long status = 0;    // 0 when the request could not be made
  std::string body;   // response body
  std::string error;  // transport error text when status is 0
};
using HttpCall = std::function<HttpExchange(const std::string& method, const std::string& url,
                                            const std::string& body)>;

// A shared cache behind a base URL.
class RemoteStore {
 public:
  RemoteStore(std::string base_url, bool read_only, HttpCall http)
      : base_(std::move(base_url)), read_only_(read_only), http_(std::move(http)) {
    while (!base_.empty() && base_.back() == '/') base_.pop_back();
  }

  // The entry's files, or nullopt on a miss, a corrupt entry or a remote error (`why` says which).
  std::optional<Files> get(const std::string& key, std::string& why) const;
  // Uploads an entry unless read-only; returns false (with `why`) when the server refused it.
  bool put(const std::string& key, const nlohmann::json& fields, const Files& files,
           std::string& why) const;

  bool read_only() const { return read_only_; }
  const std::string& base_url() const { return base_; }

 private:
  std::string url(const std::string& key) const { return base_ + "/ac/" + key; }
  std::string base_;
  bool read_only_;
  HttpCall http_;
};

}  // namespace egg::cache
