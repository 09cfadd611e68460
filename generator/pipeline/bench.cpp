#include "pipeline/bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "contract/contract.h"
#include "pipeline/generate.h"

namespace egg::pipeline {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string fmt(const json& v, const char* spec = "%.3f") {
  if (!v.is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), spec, v.get<double>());
  return buf;
}

// The row's value for `key`, or null when the row has none (error rows, older reports).
json field(const json& row, const char* key) {
  return row.contains(key) ? row[key] : json(nullptr);
}

// A summary fraction (0..1) as a percentage, null where the summary has none.
json percent(const json& s, const char* key) {
  const json v = field(s, key);
  return v.is_number() ? json(v.get<double>() * 100) : json(nullptr);
}

double geomean(const std::vector<double>& xs) {
  if (xs.empty()) return 0;
  double s = 0;
  for (double x : xs) s += std::log(x);
  return std::exp(s / xs.size());
}

}  // namespace

std::vector<std::string> bench_names(const std::vector<fs::path>& ops) {
  std::map<std::string, int> stems;
  for (const auto& op : ops) ++stems[default_name(op)];
  std::vector<std::string> names;
  std::set<std::string> taken;
  for (const auto& op : ops) {
    std::string name = default_name(op);
    if (stems[name] > 1)
      name =
          contract::c_identifier(op.parent_path().filename().string() + "_" + op.stem().string());
    const std::string base = name;
    for (int k = 2; !taken.insert(name).second; ++k) name = base + "_" + std::to_string(k);
    names.push_back(name);
  }
  return names;
}

std::vector<fs::path> collect_ops(const std::vector<fs::path>& paths) {
  std::vector<fs::path> ops;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> found;
      for (const auto& e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file() && e.path().extension() == ".py" &&
            e.path().filename().string()[0] != '_')
          found.push_back(e.path());
      std::sort(found.begin(), found.end());
      ops.insert(ops.end(), found.begin(), found.end());
    } else {
      ops.push_back(p);
    }
  }
  return ops;
}

json bench_row(const std::string& op, const json& m, double generate_s) {
  json row = {{"op", op}, {"generate_s", generate_s}};
  std::string state = "unverified", reason;
  for (auto it = m["status"].begin(); it != m["status"].end(); ++it) {
    state = it->value("state", "");
    reason = it->value("reason", "");
    if (state == "verified") break;
  }
  row["verified"] = state == "verified";
  row["status"] = reason.empty() ? state : state + ": " + reason;
  const json& t = m.value("timing", json::object());
  for (const char* k :
       {"kernel_ms", "eager_ms", "compile_ms", "speedup_vs_eager", "speedup_vs_compile",
        "achieved_gbps", "eager_device_ms", "compile_device_ms", "speedup_vs_eager_device",
        "speedup_vs_compile_device", "library_gemm_ms", "pct_of_library_gemm",
        "compile_max_autotune_ms", "speedup_vs_compile_max_autotune",
        "compile_max_autotune_device_ms", "speedup_vs_compile_max_autotune_device"})
    row[k] = t.contains(k) ? t[k] : json(nullptr);
  // Slower than eager beyond the noise, said (pipeline/eager_floor.h).
  row["vs_eager"] = m.value("vs_eager", json::object()).value("verdict", "not_measured");
  row["candidate"] = m.value("candidate", "");
  // The copy bandwidth egg-harness measured beside the stage-2 winner, as this GPU's ceiling;
  // and each stage's wall time (building, verifying and timing its candidates).
  for (const auto& stage : m.value("stages", json::array())) {
    const std::string step = stage.value("step", "");
    if ((step == "stage1" || step == "stage2") && stage.contains("seconds"))
      row[step + "_s"] = stage["seconds"];
    const json& t2 = stage.value("profile", json::object())
                         .value("harness", json::object())
                         .value("timing", json::object());
    if (t2.contains("copy_gbps") && t2["copy_gbps"].is_number() &&
        t2["copy_gbps"].get<double>() > 0)
      row["copy_gbps"] = t2["copy_gbps"];
  }
  return row;
}

json bench_error_row(const std::string& op, const std::string& error, double generate_s) {
  return {{"op", op},
          {"verified", false},
          {"status", "failed: " + error.substr(0, error.find('\n'))},
          // The rest (e.g. every candidate's failure class and first line), bounded.
          {"detail", error.substr(0, 4000)},
          {"generate_s", generate_s},
          {"kernel_ms", nullptr},
          {"eager_ms", nullptr},
          {"compile_ms", nullptr},
          {"speedup_vs_eager", nullptr},
          {"speedup_vs_compile", nullptr},
          {"achieved_gbps", nullptr}};
}

