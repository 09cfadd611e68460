#include "fake_server.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

extern char** environ;

namespace egg::llm::testing {

FakeLlmServer::FakeLlmServer(const std::vector<nlohmann::json>& responses) {
  nlohmann::json scenario = {{"responses", responses}};
  std::string tmpl = (std::filesystem::temp_directory_path() / "egg-llm-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  const std::string scenario_path = dir_ + "/scenario.json";
  std::ofstream(scenario_path) << scenario.dump(2);

  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  const std::string python = EGG_TEST_PYTHON, script = EGG_FAKE_LLM_SERVER;
  const std::string record = dir_ + "/requests.jsonl";
  std::vector<char*> argv = {const_cast<char*>(python.c_str()), const_cast<char*>(script.c_str()),
                             const_cast<char*>(scenario_path.c_str()),
                             const_cast<char*>(record.c_str()), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw std::runtime_error("cannot start " + python);
  }
  pid_ = pid;

  // The first stdout line is the port; wait for it at most 20 s.
  std::string line;
  pollfd p{fds[0], POLLIN, 0};
  while (line.find('\n') == std::string::npos && poll(&p, 1, 20000) > 0) {
    char buf[64];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  port_ = std::atoi(line.c_str());
  if (port_ <= 0) {
    stop();
    throw std::runtime_error("fake_llm_server.py did not print its port");
  }
}

FakeLlmServer::~FakeLlmServer() { stop(); }

void FakeLlmServer::stop() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    dir_.clear();
  }
}

std::vector<nlohmann::json> FakeLlmServer::requests() const {
  std::vector<nlohmann::json> out;
  std::ifstream in(dir_ + "/requests.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

}  // namespace egg::llm::testing
