// The remote cache against an in-memory HTTP fake; the real client against a loopback server is in
// tests/remote_cache/.
#include "cache/remote.h"

#include <gtest/gtest.h>

#include <map>

#include "util/error.h"
#include "util/sha256.h"

namespace egg::cache {
namespace {

using nlohmann::json;

// A key-value HTTP server in memory, with a switch to make it fail.
struct FakeServer {
  std::map<std::string, std::string> objects;
  long fail_with = 0;  // answer every request with this status when non-zero
  int puts = 0;
  HttpCall call() {
    return [this](const std::string& method, const std::string& url, const std::string& body) {
      HttpExchange r;
      if (fail_with) {
        r.status = fail_with;
        return r;
      }
      if (method == "PUT") {
        ++puts;
        objects[url] = body;
        r.status = 201;
      } else if (objects.count(url)) {
        r.status = 200;
        r.body = objects[url];
      } else {
        r.status = 404;
      }
      return r;
    };
  }
};

const std::string kKey = sha256_hex("entry");
const std::string kSecret = "a team key of thirty-two bytes!!";

RemoteStore store(FakeServer& server, bool read_only = false, const std::string& secret = kSecret) {
  return RemoteStore("http://cache.example/base/", read_only, server.call(), EntrySigner(secret));
}

std::string& only_body(FakeServer& server) { return server.objects.begin()->second; }

TEST(RemoteCache, PutThenGetRoundTrips) {
  FakeServer server;
  RemoteStore remote = store(server);
  EXPECT_EQ(remote.get(kKey).status, RemoteStatus::miss);
  std::string why;
  ASSERT_TRUE(remote.put(kKey, json::object(), {{"kernel.cu", "code"}}, why)) << why;
  EXPECT_TRUE(server.objects.count("http://cache.example/base/ac/" + kKey));
  auto found = remote.get(kKey);
  ASSERT_EQ(found.status, RemoteStatus::hit) << found.detail;
  EXPECT_EQ(found.files.at("kernel.cu"), "code");
}

TEST(RemoteCache, ACorruptEntryIsAMiss) {
  FakeServer server;
  RemoteStore remote = store(server);
  std::string why;
  remote.put(kKey, json::object(), {{"kernel.cu", "code"}}, why);
  auto& body = only_body(server);
  body.replace(body.find("\"code\""), 6, "\"evil\"");
  auto found = remote.get(kKey);
  EXPECT_EQ(found.status, RemoteStatus::corrupt);
  EXPECT_NE(found.detail.find("corrupt"), std::string::npos) << found.detail;
  only_body(server) = "{not json";
  found = remote.get(kKey);
  EXPECT_EQ(found.status, RemoteStatus::malformed);
  EXPECT_NE(found.detail.find("malformed"), std::string::npos);
}

// A server that rewrites a file and its digest consistently (what any man in the middle can do)
// cannot make the signature match.
TEST(RemoteCache, ASelfConsistentForgeryIsABadSignature) {
  FakeServer server;
  RemoteStore remote = store(server);
  std::string why;
  remote.put(kKey, json::object(), {{"kernel.cu", "code"}}, why);
  json entry = json::parse(only_body(server));
  entry["files"]["kernel.cu"] = "evil";
  entry["sha256"]["kernel.cu"] = sha256_hex("evil");
  only_body(server) = entry.dump();
  EXPECT_EQ(remote.get(kKey).status, RemoteStatus::bad_signature);
  entry.erase("signature");
  only_body(server) = entry.dump();
  auto found = remote.get(kKey);
  EXPECT_EQ(found.status, RemoteStatus::bad_signature);
  EXPECT_NE(found.detail.find("not signed"), std::string::npos) << found.detail;
}

TEST(RemoteCache, AnEntrySignedWithAnotherKeyIsABadSignature) {
  FakeServer server;
  std::string why;
  store(server, false, "another team's key, 32 bytes ok!")
      .put(kKey, json::object(), {{"kernel.cu", "code"}}, why);
  auto found = store(server).get(kKey);
  EXPECT_EQ(found.status, RemoteStatus::bad_signature);
  EXPECT_EQ(found.detail.find(kSecret), std::string::npos);
}

TEST(RemoteCache, AFileNameLeavingTheEntryIsAMissNotACrash) {
  for (const char* name : {"../../escape", "a/b", "entry.json", "", "x\ny"}) {
    FakeServer server;
    json entry = {{"key", kKey}, {"files", {{name, "x"}}}, {"sha256", {{name, sha256_hex("x")}}}};
    server.objects["http://cache.example/base/ac/" + kKey] = entry.dump();
    auto found = store(server).get(kKey);
    EXPECT_EQ(found.status, RemoteStatus::bad_file_name) << name << ": " << found.detail;
  }
}

TEST(RemoteCache, AShortKeyIsAUserError) { EXPECT_THROW(EntrySigner("short"), UserError); }

TEST(RemoteCache, ServerErrorsAreMissesWithAReason) {
  FakeServer server;
  server.fail_with = 503;
  RemoteStore remote = store(server);
  auto found = remote.get(kKey);
  EXPECT_EQ(found.status, RemoteStatus::http_error);
  EXPECT_NE(found.detail.find("503"), std::string::npos);
  std::string why;
  EXPECT_FALSE(remote.put(kKey, json::object(), {{"a", "b"}}, why));
  EXPECT_NE(why.find("refused"), std::string::npos);
  server.fail_with = 401;
  EXPECT_FALSE(remote.put(kKey, json::object(), {{"a", "b"}}, why));
  EXPECT_NE(why.find("EGG_REMOTE_CACHE_TOKEN"), std::string::npos) << why;
}

TEST(RemoteCache, ReadOnlyNeverUploads) {
  FakeServer server;
  RemoteStore remote = store(server, true);
  std::string why;
  EXPECT_FALSE(remote.put(kKey, json::object(), {{"a", "b"}}, why));
  EXPECT_EQ(server.puts, 0);
}

}  // namespace
}  // namespace egg::cache
