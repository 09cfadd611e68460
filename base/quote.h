// Command-line text: shell quoting for repro lines (what a user can paste into a POSIX shell to
// rerun a child), and numbers written so that reading them back gives the same double.
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

// `v` as the shortest text that reads back as the same double (1e-07, where std::to_string writes
// 0.000000), for a child's command line or a cache key.
std::string exact_number(double v);

}  // namespace egg
