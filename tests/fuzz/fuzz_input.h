// What every fuzz target shares: the input as text, as JSON, or as a file a reader opens.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace egg::fuzz {

inline std::string text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The input parsed as JSON; discarded (is_discarded()) when it is not JSON.
inline nlohmann::json json(const uint8_t* data, size_t size) {
  return nlohmann::json::parse(text(data, size), nullptr, false);
}

// A folder of this fuzzer process (removed by the OS's tmp cleaning, never by a crash path).
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("egg-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Writes the input to scratch()/name and returns the path.
inline std::filesystem::path file(const std::string& name, const uint8_t* data, size_t size) {
  const auto p = scratch() / name;
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return p;
}

}  // namespace egg::fuzz
