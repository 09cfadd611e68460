#include "util/log.h"

#include <cstdlib>
#include <iostream>

namespace egg::log {

Level level() {
  static const Level cached = [] {
    const char* v = std::getenv("EGG_LOG");
    std::string s = v ? v : "";
    if (s == "quiet") return Level::quiet;
    if (s == "debug") return Level::debug;
    return Level::info;
  }();
  return cached;
}

void error(const std::string& message) { std::cerr << "egg: error: " << message << std::endl; }
void warning(const std::string& message) { std::cerr << "egg: warning: " << message << std::endl; }
void info(const std::string& message) {
  if (level() >= Level::info) std::cerr << "egg: " << message << std::endl;
}
void debug(const std::string& message) {
  if (level() >= Level::debug) std::cerr << "egg: debug: " << message << std::endl;
}

}  // namespace egg::log
