// The real libcurl client against fake_llm_server.py on loopback, in both wire formats.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fake_server.h"
#include "fakes.h"
#include "llm/anthropic_client.h"
#include "llm/code_block.h"
#include "llm/errors.h"
#include "llm/openai_client.h"
#include "llm/recording_client.h"
#include "llm/replay_client.h"

namespace egg::llm {
namespace {

using nlohmann::json;
using namespace nlohmann::literals;
using Script = std::vector<nlohmann::json>;  // the scenario's responses, in order
using std::chrono::milliseconds;
using testing::FakeClock;
using testing::FakeLlmServer;
using testing::FakeSleeper;

constexpr const char* kKey = "sk-test-DO-NOT-LEAK-1234567890";
constexpr const char* kKernel =
    "```cuda\n__global__ void k(float* y) { y[threadIdx.x] = 1.f; }\n```";

// A client stack (curl + retries + wire format) pointed at a fake server.
struct Stack {
  Stack(WireFormat wire, const std::string& base_url, LlmConfig tweak = {}) {
    config = tweak;
    config.wire = wire;
    config.model = "test-model";
    config.base_url = base_url;
    config.api_key = kKey;
    config.retry.jitter = 0;
    config.retry.initial_backoff = milliseconds(1);
    curl =
        std::make_unique<CurlTransport>(CurlOptions{config.max_response_bytes, std::nullopt, {}});
    retrying = std::make_unique<RetryingTransport>(*curl, config.retry, sleeper, clock);
    if (wire == WireFormat::openai) {
      client = std::make_unique<OpenAiClient>(config, *retrying);
    } else {
      client = std::make_unique<AnthropicClient>(config, *retrying);
    }
  }
  LlmConfig config;
  FakeSleeper sleeper;
  FakeClock clock;
  std::unique_ptr<CurlTransport> curl;
  std::unique_ptr<RetryingTransport> retrying;
  std::unique_ptr<ChatClient> client;
};

ChatRequest ask() {
  ChatRequest r;
  r.system = "You write CUDA kernels.";
  r.messages = {{"user", "Write relu."}};
  r.max_tokens = 1000;
  r.temperature = 0.5;
  r.stage = "stage1";
  r.agent = "code";
  r.attempt = 1;
  return r;
}

json reply(const std::string& text, const std::string& finish = "stop", int in = 11, int out = 22) {
  return {{"reply", {{"text", text}, {"finish", finish}, {"tokens_in", in}, {"tokens_out", out}}}};
}

LlmError error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const LlmError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an LlmError";
  return LlmError(LlmErrorKind::config, "none");
}

}  // namespace

// Names the wire format in test output.
void PrintTo(WireFormat wire, std::ostream* os) { *os << wire_name(wire); }

namespace {

class Wire : public ::testing::TestWithParam<WireFormat> {};

TEST_P(Wire, SuccessParsesTextAndTokens) {
  FakeLlmServer server(Script{reply(kKernel, "stop", 123, 45)});
  Stack stack(GetParam(), server.base_url());
  const ChatReply r = stack.client->complete(ask());
  EXPECT_EQ(r.tokens_in, 123);
  EXPECT_EQ(r.tokens_out, 45);
  EXPECT_EQ(r.finish, FinishReason::stop);
  EXPECT_EQ(r.model, "test-model");
  EXPECT_EQ(r.attempts, 1);
  EXPECT_GE(r.latency_ms, 0);
  EXPECT_NE(extract_code(r).find("__global__ void k"), std::string::npos);

  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  const json& h = requests[0]["headers"];
  const json body = json::parse(requests[0]["body"].get<std::string>());
  EXPECT_EQ(requests[0]["method"], "POST");
  EXPECT_EQ(h["content-type"], "application/json");
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_EQ(body["max_tokens"], 1000);
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.5);
  if (GetParam() == WireFormat::openai) {
    EXPECT_EQ(requests[0]["path"], "/chat/completions");
    EXPECT_EQ(h["authorization"], std::string("Bearer ") + kKey);
    EXPECT_FALSE(h.contains("x-api-key"));
    ASSERT_EQ(body["messages"].size(), 2u);
    EXPECT_EQ(body["messages"][0]["role"], "system");
    EXPECT_EQ(body["messages"][0]["content"], "You write CUDA kernels.");
    EXPECT_EQ(body["messages"][1]["content"], "Write relu.");
  } else {
    EXPECT_EQ(requests[0]["path"], "/v1/messages");
    EXPECT_EQ(h["x-api-key"], kKey);
    EXPECT_EQ(h["anthropic-version"], "2023-06-01");
    EXPECT_FALSE(h.contains("authorization"));
    EXPECT_EQ(body["system"], "You write CUDA kernels.");
    ASSERT_EQ(body["messages"].size(), 1u);
    EXPECT_EQ(body["messages"][0]["role"], "user");
  }
}

