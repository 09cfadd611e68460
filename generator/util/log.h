// Diagnostics on stderr with the `egg:` prefix; the level comes from EGG_LOG (quiet|info|debug).
#pragma once

#include <string>

namespace egg::log {

// Verbosity levels, lowest first.
enum class Level { quiet = 0, info = 1, debug = 2 };

// The level read once from EGG_LOG (default info).
Level level();
// "egg: error: ..." (always printed).
void error(const std::string& message);
// "egg: warning: ..." (always printed).
void warning(const std::string& message);
// "egg: ..." at info level.
void info(const std::string& message);
// "egg: debug: ..." at debug level.
void debug(const std::string& message);

}  // namespace egg::log
