#include "util/error.h"

namespace egg {

std::string UserError::describe() const {
  std::string out;
  if (!where_.file.empty()) {
    out += where_.file;
    if (where_.line > 0) out += ":" + std::to_string(where_.line);
    out += ": ";
  }
  if (!where_.op.empty()) out += where_.op + ": ";
  out += what();
  return out;
}

}  // namespace egg