json bench_report(const json& rows, const std::string& gpu, double copy_gbps) {
  int verified = 0, fast_eager = 0, fast_compile = 0, fast_eager_dev = 0, fast_compile_dev = 0;
  int fast_tuned = 0, slower_than_eager = 0;
  std::vector<double> se, sc, sed, scd, st;
  json out_rows = json::array();
  for (auto row : rows) {
    if (row.value("verified", false)) ++verified;
    if (row["speedup_vs_eager"].is_number()) {
      se.push_back(row["speedup_vs_eager"].get<double>());
      if (row.value("verified", false) && se.back() > 1.0) ++fast_eager;
    }
    if (row["speedup_vs_compile"].is_number()) {
      sc.push_back(row["speedup_vs_compile"].get<double>());
      if (row.value("verified", false) && sc.back() > 1.0) ++fast_compile;
    }
    if (field(row, "speedup_vs_compile_max_autotune").is_number()) {
      st.push_back(row["speedup_vs_compile_max_autotune"].get<double>());
      if (row.value("verified", false) && st.back() > 1.0) ++fast_tuned;
    }
    if (row.value("vs_eager", "") == "slower") ++slower_than_eager;
    if (row.value("verified", false) && field(row, "speedup_vs_eager_device").is_number()) {
      sed.push_back(row["speedup_vs_eager_device"].get<double>());
      if (sed.back() > 1.0) ++fast_eager_dev;
    }
    if (row.value("verified", false) && field(row, "speedup_vs_compile_device").is_number()) {
      scd.push_back(row["speedup_vs_compile_device"].get<double>());
      if (scd.back() > 1.0) ++fast_compile_dev;
    }
    const double ceiling = copy_gbps > 0 ? copy_gbps : row.value("copy_gbps", 0.0);
    if (ceiling > 0 && row["achieved_gbps"].is_number())
      row["pct_of_copy_bw"] = 100.0 * row["achieved_gbps"].get<double>() / ceiling;
    out_rows.push_back(row);
  }
  const double n = rows.empty() ? 1 : static_cast<double>(rows.size());
  return {
      {"gpu", gpu},
      {"copy_gbps", copy_gbps},
      {"rows", out_rows},
      {"summary",
       {{"ops", rows.size()},
        {"verified", verified},
        {"correct_rate", verified / n},
        {"fast_1_vs_eager", fast_eager / n},
        {"fast_1_vs_compile", fast_compile / n},
        {"geomean_speedup_vs_eager", se.empty() ? json(nullptr) : json(geomean(se))},
        {"geomean_speedup_vs_compile", sc.empty() ? json(nullptr) : json(geomean(sc))},
        // torch.compile's mode="max-autotune-no-cudagraphs".
        {"fast_1_vs_compile_max_autotune", st.empty() ? json(nullptr) : json(fast_tuned / n)},
        {"geomean_speedup_vs_compile_max_autotune", st.empty() ? json(nullptr) : json(geomean(st))},
        {"slower_than_eager", slower_than_eager},
        // Device time (the baselines' host overhead hidden): the fair kernel-to-kernel comparison.
        {"fast_1_vs_eager_device", sed.empty() ? json(nullptr) : json(fast_eager_dev / n)},
        {"fast_1_vs_compile_device", scd.empty() ? json(nullptr) : json(fast_compile_dev / n)},
        {"geomean_speedup_vs_eager_device", sed.empty() ? json(nullptr) : json(geomean(sed))},
        {"geomean_speedup_vs_compile_device", scd.empty() ? json(nullptr) : json(geomean(scd))}}}};
}

