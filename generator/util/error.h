// Typed errors: user errors (bad op.py, bad arguments) and internal errors (bugs in EGG).
#pragma once

#include <stdexcept>
#include <string>

namespace egg {

// Where in the user's source a problem is; empty file means "not tied to a file".
struct SourceLocation {
  std::string file;
  int line = 0;
  std::string op;
};

// A problem the user can fix; the message says what to do. Maps to exit status 1.
class UserError : public std::runtime_error {
 public:
  UserError(SourceLocation where, std::string message, std::string hint = {})
      : std::runtime_error(message), where_(std::move(where)), hint_(std::move(hint)) {}
  explicit UserError(std::string message, std::string hint = {})
      : UserError(SourceLocation{}, std::move(message), std::move(hint)) {}

  const SourceLocation& where() const { return where_; }
  const std::string& hint() const { return hint_; }
  // "file:line: op: message" (the parts that are known).
  std::string describe() const;

 private:
  SourceLocation where_;
  std::string hint_;
};

// A bug in EGG or its environment; the message asks for a bug report. Maps to exit status 2.
class InternalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace egg
