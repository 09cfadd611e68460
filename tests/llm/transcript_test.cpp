#include "llm/transcript.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "llm/recording_client.h"
#include "llm/replay_client.h"

namespace egg::llm {
namespace {

// Answers "reply <n>" to the n-th request; throws a rate limit on request `fail_at`.
class CountingClient : public ChatClient {
 public:
  ChatReply complete(const ChatRequest&) override {
    ++calls;
    if (calls == fail_at) throw LlmError(LlmErrorKind::rate_limited, "slow down");
    ChatReply r;
    r.text = "reply " + std::to_string(calls) + " \"quoted\"\nline2 \xce\xbb";
    r.tokens_in = 10 * calls;
    r.tokens_out = 3 * calls;
    r.latency_ms = 42;
    r.finish_reason = "stop";
    return r;
  }
  int calls = 0;
  int fail_at = -1;
};

ChatRequest ask(const std::string& what, int attempt = 1) {
  ChatRequest r;
  r.system = "You write CUDA.";
  r.messages = {{"user", what}};
  r.stage = "stage1";
  r.agent = "code";
  r.attempt = attempt;
  return r;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
           ".jsonl"))
      .string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RequestHash, DependsOnSystemAndMessagesOnly) {
  ChatRequest a = ask("x"), b = ask("x", 7);
  b.max_tokens = 5;
  EXPECT_EQ(request_hash(a), request_hash(b));
  EXPECT_EQ(request_hash(a).rfind("fnv1a64:", 0), 0u);
  b.messages[0].content = "y";
  EXPECT_NE(request_hash(a), request_hash(b));
  ChatRequest c = ask("x"), d = ask("x");
  c.system = "ab";
  c.messages[0].content = "c";
  d.system = "a";
  d.messages[0].content = "bc";
  EXPECT_NE(request_hash(c), request_hash(d));
}

TEST(Transcript, RecordsAndReplaysInOrderIncludingErrors) {
  const std::string path = temp_path("egg-transcript");
  CountingClient live;
  live.fail_at = 2;
  {
    TranscriptWriter writer(path, false, [](std::string s) { return s; });
    RecordingClient recording(live, writer, "openai", "gpt-test");
    EXPECT_EQ(recording.complete(ask("one")).tokens_in, 10);
    EXPECT_THROW(recording.complete(ask("two")), LlmError);
    EXPECT_EQ(recording.complete(ask("three", 2)).text.substr(0, 7), "reply 3");
  }
  const auto exchanges = read_transcript(path);
  ASSERT_EQ(exchanges.size(), 3u);
  EXPECT_EQ(exchanges[0].model, "gpt-test");
  EXPECT_EQ(exchanges[0].backend, "openai");
  EXPECT_EQ(exchanges[0].reply.tokens_out, 3);
  EXPECT_EQ(exchanges[0].reply.latency_ms, 42);
  EXPECT_EQ(exchanges[2].attempt, 2);
  ASSERT_TRUE(exchanges[1].error_kind);
  EXPECT_EQ(*exchanges[1].error_kind, LlmErrorKind::rate_limited);

  ReplayClient replay(exchanges, path);
  const ChatReply first = replay.complete(ask("one"));
  EXPECT_EQ(first.text, "reply 1 \"quoted\"\nline2 \xce\xbb");
  EXPECT_EQ(first.tokens_in, 10);
  try {
    replay.complete(ask("two"));
    FAIL();
  } catch (const LlmError& e) {
    EXPECT_EQ(e.kind(), LlmErrorKind::rate_limited);
  }
  EXPECT_EQ(replay.complete(ask("three", 2)).tokens_in, 30);
  EXPECT_EQ(replay.remaining(), 0u);
  std::filesystem::remove(path);
}

TEST(Transcript, ReplayDivergenceSaysWhereAndHow) {
  ChatReply r;
  r.text = "ok";
  ReplayClient replay({make_exchange(ask("make a softmax kernel"), "openai", "m", &r, nullptr)},
                      "t.jsonl");
  try {
    replay.complete(ask("make a layernorm kernel"));
    FAIL();
  } catch (const LlmError& e) {
    EXPECT_EQ(e.kind(), LlmErrorKind::replay_diverged);
    EXPECT_NE(e.message().find("t.jsonl exchange 1"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("message 0 (user) differs at character 7"), std::string::npos)
        << e.what();
    EXPECT_NE(e.message().find("stage1/code"), std::string::npos) << e.what();
  }
  EXPECT_EQ(replay.complete(ask("make a softmax kernel")).text, "ok");
  try {
    replay.complete(ask("more"));
    FAIL();
  } catch (const LlmError& e) {
    EXPECT_EQ(e.kind(), LlmErrorKind::replay_diverged);
    EXPECT_NE(e.message().find("has only 1 exchanges"), std::string::npos) << e.what();
  }
}

TEST(Transcript, WriterRedactsTheKey) {
  const std::string path = temp_path("egg-transcript-redact");
  {
    TranscriptWriter writer(path, false, [](std::string s) {
      for (size_t p; (p = s.find("sk-secret")) != std::string::npos;) s.replace(p, 9, "[redacted]");
      return s;
    });
    ChatReply r;
    r.text = "the key is sk-secret";
    writer.write(make_exchange(ask("sk-secret?"), "openai", "m", &r, nullptr));
  }
  const std::string text = slurp(path);
  EXPECT_EQ(text.find("sk-secret"), std::string::npos);
  EXPECT_NE(text.find("[redacted]"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(Transcript, BadLineNamesFileAndLine) {
  const std::string path = temp_path("egg-transcript-bad");
  {
    ChatReply r;
    TranscriptWriter writer(path);
    writer.write(make_exchange(ask("x"), "openai", "m", &r, nullptr));
  }
  std::ofstream(path, std::ios::app) << "{\"v\":1,\"stage\":\"s\"}\n";
  try {
    read_transcript(path);
    FAIL();
  } catch (const LlmError& e) {
    EXPECT_EQ(e.kind(), LlmErrorKind::config);
    EXPECT_NE(e.message().find(path + ":2:"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("agent"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace egg::llm