TEST_P(Wire, RateLimitWithRetryAfterThenSuccess) {
  FakeLlmServer server(Script{R"({"status": 429, "headers": {"Retry-After": "2"},
                             "json": {"error": {"message": "rate limit"}}})"_json,
                              reply(kKernel)});
  Stack stack(GetParam(), server.base_url());
  const ChatReply r = stack.client->complete(ask());
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(stack.sleeper.waits, std::vector<milliseconds>{milliseconds(2000)});
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST_P(Wire, ServerErrorThenSuccess) {
  FakeLlmServer server(Script{R"({"status": 500, "body": "oops"})"_json, reply(kKernel)});
  Stack stack(GetParam(), server.base_url());
  EXPECT_EQ(stack.client->complete(ask()).attempts, 2);
  EXPECT_EQ(stack.sleeper.waits.size(), 1u);
}

TEST_P(Wire, ClosedConnectionIsRetried) {
  FakeLlmServer server(Script{R"({"action": "close"})"_json, reply(kKernel)});
  Stack stack(GetParam(), server.base_url());
  EXPECT_EQ(stack.client->complete(ask()).attempts, 2);
}

TEST_P(Wire, StalledConnectionTimesOut) {
  FakeLlmServer server(Script{R"({"action": "stall", "seconds": 5})"_json,
                              R"({"action": "stall", "seconds": 5})"_json});
  LlmConfig tweak;
  tweak.total_timeout = milliseconds(400);
  tweak.retry.max_attempts = 2;
  Stack stack(GetParam(), server.base_url(), tweak);
  const LlmError e = error_of([&] { stack.client->complete(ask()); });
  EXPECT_EQ(e.kind(), LlmErrorKind::timeout);
  EXPECT_NE(e.message().find("gave up after 2 attempts"), std::string::npos) << e.what();
  EXPECT_EQ(stack.sleeper.waits.size(), 1u);
}

