// HTTP requests and responses, the transport interface, and its libcurl implementation.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace egg::llm {

// One HTTP request; header values may hold secrets and are never logged.
struct HttpRequest {
  std::string method = "POST";                                          // GET, POST or PUT
  std::string url;                                                      // absolute http(s) URL
  std::vector<std::pair<std::string, std::string>> headers;             // sent in order
  std::string body;                                                     // sent as is
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};  // TCP+TLS setup limit
  std::chrono::milliseconds total_timeout{std::chrono::seconds(300)};   // whole exchange limit
};

// One HTTP response, whatever its status.
struct HttpResponse {
  long status = 0;                             // e.g. 200, 429
  std::map<std::string, std::string> headers;  // names lower-cased; a repeated name keeps the last
  std::string body;                            // raw body
};

// Sends one request and returns the response; throws LlmError for transport failures only
// (timeout, connection, too_large), never for an HTTP status.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Performs `request` once.
  virtual HttpResponse send(const HttpRequest& request) = 0;
};

// Options of the libcurl transport.
struct CurlOptions {
  std::size_t max_response_bytes = 8u << 20;     // larger bodies fail with LlmErrorKind::too_large
  std::optional<std::string> proxy;              // used only when set; http_proxy & co. are ignored
  std::string ca_bundle;                         // extra CA file; empty = system default
  std::string url_setting = "EGG_LLM_BASE_URL";  // what error messages tell the user to check
};

// HttpTransport over a libcurl easy handle: no shell, TLS verification on, no redirects,
// http/https only, proxies only when configured.
class CurlTransport : public HttpTransport {
 public:
  // Makes a transport with `options`; initializes libcurl once per process.
  explicit CurlTransport(CurlOptions options = {});
  // Performs `request` once.
  HttpResponse send(const HttpRequest& request) override;

 private:
  CurlOptions options_;
};

}  // namespace egg::llm
