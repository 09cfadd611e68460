#include "cache/key_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/flock.h"

namespace egg::cache {
namespace fs = std::filesystem;

namespace {

long holder_of(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  return n > 0 ? std::strtol(buf, nullptr, 10) : 0;
}

}  // namespace

KeyLock::KeyLock(const fs::path& root, const std::string& key,
                 const std::function<void(long)>& on_wait) {
  std::error_code ec;
  const fs::path dir = root / "locks";
  fs::create_directories(dir, ec);
  const fs::path file = dir / (key + ".lock");
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    error_ = "cannot open " + file.string() + ": " + std::strerror(errno);
    return;
  }
  if (flock_retrying(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      error_ = "cannot lock " + file.string() + ": " + std::strerror(errno);
      ::close(fd_);
      fd_ = -1;
      return;
    }
    waited_ = true;
    if (on_wait) on_wait(holder_of(fd_));
    if (flock_retrying(fd_, LOCK_EX) != 0) {
      error_ = "cannot lock " + file.string() + ": " + std::strerror(errno);
      ::close(fd_);
      fd_ = -1;
      return;
    }
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid only names the holder in a waiter's message.
  }
}

KeyLock::~KeyLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

}  // namespace egg::cache
