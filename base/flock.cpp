#include "base/flock.h"

#include <sys/file.h>

#include <cerrno>

namespace egg {

int flock_retrying(int fd, int op) {
  int rc;
  while ((rc = ::flock(fd, op)) != 0 && errno == EINTR) {
  }
  return rc;
}

}  // namespace egg
