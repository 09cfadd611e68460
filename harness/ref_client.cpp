#include "ref_client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

namespace egg::harness {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

cudaIpcMemHandle_t parse_handle(const std::string& hex) {
  cudaIpcMemHandle_t h{};
  if (hex.size() != 2 * sizeof(h.reserved))
    throw RefError("malformed IPC handle from the reference server", false);
  for (std::size_t i = 0; i < sizeof(h.reserved); ++i)
    h.reserved[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return h;
}

}  // namespace

RefClient::RefClient(const fs::path& socket, fs::path pause_marker)
    : pause_marker_(std::move(pause_marker)) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = socket.string();
  if (path.size() >= sizeof(addr.sun_path))
    throw RefError("the reference server's socket path is too long: " + path, false);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw RefError(std::string("socket(): ") + std::strerror(errno), false);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
    throw RefError("cannot reach the reference server at " + path + ": " + why +
                       " (egg-gen starts it; run egg-harness through egg-gen, or start `python3 -m "
                       "egg_frontend serve`)",
                   false);
  }
  const json info = json::parse(request(R"({"cmd": "info"})"));
  sets_ = info.value("sets", 0);
  need_bytes_ = info.value("need_bytes", std::size_t{0});
}

RefClient::~RefClient() {
  unmap();
  if (fd_ >= 0) ::close(fd_);
}

std::string RefClient::request(const std::string& line) {
  const std::string out = line + "\n";
  for (std::size_t sent = 0; sent < out.size();) {
    const ssize_t n = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw RefError(std::string("the reference server went away: ") + std::strerror(errno), false);
    sent += static_cast<std::size_t>(n);
  }
  const auto start = std::chrono::steady_clock::now();
  if (!pause_marker_.empty()) std::ofstream(pause_marker_) << getpid() << "\n";
  std::string reply;
  while (true) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      reply = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      break;
    }
    char chunk[1 << 14];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::error_code ec;
      if (!pause_marker_.empty()) fs::remove(pause_marker_, ec);
      throw RefError("the reference server closed the connection (it died: see its log)", false);
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
  std::error_code ec;
  if (!pause_marker_.empty()) fs::remove(pause_marker_, ec);
  waited_ms_ +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const json j = json::parse(reply, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw RefError("malformed reply from the reference server", false);
  if (!j.value("ok", false)) {
    const std::string kind = j.value("kind", "internal");
    throw RefError("reference server: " + j.value("error", std::string("failed")),
                   kind == "user" || kind == "spec");
  }
  return reply;
}

void RefClient::unmap() {
  for (auto& [hex, base] : mapped_) cudaIpcCloseMemHandle(base);
  mapped_.clear();
}

void RefClient::release() {
  if (!holding_) return;
  unmap();
  holding_ = false;
  exact_fetched_ = false;
  request(R"({"cmd": "release", "index": )" + std::to_string(current_.index) + "}");
}

std::vector<ServedTensor> RefClient::map_tensors(const json& list) {
  std::vector<ServedTensor> out;
  for (const auto& t : list) {
    ServedTensor st;
    st.name = t.value("name", "");
    st.dtype = t.value("dtype", "");
    st.shape = t.value("shape", std::vector<std::int64_t>{});
    st.bytes = t.value("bytes", std::size_t{0});
    if (st.bytes > 0) {
      const std::string hex = t.at("handle").get<std::string>();
      auto it = mapped_.find(hex);
      if (it == mapped_.end()) {
        void* base = nullptr;
        const cudaIpcMemHandle_t h = parse_handle(hex);
        const cudaError_t e = cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess);
        if (e != cudaSuccess)
          throw RefError(std::string("cudaIpcOpenMemHandle failed for '") + st.name +
                             "': " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e),
                         false);
        it = mapped_.emplace(hex, base).first;
      }
      st.ptr = static_cast<const std::byte*>(it->second) + t.at("offset").get<std::size_t>();
    }
    out.push_back(std::move(st));
  }
  return out;
}

const ServedSet& RefClient::fetch(int k) {
  release();
  const json j = json::parse(request(R"({"cmd": "set", "index": )" + std::to_string(k) + "}"));
  holding_ = true;
  exact_fetched_ = false;
  current_.index = k;
  ServedSet s;
  s.index = j.value("index", k);
  s.seed = j.value("seed", std::int64_t{k});
  s.declared = j.value("declared", k == 0);
  s.compute_ms = j.value("compute_ms", 0.0);
  s.wait_ms = j.value("wait_ms", 0.0);
  s.inputs = map_tensors(j.at("inputs"));
  s.params = map_tensors(j.at("params"));
  s.outputs = map_tensors(j.at("outputs"));
  current_ = std::move(s);
  return current_;
}

const ExactOutputs& RefClient::fetch_exact() {
  if (!holding_) throw RefError("fetch_exact() without a set fetched", false);
  if (exact_fetched_) return exact_;
  const json j =
      json::parse(request(R"({"cmd": "exact", "index": )" + std::to_string(current_.index) + "}"));
  ExactOutputs e;
  e.compute_ms = j.value("compute_ms", 0.0);
  e.why = j.value("why", std::string());
  if (j.contains("outputs") && j["outputs"].is_array()) {
    e.available = true;
    e.outputs = map_tensors(j["outputs"]);
  }
  exact_ = std::move(e);
  exact_fetched_ = true;
  return exact_;
}

}  // namespace egg::harness
