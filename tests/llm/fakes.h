// Test doubles for the LLM layer: a recording sleeper, a fixed clock, a scripted transport.
#pragma once

#include <chrono>
#include <deque>
#include <stdexcept>
#include <variant>
#include <vector>

#include "llm/errors.h"
#include "llm/http_client.h"
#include "llm/retry.h"

namespace egg::llm::testing {

// Records every wait instead of sleeping.
class FakeSleeper : public Sleeper {
 public:
  // Appends `duration` to waits.
  void sleep_for(std::chrono::milliseconds duration) override { waits.push_back(duration); }
  std::vector<std::chrono::milliseconds> waits;  // every wait asked for, in order
};

// A clock standing still at `time` (settable).
class FakeClock : public Clock {
 public:
  // Returns `time`.
  std::chrono::system_clock::time_point now() override { return time; }
  std::chrono::system_clock::time_point time{
      std::chrono::seconds(1445412480)};  // 2015-10-21 07:28:00 UTC
};

// Answers requests from a script of responses or transport errors, recording the requests.
class ScriptedTransport : public HttpTransport {
 public:
  using Step = std::variant<HttpResponse, LlmError>;  // an answer, or a thrown transport error
  // Returns (or throws) the next step.
  HttpResponse send(const HttpRequest& request) override {
    requests.push_back(request);
    if (steps.empty()) throw std::logic_error("ScriptedTransport: script exhausted");
    Step step = steps.front();
    steps.pop_front();
    if (auto* error = std::get_if<LlmError>(&step)) throw *error;
    return std::get<HttpResponse>(step);
  }
  std::deque<Step> steps;             // what to answer, in order
  std::vector<HttpRequest> requests;  // what was sent
};

// A response with `status`, `body` and optional headers (names lower-cased).
inline HttpResponse response(long status, std::string body = "{}",
                             std::map<std::string, std::string> headers = {}) {
  return HttpResponse{status, std::move(headers), std::move(body)};
}

}  // namespace egg::llm::testing
