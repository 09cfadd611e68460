// Starts tests/llm/fake_llm_server.py on loopback for one test, and reads what it received.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace egg::llm::testing {

// A running fake LLM server scripted by a scenario ({"responses": [...]}, see the .py file).
class FakeLlmServer {
 public:
  // Writes the scenario {"responses": responses} to a temp dir and starts the server; throws
  // std::runtime_error on failure.
  explicit FakeLlmServer(const std::vector<nlohmann::json>& responses);
  // Stops the server and removes the temp dir.
  ~FakeLlmServer();
  FakeLlmServer(const FakeLlmServer&) = delete;
  FakeLlmServer& operator=(const FakeLlmServer&) = delete;

  // "http://127.0.0.1:<port>".
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The requests received so far: {"method","path","headers","body"}.
  std::vector<nlohmann::json> requests() const;
  // A scratch directory removed with the server (for transcripts).
  const std::string& dir() const { return dir_; }

 private:
  // Kills the server and removes the temp dir (idempotent).
  void stop();

  std::string dir_;
  int pid_ = -1;
  int port_ = 0;
};

}  // namespace egg::llm::testing