TEST_P(Wire, MalformedJsonIsReportedNotRetried) {
  FakeLlmServer server(Script{R"({"body": "{\"choices\": [trunc"})"_json});
  Stack stack(GetParam(), server.base_url());
  const LlmError e = error_of([&] { stack.client->complete(ask()); });
  EXPECT_EQ(e.kind(), LlmErrorKind::malformed_response);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_P(Wire, WrongShapeIsMalformed) {
  FakeLlmServer server(Script{R"({"json": {"choices": 3, "content": "x"}})"_json});
  Stack stack(GetParam(), server.base_url());
  EXPECT_EQ(error_of([&] { stack.client->complete(ask()); }).kind(),
            LlmErrorKind::malformed_response);
}

TEST_P(Wire, TruncatedAnswer) {
  FakeLlmServer server(Script{reply("```cuda\n__global__ void k(float* y) {\n  y[0] =", "length")});
  Stack stack(GetParam(), server.base_url());
  const ChatReply r = stack.client->complete(ask());
  EXPECT_EQ(r.finish, FinishReason::length);
  EXPECT_EQ(r.finish_reason, GetParam() == WireFormat::openai ? "length" : "max_tokens");
  EXPECT_EQ(error_of([&] { extract_code(r); }).kind(), LlmErrorKind::truncated);
}

TEST_P(Wire, Refusal) {
  FakeLlmServer server(Script{reply("I can't help with that.", "refusal"),
                              reply("I'm sorry, but I can't assist with this.")});
  Stack stack(GetParam(), server.base_url());
  const ChatReply flagged = stack.client->complete(ask());
  EXPECT_EQ(flagged.finish, FinishReason::refusal);
  EXPECT_EQ(error_of([&] { extract_code(flagged); }).kind(), LlmErrorKind::refusal);
  const ChatReply worded = stack.client->complete(ask());
  EXPECT_EQ(error_of([&] { extract_code(worded); }).kind(), LlmErrorKind::refusal);
}

TEST_P(Wire, AnswerWithoutCode) {
  FakeLlmServer server(Script{reply("Use shared memory and warp shuffles.")});
  Stack stack(GetParam(), server.base_url());
  const ChatReply r = stack.client->complete(ask());
  EXPECT_EQ(error_of([&] { extract_code(r); }).kind(), LlmErrorKind::no_code);
}

TEST_P(Wire, UnauthorizedIsFinalAndNeverShowsTheKey) {
  // Servers sometimes echo the key they rejected; it must not reach the message.
  json echo = R"({"status": 401, "json": {"error": {"message": ""}}})"_json;
  echo["json"]["error"]["message"] = std::string("Incorrect API key provided: ") + kKey;
  FakeLlmServer server(Script{echo});
  Stack stack(GetParam(), server.base_url());
  const LlmError e = error_of([&] { stack.client->complete(ask()); });
  EXPECT_EQ(e.kind(), LlmErrorKind::auth);
  EXPECT_NE(e.message().find("check EGG_LLM_API_KEY"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("Incorrect API key provided"), std::string::npos) << e.what();
  EXPECT_EQ(std::string(e.what()).find(kKey), std::string::npos) << e.what();
  EXPECT_EQ(server.requests().size(), 1u);
  EXPECT_TRUE(stack.sleeper.waits.empty());
}

TEST_P(Wire, NotFoundSaysToCheckBaseUrlAndModel) {
  FakeLlmServer server(Script{R"({"status": 404, "body": "no such route"})"_json});
  Stack stack(GetParam(), server.base_url());
  const LlmError e = error_of([&] { stack.client->complete(ask()); });
  EXPECT_EQ(e.kind(), LlmErrorKind::not_found);
  EXPECT_NE(e.message().find("check EGG_LLM_BASE_URL and the model name"), std::string::npos)
      << e.what();
  EXPECT_NE(e.message().find(server.base_url()), std::string::npos) << e.what();
  EXPECT_EQ(std::string(e.what()).find(kKey), std::string::npos);
}

TEST_P(Wire, OversizeResponseIsTooLarge) {
  FakeLlmServer server(Script{R"({"body_bytes": 300000})"_json});
  LlmConfig tweak;
  tweak.max_response_bytes = 64 * 1024;
  Stack stack(GetParam(), server.base_url(), tweak);
  const LlmError e = error_of([&] { stack.client->complete(ask()); });
  EXPECT_EQ(e.kind(), LlmErrorKind::too_large);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_P(Wire, OversizeResponseWithoutLengthIsTooLarge) {
  FakeLlmServer server(Script{R"({"body_bytes": 300000, "no_length": true})"_json});
  LlmConfig tweak;
  tweak.max_response_bytes = 64 * 1024;
  Stack stack(GetParam(), server.base_url(), tweak);
  const LlmError e = error_of([&] { stack.client->complete(ask()); });
  EXPECT_EQ(e.kind(), LlmErrorKind::too_large);
  EXPECT_NE(e.message().find("larger than 65536 bytes"), std::string::npos) << e.what();
}

TEST_P(Wire, TranscriptHoldsNoKeyAndReplaysWithoutNetwork) {
  FakeLlmServer server(
      Script{reply(kKernel, "stop", 5, 6), R"({"status": 401, "body": "bad key"})"_json});
  Stack stack(GetParam(), server.base_url());
  const std::string path = server.dir() + "/transcript.jsonl";
  ChatReply live;
  {
    TranscriptWriter writer(path, false,
                            [&](std::string s) { return stack.config.redact(std::move(s)); });
    RecordingClient recording(*stack.client, writer, wire_name(GetParam()), stack.config.model);
    live = recording.complete(ask());
    EXPECT_THROW(recording.complete(ask()), LlmError);
  }
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  EXPECT_EQ(text.str().find(kKey), std::string::npos);
  EXPECT_EQ(text.str().find("Bearer"), std::string::npos);
  EXPECT_EQ(text.str().find("x-api-key"), std::string::npos);

  ReplayClient replay = ReplayClient::from_file(path);
  const ChatReply again = replay.complete(ask());
  EXPECT_EQ(again.text, live.text);
  EXPECT_EQ(again.tokens_in, 5);
  EXPECT_EQ(error_of([&] { replay.complete(ask()); }).kind(), LlmErrorKind::auth);
  EXPECT_EQ(server.requests().size(), 2u);  // replay sent nothing
}

INSTANTIATE_TEST_SUITE_P(Formats, Wire,
                         ::testing::Values(WireFormat::openai, WireFormat::anthropic),
                         [](const auto& info) { return std::string(wire_name(info.param)); });

TEST(WireConnection, RefusedConnectionIsRetriedThenReported) {
  // A port that was just free: nothing listens on it.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  LlmConfig tweak;
  tweak.retry.max_attempts = 3;
  Stack stack(WireFormat::openai, "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)),
              tweak);
  const LlmError e = error_of([&] { stack.client->complete(ask()); });
  EXPECT_EQ(e.kind(), LlmErrorKind::connection);
  EXPECT_EQ(stack.sleeper.waits.size(), 2u);
  EXPECT_NE(e.message().find("check EGG_LLM_BASE_URL"), std::string::npos) << e.what();
}

TEST(WireRequest, OfficialOpenAiGetsMaxCompletionTokens) {
  LlmConfig config;
  config.base_url = "https://api.openai.com/v1";
  config.api_key = "k";
  testing::ScriptedTransport unused;
  OpenAiClient client(config, unused);
  ChatRequest r = ask();
  r.model = "gpt-5.1";
  const json body = json::parse(client.build_request(r).body);
  EXPECT_EQ(body["max_completion_tokens"], 1000);
  EXPECT_FALSE(body.contains("max_tokens"));
  EXPECT_FALSE(body.contains("temperature"));  // reasoning models take only the default
}

TEST(WireRequest, AnthropicBaseUrlWithOrWithoutV1) {
  LlmConfig config;
  config.wire = WireFormat::anthropic;
  config.model = "claude";
  testing::ScriptedTransport unused;
  config.base_url = "https://api.anthropic.com";
  EXPECT_EQ(AnthropicClient(config, unused).build_request(ask()).url,
            "https://api.anthropic.com/v1/messages");
  config.base_url = "https://gw.example/anthropic/v1";
  EXPECT_EQ(AnthropicClient(config, unused).build_request(ask()).url,
            "https://gw.example/anthropic/v1/messages");
}

}  // namespace
}  // namespace egg::llm
