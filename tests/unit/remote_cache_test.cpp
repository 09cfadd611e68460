// The remote cache against an in-memory HTTP fake; the real client against a loopback server is in
// tests/remote_cache/.
#include "cache/remote.h"

#include <gtest/gtest.h>

#include <map>

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

TEST(RemoteCache, PutThenGetRoundTrips) {
  FakeServer server;
  RemoteStore remote("http://cache.example/base/", false, server.call());
  std::string why;
  EXPECT_FALSE(remote.get(kKey, why).has_value());
  EXPECT_EQ(why, "miss");
  ASSERT_TRUE(remote.put(kKey, json::object(), {{"kernel.cu", "code"}}, why)) << why;
  EXPECT_TRUE(server.objects.count("http://cache.example/base/ac/" + kKey));
  auto files = remote.get(kKey, why);
  ASSERT_TRUE(files.has_value()) << why;
  EXPECT_EQ(files->at("kernel.cu"), "code");
}

TEST(RemoteCache, ACorruptEntryIsAMiss) {
  FakeServer server;
  RemoteStore remote("http://c", false, server.call());
  std::string why;
  remote.put(kKey, json::object(), {{"kernel.cu", "code"}}, why);
  auto& body = server.objects.begin()->second;
  body.replace(body.find("\"code\""), 6, "\"evil\"");
  EXPECT_FALSE(remote.get(kKey, why).has_value());
  EXPECT_NE(why.find("corrupt"), std::string::npos) << why;
  server.objects.begin()->second = "{not json";
  EXPECT_FALSE(remote.get(kKey, why).has_value());
  EXPECT_NE(why.find("malformed"), std::string::npos);
}

TEST(RemoteCache, ServerErrorsAreMissesWithAReason) {
  FakeServer server;
  server.fail_with = 503;
  RemoteStore remote("http://c", false, server.call());
  std::string why;
  EXPECT_FALSE(remote.get(kKey, why).has_value());
  EXPECT_NE(why.find("503"), std::string::npos);
  EXPECT_FALSE(remote.put(kKey, json::object(), {{"a", "b"}}, why));
  EXPECT_NE(why.find("refused"), std::string::npos);
}

TEST(RemoteCache, ReadOnlyNeverUploads) {
  FakeServer server;
  RemoteStore remote("http://c", true, server.call());
  std::string why;
  EXPECT_FALSE(remote.put(kKey, json::object(), {{"a", "b"}}, why));
  EXPECT_EQ(server.puts, 0);
}

}  // namespace
}  // namespace egg::cache
