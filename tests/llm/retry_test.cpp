#include "llm/retry.h"

#include <gtest/gtest.h>

#include <string>

#include "fakes.h"

namespace egg::llm {
namespace {

using std::chrono::milliseconds;
using testing::FakeClock;
using testing::FakeSleeper;
using testing::response;
using testing::ScriptedTransport;

HttpRequest request() {
  HttpRequest r;
  r.url = "https://llm.example/v1/chat/completions?x=1";
  return r;
}

RetryPolicy no_jitter() {
  RetryPolicy p;
  p.jitter = 0;
  return p;
}

TEST(Backoff, GrowsExponentiallyAndIsCapped) {
  RetryPolicy p = no_jitter();
  p.initial_backoff = milliseconds(100);
  p.max_backoff = milliseconds(1000);
  std::mt19937_64 rng(1);
  EXPECT_EQ(backoff_delay(p, 1, rng), milliseconds(100));
  EXPECT_EQ(backoff_delay(p, 2, rng), milliseconds(200));
  EXPECT_EQ(backoff_delay(p, 4, rng), milliseconds(800));
  EXPECT_EQ(backoff_delay(p, 5, rng), milliseconds(1000));
  EXPECT_EQ(backoff_delay(p, 30, rng), milliseconds(1000));
}

TEST(Backoff, JitterStaysInBandAndIsReproducible) {
  RetryPolicy p;
  p.initial_backoff = milliseconds(1000);
  p.jitter = 0.25;
  std::mt19937_64 a(p.seed), b(p.seed);
  bool varied = false;
  milliseconds first = backoff_delay(p, 1, a);
  EXPECT_EQ(first, backoff_delay(p, 1, b));
  for (int i = 0; i < 50; ++i) {
    const auto d = backoff_delay(p, 1, a);
    EXPECT_EQ(d, backoff_delay(p, 1, b));
    EXPECT_GE(d, milliseconds(750));
    EXPECT_LE(d, milliseconds(1250));
    varied |= d != first;
  }
  EXPECT_TRUE(varied);
}

TEST(RetryAfter, ParsesSecondsAndHttpDates) {
  FakeClock clock;  // 2015-10-21 07:28:00 GMT
  EXPECT_EQ(parse_retry_after("7", clock.now()), milliseconds(7000));
  EXPECT_EQ(parse_retry_after(" 0 ", clock.now()), milliseconds(0));
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", clock.now()), milliseconds(30000));
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", clock.now()), milliseconds(0));
  EXPECT_FALSE(parse_retry_after("soon", clock.now()));
  EXPECT_FALSE(parse_retry_after("-3", clock.now()));
  EXPECT_FALSE(parse_retry_after("", clock.now()));
}

struct RetryFixture : ::testing::Test {
  ScriptedTransport inner;
  FakeSleeper sleeper;
  FakeClock clock;
  RetryPolicy policy = no_jitter();
  RetryingTransport retrying{inner, policy, sleeper, clock};
};

TEST_F(RetryFixture, HonoursRetryAfterOn429And503) {
  inner.steps = {response(429, "{}", {{"retry-after", "3"}}),
                 response(503, "{}", {{"retry-after", "Wed, 21 Oct 2015 07:28:05 GMT"}}),
                 response(200, "ok")};
  EXPECT_EQ(retrying.send(request()).body, "ok");
  ASSERT_EQ(sleeper.waits.size(), 2u);
  EXPECT_EQ(sleeper.waits[0], milliseconds(3000));
  EXPECT_EQ(sleeper.waits[1], milliseconds(5000));
  EXPECT_EQ(retrying.last_attempts(), 3);
}

TEST_F(RetryFixture, RetriesServerErrorsAndTransportFailuresWithBackoff) {
  inner.steps = {response(500), LlmError(LlmErrorKind::timeout, "t"),
                 LlmError(LlmErrorKind::connection, "c"), response(200, "ok")};
  EXPECT_EQ(retrying.send(request()).body, "ok");
  EXPECT_EQ(sleeper.waits, (std::vector<milliseconds>{milliseconds(1000), milliseconds(2000),
                                                      milliseconds(4000)}));
}

TEST_F(RetryFixture, GivesUpAfterMaxAttempts) {
  for (int i = 0; i < 5; ++i)
    inner.steps.push_back(response(502, R"({"error":{"message":"bad gateway"}})"));
  try {
    retrying.send(request());
    FAIL();
  } catch (const LlmError& e) {
    EXPECT_EQ(e.kind(), LlmErrorKind::server_error);
    EXPECT_NE(e.message().find("gave up after 5 attempts"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("bad gateway"), std::string::npos) << e.what();
    EXPECT_EQ(e.message().find("x=1"), std::string::npos) << "query strings stay out of messages";
  }
  EXPECT_EQ(inner.requests.size(), 5u);
  EXPECT_EQ(sleeper.waits.size(), 4u);
}

TEST_F(RetryFixture, RetryAfterBeyondTheLimitIsFinal) {
  inner.steps = {response(429, "{}", {{"retry-after", "86400"}})};
  try {
    retrying.send(request());
    FAIL();
  } catch (const LlmError& e) {
    EXPECT_EQ(e.kind(), LlmErrorKind::rate_limited);
    EXPECT_NE(e.message().find("86400 s"), std::string::npos);
  }
  EXPECT_TRUE(sleeper.waits.empty());
}

struct FinalCase {
  long status;
  LlmErrorKind kind;
  const char* advice;
};

class FinalStatus : public RetryFixture, public ::testing::WithParamInterface<FinalCase> {};

TEST_P(FinalStatus, FailsAtOnceSayingWhatToCheck) {
  inner.steps = {response(GetParam().status, R"({"error":{"message":"nope"}})")};
  try {
    retrying.send(request());
    FAIL();
  } catch (const LlmError& e) {
    EXPECT_EQ(e.kind(), GetParam().kind);
    EXPECT_NE(e.message().find(GetParam().advice), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("nope"), std::string::npos) << e.what();
  }
  EXPECT_EQ(inner.requests.size(), 1u);
  EXPECT_TRUE(sleeper.waits.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Statuses, FinalStatus,
    ::testing::Values(FinalCase{400, LlmErrorKind::bad_request, "check the model name"},
                      FinalCase{401, LlmErrorKind::auth, "check EGG_LLM_API_KEY"},
                      FinalCase{403, LlmErrorKind::auth, "EGG_LLM_API_KEY may use this model"},
                      FinalCase{404, LlmErrorKind::not_found,
                                "check EGG_LLM_BASE_URL and the model name"},
                      FinalCase{422, LlmErrorKind::bad_request, "check the model name"}),
    // Named by the status: gtest's default prints the struct's bytes, a pointer among them, so
    // the ctest names changed from build to build.
    [](const ::testing::TestParamInfo<FinalCase>& info) {
      return "Http" + std::to_string(info.param.status);
    });

TEST_F(RetryFixture, TooLargeIsNotRetried) {
  inner.steps = {LlmError(LlmErrorKind::too_large, "big")};
  EXPECT_THROW(retrying.send(request()), LlmError);
  EXPECT_EQ(inner.requests.size(), 1u);
}

}  // namespace
}  // namespace egg::llm