std::string bench_text(const json& r) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line), "%-34s %-9s %10s %10s %10s %10s %8s %8s %8s %8s\n", "op",
                "verified", "kernel_ms", "eager_ms", "compile_ms", "tuned_ms", "x_eager", "x_comp",
                "x_tuned", "GB/s");
  out += line;
  for (const auto& row : r["rows"]) {
    std::snprintf(line, sizeof(line), "%-34s %-9s %10s %10s %10s %10s %8s %8s %8s %8s\n",
                  row["op"].get<std::string>().c_str(), row.value("verified", false) ? "yes" : "NO",
                  fmt(row["kernel_ms"], "%.4f").c_str(), fmt(row["eager_ms"], "%.4f").c_str(),
                  fmt(row["compile_ms"], "%.4f").c_str(),
                  fmt(field(row, "compile_max_autotune_ms"), "%.4f").c_str(),
                  fmt(row["speedup_vs_eager"], "%.2f").c_str(),
                  fmt(row["speedup_vs_compile"], "%.2f").c_str(),
                  fmt(field(row, "speedup_vs_compile_max_autotune"), "%.2f").c_str(),
                  fmt(row["achieved_gbps"], "%.0f").c_str());
    out += line;
    if (row.value("vs_eager", "") == "slower") out += "    slower than eager beyond 3 % noise\n";
    if (!row.value("verified", false)) out += "    " + row.value("status", "") + "\n";
  }
  const json& s = r["summary"];
  out += "\nops " + std::to_string(s["ops"].get<int>()) + ", verified " +
         std::to_string(s["verified"].get<int>()) + " (" +
         fmt(s["correct_rate"].get<double>() * 100, "%.0f") + "%), fast_1 vs eager " +
         fmt(s["fast_1_vs_eager"].get<double>() * 100, "%.0f") + "%, vs torch.compile " +
         fmt(s["fast_1_vs_compile"].get<double>() * 100, "%.0f") + "%, geomean speedup vs eager " +
         fmt(s["geomean_speedup_vs_eager"], "%.2f") + "x, vs torch.compile " +
         fmt(s["geomean_speedup_vs_compile"], "%.2f") + "x, vs max-autotune-no-cudagraphs " +
         fmt(field(s, "geomean_speedup_vs_compile_max_autotune"), "%.2f") +
         "x; slower than eager " + std::to_string(s.value("slower_than_eager", 0)) + "\n";
  if (field(s, "geomean_speedup_vs_eager_device").is_number())
    out += "device time (host overhead hidden): fast_1 vs eager " +
           fmt(percent(s, "fast_1_vs_eager_device"), "%.0f") + "%, vs torch.compile " +
           fmt(percent(s, "fast_1_vs_compile_device"), "%.0f") + "%, geomean vs eager " +
           fmt(field(s, "geomean_speedup_vs_eager_device"), "%.2f") + "x, vs torch.compile " +
           fmt(field(s, "geomean_speedup_vs_compile_device"), "%.2f") + "x\n";
  return out;
}

std::string bench_markdown(const json& r) {
  std::string out = "GPU: " + r.value("gpu", std::string("none")) + "\n\n";
  out +=
      "| op | verified | kernel ms | eager ms | compile ms | max-autotune ms | vs eager | vs "
      "compile | vs max-autotune | vs eager (device) | vs compile (device) | GB/s | % copy BW |\n";
  out += "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& row : r["rows"])
    out += "| " + row["op"].get<std::string>() + " | " +
           (row.value("verified", false) ? "yes" : "NO: " + row.value("status", "")) + " | " +
           fmt(row["kernel_ms"], "%.4f") + " | " + fmt(row["eager_ms"], "%.4f") + " | " +
           fmt(row["compile_ms"], "%.4f") + " | " +
           fmt(field(row, "compile_max_autotune_ms"), "%.4f") + " | " +
           fmt(row["speedup_vs_eager"], "%.2f") + "x | " + fmt(row["speedup_vs_compile"], "%.2f") +
           "x | " + fmt(field(row, "speedup_vs_compile_max_autotune"), "%.2f") + "x | " +
           fmt(field(row, "speedup_vs_eager_device"), "%.2f") + "x | " +
           fmt(field(row, "speedup_vs_compile_device"), "%.2f") + "x | " +
           fmt(row["achieved_gbps"], "%.0f") + " | " +
           fmt(row.contains("pct_of_copy_bw") ? row["pct_of_copy_bw"] : json(nullptr), "%.0f") +
           " |\n";
  const json& s = r["summary"];
  out += "\nSummary: " + std::to_string(s["verified"].get<int>()) + "/" +
         std::to_string(s["ops"].get<int>()) + " verified; fast_1 vs eager " +
         fmt(s["fast_1_vs_eager"].get<double>() * 100, "%.0f") + "%, vs torch.compile " +
         fmt(s["fast_1_vs_compile"].get<double>() * 100, "%.0f") + "%; geomean speedup vs eager " +
         fmt(s["geomean_speedup_vs_eager"], "%.2f") + "x, vs torch.compile " +
         fmt(s["geomean_speedup_vs_compile"], "%.2f") +
         "x; device time (host overhead hidden): " + "faster than torch.compile on " +
         fmt(percent(s, "fast_1_vs_compile_device"), "%.0f") + "%, geomean " +
         fmt(field(s, "geomean_speedup_vs_eager_device"), "%.2f") + "x vs eager, " +
         fmt(field(s, "geomean_speedup_vs_compile_device"), "%.2f") + "x vs torch.compile.\n";
  return out;
}

}  // namespace egg::pipeline
