// Shell quoting for repro lines: what a user can paste into a POSIX shell to rerun a child.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace egg {

// `word` as one shell word: unchanged when it holds only characters no shell treats specially,
// else in single quotes (an embedded ' becomes '\'').
std::string shell_quote(std::string_view word);

// argv as one shell-quoted line.
std::string quote_command(const std::vector<std::string>& argv);

}  // namespace egg
