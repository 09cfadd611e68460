#include "verify/ncu.h"

#include <map>
#include <sstream>
#include <vector>

namespace egg::verify {
namespace {

// Splits one CSV line with double-quoted fields ("" is a quote inside a field).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// "1,234.5" → 1234.5; nullopt-like NaN when it is not a number.
bool to_number(std::string s, double& v) {
  std::string digits;
  for (char c : s)
    if (c != ',') digits += c;
  try {
    size_t used = 0;
    v = std::stod(digits, &used);
    return used == digits.size();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

nlohmann::json parse_ncu_csv(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  int col_id = -1, col_name = -1, col_unit = -1, col_value = -1;
  // Metrics per kernel launch (ID), in order.
  std::map<std::string, nlohmann::json> per_kernel;
  while (std::getline(in, line)) {
    auto f = csv_fields(line);
    if (col_name < 0) {
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] == "ID") col_id = static_cast<int>(i);
        if (f[i] == "Metric Name") col_name = static_cast<int>(i);
        if (f[i] == "Metric Unit") col_unit = static_cast<int>(i);
        if (f[i] == "Metric Value") col_value = static_cast<int>(i);
      }
      if (col_value < 0) col_name = -1;  // not the header yet (ncu prints its own lines first)
      continue;
    }
    const int need = std::max({col_id, col_name, col_unit, col_value});
    if (static_cast<int>(f.size()) <= need) continue;
    double v = 0;
    if (!to_number(f[col_value], v)) continue;
    const std::string id = col_id >= 0 ? f[col_id] : "0";
    per_kernel[id][f[col_name]] = {{"value", v}, {"unit", col_unit >= 0 ? f[col_unit] : ""}};
  }
  nlohmann::json best = nlohmann::json::object();
  double longest = -1;
  for (const auto& [id, metrics] : per_kernel) {
    double t = 0;
    if (metrics.contains("gpu__time_duration.sum")) {
      // ncu picks the unit per kernel (nsecond, usecond, msecond, second): compare in nanoseconds.
      const auto& d = metrics["gpu__time_duration.sum"];
      const std::string unit = d.value("unit", "nsecond");
      const double scale = unit == "usecond"   ? 1e3
                           : unit == "msecond" ? 1e6
                           : unit == "second"  ? 1e9
                                               : 1.0;
      t = d["value"].get<double>() * scale;
    }
    if (t > longest) {
      longest = t;
      best = metrics;
    }
  }
  return best;
}

}  // namespace egg::verify
