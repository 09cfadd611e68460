// Retries of HTTP exchanges: backoff with seeded jitter, Retry-After, and final errors that say
// what to check.
//
// Rules: 2xx is returned. 408, 429, 5xx, timeouts and connection failures are retried up to
// RetryPolicy::max_attempts; on 429/503 a Retry-After header (seconds or an HTTP date) replaces
// the computed backoff. 400, 401, 403, 404, 413, 422 and other 4xx fail at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "llm/errors.h"
#include "llm/http_client.h"

namespace egg::llm {

// The wall clock, behind an interface so tests control "now" (for HTTP-date Retry-After).
class Clock {
 public:
  virtual ~Clock() = default;
  // The current time.
  virtual std::chrono::system_clock::time_point now() = 0;
};

// Waiting, behind an interface so tests record waits instead of sleeping.
class Sleeper {
 public:
  virtual ~Sleeper() = default;
  // Blocks for `duration`.
  virtual void sleep_for(std::chrono::milliseconds duration) = 0;
};

// The process-wide real clock.
Clock& system_clock();
// The process-wide real sleeper.
Sleeper& system_sleeper();

// How often and how long to retry.
struct RetryPolicy {
  int max_attempts = 5;                                             // total tries, >= 1
  std::chrono::milliseconds initial_backoff{1000};                  // wait before the 2nd try
  double multiplier = 2.0;                                          // growth per try
  std::chrono::milliseconds max_backoff{std::chrono::seconds(60)};  // cap of computed waits
  double jitter = 0.25;                                             // wait *= uniform[1-j, 1+j]
  std::chrono::milliseconds max_retry_after{
      std::chrono::seconds(300)};  // a longer Retry-After is final
  std::uint64_t seed = 0x4567u;    // jitter RNG seed (reproducible)
};

// The backoff before try `attempt + 1` (attempt >= 1), jittered with `rng`, capped.
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int attempt,
                                        std::mt19937_64& rng);

// Parses a Retry-After value (delta seconds, or an IMF-fixdate such as
// "Wed, 21 Oct 2015 07:28:00 GMT") into a wait from `now`; nullopt when unparsable.
std::optional<std::chrono::milliseconds> parse_retry_after(
    std::string_view value, std::chrono::system_clock::time_point now);

// The final error for a non-2xx `response` to `request` (message says what to check).
LlmError http_status_error(const HttpRequest& request, const HttpResponse& response);

// True when `status` is worth retrying (408, 429, 5xx).
bool is_retryable_status(long status);

// A transport that retries another one; send() returns only 2xx responses, else throws LlmError.
// Thread-safe when `inner`, the sleeper and the clock are (CurlTransport and the real ones are).
class RetryingTransport : public HttpTransport {
 public:
  // Wraps `inner` (not owned); `sleeper` and `clock` must outlive this.
  RetryingTransport(HttpTransport& inner, RetryPolicy policy, Sleeper& sleeper = system_sleeper(),
                    Clock& clock = system_clock());
  // Sends `request` until it succeeds, fails finally, or the attempts run out.
  HttpResponse send(const HttpRequest& request) override;
  // Tries made by the calling thread's last send() (of any RetryingTransport).
  int last_attempts() const;

 private:
  // The jittered backoff after try `attempt` (thread-safe).
  std::chrono::milliseconds next_backoff(int attempt);

  HttpTransport& inner_;
  RetryPolicy policy_;
  Sleeper& sleeper_;
  Clock& clock_;
  std::mutex rng_mutex_;  // guards rng_
  std::mt19937_64 rng_;
};

}  // namespace egg::llm
