#include <signal.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <chrono>
#include <random>
#include <thread>

#include "base/child_env.h"
#include "base/termination.h"
#include "util/error.h"
#include "util/files.h"
#include "util/log.h"
#include "util/process.h"
#include "verify/references.h"

namespace egg::verify {
namespace fs = std::filesystem;
namespace bp = boost::process;
using nlohmann::json;

namespace {

// A short socket path (sun_path holds 108 bytes; work folders can be long).
fs::path socket_path() {
  std::random_device rd;
  std::mt19937_64 gen(rd());
  char name[64];
  std::snprintf(name, sizeof name, "egg-ref-%d-%016llx.sock", static_cast<int>(getpid()),
                static_cast<unsigned long long>(gen()));
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec || tmp.string().size() > 60) tmp = "/tmp";
  return tmp / name;
}

std::string tail(const std::string& text, size_t max_chars = 2000) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
}

class ReferenceServer : public References {
 public:
  explicit ReferenceServer(const ReferenceRequest& r)
      : request_(r),
        socket_(socket_path()),
        ready_(r.log_dir / "ready.json"),
        log_(r.log_dir / "server.log") {
    fs::create_directories(r.log_dir);
    std::error_code ec;
    fs::remove(ready_, ec);
    // op.py is user code: the allowlisted environment of every child (base/child_env.h).
    bp::environment env;
    for (const auto& [k, v] : child_environment()) env[k] = v;
    env["PYTHONPATH"] = (r.data_dir / "python").string();
    env["PYTHONDONTWRITEBYTECODE"] = "1";
    env["PYTHONUNBUFFERED"] = "1";
    const std::vector<std::string> args = {"-m",
                                           "egg_frontend",
                                           "serve",
                                           "--op",
                                           r.op_file.string(),
                                           "--spec",
                                           r.spec_json.string(),
                                           "--socket",
                                           socket_.string(),
                                           "--ready",
                                           ready_.string(),
                                           "--seeds",
                                           std::to_string(r.seeds),
                                           "--ref-device",
                                           r.device};
    repro_ = r.python.string();
    for (const auto& a : args) repro_ += " " + a;
    // Its own process group, SIGKILL when egg-gen dies, killed on SIGINT/SIGTERM (termination.h).
    const pid_t self = getpid();
    child_ = bp::child(
        bp::exe = r.python.string(), bp::args = args,
        bp::std_in<stdin_, (bp::std_out & bp::std_err)> log_.string(), bp::env(env), group_,
        bp::extend::on_exec_setup = [self](auto&) { prepare_child_after_fork(self); }, ec);
    if (ec)
      start_error_ = ec.message();
    else
      track_child_group(child_.id());
    started_ = std::chrono::steady_clock::now();
  }

  ~ReferenceServer() override {
    // Closing stdin ends the server; the group kill covers a server stuck in op.py.
    stdin_.close();
    std::error_code ec;
    for (int i = 0; i < 40 && child_.valid() && child_.running(ec); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    if (child_.valid() && child_.running(ec)) group_.terminate(ec);
    if (child_.valid()) {
      child_.wait(ec);
      untrack_child_group(child_.id());
    }
    fs::remove(socket_, ec);
  }

  fs::path endpoint() override {
    if (!stats_.empty()) return socket_;
    if (!start_error_.empty())
      throw UserError(
          "cannot start the reference server (" + request_.python.string() + "): " + start_error_,
          "set EGG_PYTHON (CMake) or --python to an interpreter that has torch installed");
    auto next_note = std::chrono::seconds(15);
    while (true) {
      if (auto text = read_file(ready_)) {
        json j = json::parse(*text, nullptr, false);
        if (!j.is_discarded()) return take(j);
      }
      std::error_code ec;
      if (!child_.running(ec)) {
        if (auto text = read_file(ready_)) {
          json j = json::parse(*text, nullptr, false);
          if (!j.is_discarded()) return take(j);
        }
        throw InternalError("the reference server exited (code " +
                            std::to_string(child_.exit_code()) + ") before it was ready:\n" +
                            tail(read_file(log_).value_or("")) + "\nrepro: " + repro_ +
                            "\nplease report this as a bug in EGG");
      }
      const auto waited = std::chrono::steady_clock::now() - started_;
      if (waited > next_note) {
        log::info("still computing the reference outputs of " +
                  request_.op_file.filename().string() + " after " +
                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(waited).count()) +
                  " s");
        next_note += std::chrono::seconds(15);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  json stats() const override { return stats_; }

 private:
  fs::path take(const json& j) {
    if (j.value("ok", false)) {
      stats_ = j;
      return socket_;
    }
    const std::string message = j.value("message", std::string("the reference server failed"));
    if (j.value("kind", "") == "user")
      throw UserError(SourceLocation{j.value("file", request_.op_file.string()), j.value("line", 0),
                                     j.value("op", "")},
                      message, j.value("hint", ""));
    throw InternalError("the reference server failed: " + message + "\n" +
                        tail(read_file(log_).value_or("")) + "\nrepro: " + repro_ +
                        "\nplease report this as a bug in EGG");
  }

  ReferenceRequest request_;
  fs::path socket_, ready_, log_;
  std::string repro_, start_error_;
  bp::opstream stdin_;
  bp::group group_;
  bp::child child_;
  std::chrono::steady_clock::time_point started_;
  json stats_;
};

}  // namespace

std::unique_ptr<References> start_reference_server(const ReferenceRequest& request) {
  return std::make_unique<ReferenceServer>(request);
}

}  // namespace egg::verify
