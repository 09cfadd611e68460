#include "llm/retry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include <nlohmann/json.hpp>

namespace egg::llm {
namespace {

using std::chrono::milliseconds;

class RealClock : public Clock {
 public:
  std::chrono::system_clock::time_point now() override { return std::chrono::system_clock::now(); }
};

class RealSleeper : public Sleeper {
 public:
  void sleep_for(milliseconds duration) override { std::this_thread::sleep_for(duration); }
};

// A uniform double in [0, 1) from 53 bits of `rng` (portable, unlike std distributions).
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

std::string url_for_message(const std::string& url) { return url.substr(0, url.find('?')); }

// The server's own error text, if the body is JSON with error.message (OpenAI, Anthropic, vLLM),
// else the start of the body; bounded so a huge page does not flood the log.
std::string server_says(const std::string& body) {
  std::string text;
  const auto json = nlohmann::json::parse(body, nullptr, false);
  if (!json.is_discarded() && json.is_object() && json.contains("error")) {
    const auto& error = json["error"];
    if (error.is_object() && error.contains("message") && error["message"].is_string()) {
      text = error["message"].get<std::string>();
    } else if (error.is_string()) {
      text = error.get<std::string>();
    }
  }
  if (text.empty()) text = body;
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  constexpr size_t kMax = 300;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text.empty() ? "" : "; server says: " + text;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
long days_from_civil(long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long>(doe) - 719468;
}

}  // namespace

Clock& system_clock() {
  static RealClock clock;
  return clock;
}

Sleeper& system_sleeper() {
  static RealSleeper sleeper;
  return sleeper;
}

milliseconds backoff_delay(const RetryPolicy& policy, int attempt, std::mt19937_64& rng) {
  const double base = static_cast<double>(policy.initial_backoff.count()) *
                      std::pow(policy.multiplier, std::max(0, attempt - 1));
  const double cap = static_cast<double>(policy.max_backoff.count());
  const double jittered =
      std::min(base, cap) * (1.0 - policy.jitter + 2.0 * policy.jitter * unit(rng));
  return milliseconds(static_cast<long long>(std::clamp(jittered, 0.0, cap)));
}

std::optional<milliseconds> parse_retry_after(std::string_view value,
                                              std::chrono::system_clock::time_point now) {
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front())))
    value.remove_prefix(1);
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
    value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (value.size() > 9) return std::nullopt;  // absurd; avoids overflow
    return milliseconds(std::stoll(std::string(value)) * 1000);
  }
  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
  char weekday[4] = {0}, month[4] = {0}, zone[4] = {0};
  int day = 0, year = 0, hour = 0, minute = 0, second = 0;
  const std::string text(value);
  if (std::sscanf(text.c_str(), "%3s, %d %3s %d %d:%d:%d %3s", weekday, &day, month, &year, &hour,
                  &minute, &second, zone) != 8 ||
      std::strcmp(zone, "GMT") != 0) {
    return std::nullopt;
  }
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  unsigned m = 0;
  for (unsigned i = 0; i < 12; ++i) {
    if (std::strcmp(month, kMonths[i]) == 0) m = i + 1;
  }
  if (m == 0 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  const long long epoch_s = days_from_civil(year, m, static_cast<unsigned>(day)) * 86400LL +
                            hour * 3600LL + minute * 60LL + second;
  const auto when = std::chrono::system_clock::time_point(std::chrono::seconds(epoch_s));
  const auto wait = std::chrono::duration_cast<milliseconds>(when - now);
  return std::max(wait, milliseconds(0));
}

bool is_retryable_status(long status) { return status == 408 || status == 429 || status >= 500; }

LlmError http_status_error(const HttpRequest& request, const HttpResponse& response) {
  const std::string at = " from " + url_for_message(request.url);
  const std::string code = "HTTP " + std::to_string(response.status);
  const std::string says = server_says(response.body);
  switch (response.status) {
    case 401:
      return LlmError(LlmErrorKind::auth,
                      code + at +
                          ": the API key was rejected; check EGG_LLM_API_KEY (or "
                          "OPENAI_API_KEY / ANTHROPIC_API_KEY for the backend)" +
                          says);
    case 403:
      return LlmError(LlmErrorKind::auth, code + at +
                                              ": access denied; check that the key in "
                                              "EGG_LLM_API_KEY may use this model and endpoint" +
                                              says);
    case 404:
      return LlmError(LlmErrorKind::not_found,
                      code + at + ": not found; check EGG_LLM_BASE_URL and the model name" + says);
    case 413:
      return LlmError(LlmErrorKind::bad_request,
                      code + at + ": request too large; shorten the prompt context" + says);
    case 429:
      return LlmError(LlmErrorKind::rate_limited,
                      code + at +
                          ": rate limited; check the account's quota, or lower "
                          "parallel generations" +
                          says);
    default:
      break;
  }
  if (response.status == 408) {
    return LlmError(LlmErrorKind::timeout, code + at + ": the server timed out" + says);
  }
  if (response.status >= 500) {
    return LlmError(LlmErrorKind::server_error,
                    code + at + ": server error; the service may be down, try later" + says);
  }
  return LlmError(LlmErrorKind::bad_request,
                  code + at +
                      ": request rejected; check the model name, MODEL options "
                      "(max_tokens, temperature) and EGG_LLM_BASE_URL" +
                      says);
}

RetryingTransport::RetryingTransport(HttpTransport& inner, RetryPolicy policy, Sleeper& sleeper,
                                     Clock& clock)
    : inner_(inner), policy_(policy), sleeper_(sleeper), clock_(clock), rng_(policy.seed) {}

std::chrono::milliseconds RetryingTransport::next_backoff(int attempt) {
  std::lock_guard<std::mutex> lock(rng_mutex_);
  return backoff_delay(policy_, attempt, rng_);
}

namespace {
thread_local int t_last_attempts = 0;  // tries of this thread's last send()
}  // namespace

int RetryingTransport::last_attempts() const { return t_last_attempts; }

HttpResponse RetryingTransport::send(const HttpRequest& request) {
  const int max_attempts = std::max(1, policy_.max_attempts);
  const auto gave_up = [](const LlmError& error, int attempts) {
    return LlmError(error.kind(),
                    error.message() + " (gave up after " + std::to_string(attempts) + " attempts)");
  };
  for (int attempt = 1;; ++attempt) {
    t_last_attempts = attempt;
    HttpResponse response;
    try {
      response = inner_.send(request);
    } catch (const LlmError& error) {
      const bool transient =
          error.kind() == LlmErrorKind::timeout || error.kind() == LlmErrorKind::connection;
      if (!transient) throw;
      if (attempt >= max_attempts) throw gave_up(error, attempt);
      sleeper_.sleep_for(next_backoff(attempt));
      continue;
    }
    if (response.status >= 200 && response.status < 300) return response;
    const LlmError error = http_status_error(request, response);
    if (!is_retryable_status(response.status)) throw error;
    if (attempt >= max_attempts) throw gave_up(error, attempt);
    std::optional<milliseconds> wait;
    if (response.status == 429 || response.status == 503) {
      const auto it = response.headers.find("retry-after");
      if (it != response.headers.end()) wait = parse_retry_after(it->second, clock_.now());
      if (wait && *wait > policy_.max_retry_after) {
        throw LlmError(error.kind(), error.message() + " (server asked to wait " +
                                         std::to_string(wait->count() / 1000) +
                                         " s, more than the limit)");
      }
    }
    sleeper_.sleep_for(wait ? *wait : next_backoff(attempt));
  }
}

}  // namespace egg::llm
