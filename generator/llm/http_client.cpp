#include "llm/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

#include "llm/errors.h"

namespace egg::llm {
namespace {

// What the write/header callbacks fill in.
struct Sink {
  HttpResponse* response;
  std::size_t cap;
  bool overflow = false;
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const size_t n = size * count;
  if (sink->response->body.size() + n > sink->cap) {
    sink->overflow = true;
    return 0;  // makes libcurl stop with CURLE_WRITE_ERROR
  }
  sink->response->body.append(data, n);
  return n;
}

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const size_t n = size * count;
  std::string line(data, n);
  // A new status line (after 100 Continue, or a proxy's CONNECT reply) starts a new header set.
  if (line.rfind("HTTP/", 0) == 0) {
    sink->response->headers.clear();
    return n;
  }
  const auto colon = line.find(':');
  if (colon == std::string::npos) return n;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  sink->response->headers[trim(name)] = trim(line.substr(colon + 1));
  return n;
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The URL without its query string, safe for error messages.
std::string url_for_message(const std::string& url) { return url.substr(0, url.find('?')); }

[[noreturn]] void throw_transport_error(CURLcode code, const Sink& sink, const char* detail,
                                        const HttpRequest& request, const std::string& setting) {
  const std::string where = " (" + request.method + " " + url_for_message(request.url) + ")";
  const std::string what = std::string(curl_easy_strerror(code)) + (*detail ? ": " : "") + detail;
  if (sink.overflow || code == CURLE_FILESIZE_EXCEEDED) {
    throw LlmError(LlmErrorKind::too_large, "response larger than " + std::to_string(sink.cap) +
                                                " bytes" + where + "; check " + setting +
                                                " points at the right server");
  }
  if (code == CURLE_OPERATION_TIMEDOUT) {
    throw LlmError(LlmErrorKind::timeout, "no complete answer in time" + where + ": " + what);
  }
  if (code == CURLE_UNSUPPORTED_PROTOCOL || code == CURLE_URL_MALFORMAT) {
    throw LlmError(LlmErrorKind::config, "bad URL" + where + ": " + what + "; check " + setting +
                                             " (http:// or https://)");
  }
  throw LlmError(LlmErrorKind::connection, "connection failed" + where + ": " + what + "; check " +
                                               setting + " and the network");
}

struct EasyDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
struct ListDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

CurlTransport::CurlTransport(CurlOptions options) : options_(std::move(options)) { global_init(); }

HttpResponse CurlTransport::send(const HttpRequest& request) {
  std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
  if (!easy) throw LlmError(LlmErrorKind::connection, "curl_easy_init failed");
  CURL* h = easy.get();

  HttpResponse response;
  Sink sink{&response, options_.max_response_bytes};
  char detail[CURL_ERROR_SIZE] = {0};

  std::unique_ptr<curl_slist, ListDeleter> list;
  const auto add_header = [&list](const std::string& line) {
    curl_slist* next = curl_slist_append(list.get(), line.c_str());
    if (!next) throw LlmError(LlmErrorKind::connection, "out of memory building headers");
    (void)list.release();  // `next` is the same list, now one longer
    list.reset(next);
  };
  for (const auto& [name, value] : request.headers) add_header(name + ": " + value);
  // libcurl would otherwise add "Expect: 100-continue" to large POSTs; some servers stall on it.
  add_header("Expect:");

  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, list.get());
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, detail);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // thread-safe timeouts
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(request.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.total_timeout.count()));
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);  // a redirect must not carry the key elsewhere
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options_.ca_bundle.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options_.ca_bundle.c_str());
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  // An empty proxy string disables the http_proxy/https_proxy/all_proxy environment variables.
  curl_easy_setopt(h, CURLOPT_PROXY, options_.proxy ? options_.proxy->c_str() : "");
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(options_.max_response_bytes));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &sink);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // any encoding libcurl can decode

  if (request.method == "POST" || request.method == "PUT") {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    // PUT with a body from memory: a POST whose verb is replaced (the remote cache's uploads).
    if (request.method == "PUT") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else if (request.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else {
    throw LlmError(LlmErrorKind::config, "unsupported HTTP method " + request.method);
  }

  const CURLcode code = curl_easy_perform(h);
  if (code != CURLE_OK) throw_transport_error(code, sink, detail, request, options_.url_setting);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

}  // namespace egg::llm
