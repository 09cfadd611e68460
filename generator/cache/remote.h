// The remote cache: the same entries as the local store, shared over HTTP in the Bazel style
// (GET/PUT <base>/ac/<key>), so bazel-remote (with AC validation off), nginx WebDAV or any object
// store behind HTTP serves a team. The server is untrusted: every entry carries an HMAC-SHA256
// signature with the team's key (cache/signature.h), and an unsigned, badly signed, malformed or
// oddly named entry is a miss with a warning. A remote problem is never a build failure.
//
// Body of an entry (JSON): {"key": hex, "fields": KeyBuilder::describe(),
//                           "files": {name: content}, "sha256": {name: hex},
//                           "signature": {"alg": "hmac-sha256", "value": hex}}
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "cache/signature.h"
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

// How a remote lookup ended; everything but `hit` is a miss (and all but `miss` deserve a
// warning).
enum class RemoteStatus {
  hit,
  miss,           // 404
  unreachable,    // no HTTP exchange
  http_error,     // any status but 200 and 404
  malformed,      // not an entry for this key
  corrupt,        // a file does not match its digest
  bad_file_name,  // a file name that would leave the entry folder
  bad_signature,  // missing, or not made with our key
};

// A remote lookup's outcome; `detail` is the warning's text (never the key or a token).
struct RemoteLookup {
  RemoteStatus status = RemoteStatus::miss;
  Files files;
  std::string detail;
};

// A shared cache behind a base URL.
class RemoteStore {
 public:
  RemoteStore(std::string base_url, bool read_only, HttpCall http, EntrySigner signer)
      : base_(std::move(base_url)),
        read_only_(read_only),
        http_(std::move(http)),
        signer_(std::move(signer)) {
    while (!base_.empty() && base_.back() == '/') base_.pop_back();
  }

  // The entry's files when the server has a well-formed entry signed with our key.
  RemoteLookup get(const std::string& key) const;
  // Uploads a signed entry unless read-only; returns false (with `why`) when the server refused it.
  bool put(const std::string& key, const nlohmann::json& fields, const Files& files,
           std::string& why) const;

  bool read_only() const { return read_only_; }
  const std::string& base_url() const { return base_; }

 private:
  std::string url(const std::string& key) const { return base_ + "/ac/" + key; }
  std::string base_;
  bool read_only_;
  HttpCall http_;
  EntrySigner signer_;
};

}  // namespace egg::cache
