#include "verify_result.h"

#include <array>
#include <limits>
#include <utility>

namespace egg::harness {
namespace {

constexpr std::array<std::pair<VerifyStatus, std::string_view>, 20> kNames{{
    {VerifyStatus::verified, "verified"},
    {VerifyStatus::mismatch, "mismatch"},
    {VerifyStatus::nan_output, "nan_output"},
    {VerifyStatus::constant_output, "constant_output"},
    {VerifyStatus::cached_result, "cached_result"},
    {VerifyStatus::input_modified, "input_modified"},
    {VerifyStatus::out_of_bounds, "out_of_bounds"},
    {VerifyStatus::nondeterministic, "nondeterministic"},
    {VerifyStatus::side_stream, "side_stream"},
    {VerifyStatus::launch_error, "launch_error"},
    {VerifyStatus::sanitizer, "sanitizer"},
    {VerifyStatus::forbidden_source, "forbidden_source"},
    {VerifyStatus::load_error, "load_error"},
    {VerifyStatus::crash, "crash"},
    {VerifyStatus::timeout, "timeout"},
    {VerifyStatus::spec_error, "spec_error"},
    {VerifyStatus::no_gpu, "no_gpu"},
    {VerifyStatus::harness_error, "harness_error"},
    {VerifyStatus::gpu_busy, "gpu_busy"},
    {VerifyStatus::too_large, "too_large"},
}};

nlohmann::json percentiles_json(const Percentiles& p) {
  return {{"median", p.median}, {"p10", p.p10}, {"p90", p.p90}};
}

// JSON has no NaN or infinity: nlohmann writes them as null, and null reads back as NaN.
double num(const nlohmann::json& j, const char* key, double fallback = 0.0) {
  if (!j.contains(key)) return fallback;
  const auto& v = j[key];
  return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

// An integer field: absent gives the fallback; a number that is not an integer of T's range (a
// float such as 7.8e51, which a plain get<T>() would convert with undefined behaviour) or any other
// type is a type error, as for every malformed field of a result file.
template <typename T>
T whole(const nlohmann::json& j, const char* key, T fallback) {
  if (!j.contains(key)) return fallback;
  const auto& v = j[key];
  if (v.is_number_integer()) {
    if (v.is_number_unsigned()
            ? v.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<T>::max())
            : v.get<std::int64_t>() >= std::int64_t(std::numeric_limits<T>::min()) &&
                  v.get<std::int64_t>() <= std::int64_t(std::numeric_limits<T>::max()))
      return static_cast<T>(v.is_number_unsigned()
                                ? static_cast<std::int64_t>(v.get<std::uint64_t>())
                                : v.get<std::int64_t>());
  }
  throw nlohmann::json::type_error::create(
      302, std::string("field '") + key + "' must be an integer in range", &j);
}

Percentiles percentiles_from(const nlohmann::json& j) {
  return {num(j, "median"), num(j, "p10"), num(j, "p90")};
}

nlohmann::json kernels_json(const std::vector<KernelTime>& ks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& k : ks) out.push_back({{"name", k.name}, {"median_ms", k.median_ms}});
  return out;
}

std::vector<KernelTime> kernels_from(const nlohmann::json& j) {
  std::vector<KernelTime> out;
  if (!j.is_array()) return out;
  for (const auto& k : j) out.push_back({k.value("name", std::string()), num(k, "median_ms")});
  return out;
}

}  // namespace

std::string_view status_name(VerifyStatus s) {
  for (const auto& [status, name] : kNames)
    if (status == s) return name;
  return "harness_error";
}

std::optional<VerifyStatus> status_from_name(std::string_view name) {
  for (const auto& [status, n] : kNames)
    if (n == name) return status;
  return std::nullopt;
}

bool is_candidate_failure(VerifyStatus s) {
  switch (s) {
    case VerifyStatus::verified:
    case VerifyStatus::spec_error:
    case VerifyStatus::no_gpu:
    case VerifyStatus::harness_error:
    case VerifyStatus::gpu_busy:
      return false;
    default:
      return true;
  }
}

nlohmann::json to_json(const VerifyResult& r) {
  nlohmann::json j = {
      {"schema", 1},
      {"status", std::string(status_name(r.status))},
      {"message", r.message},
      {"output", r.output},
      {"max_abs_error", r.max_abs_error},
      {"max_rel_error", r.max_rel_error},
      {"first_bad_index", r.first_bad_index},
      {"bad_value", r.bad_value},
      {"ref_value", r.ref_value},
      {"bad_count", r.bad_count},
      {"tolerance", {{"atol", r.atol}, {"rtol", r.rtol}}},
      {"sets_checked", r.sets_checked},
      {"deterministic_bitwise", r.deterministic_bitwise},
      {"sanitizer", r.sanitizer},
      {"phases_ms", r.phases_ms},
      {"gpu",
       {{"name", r.gpu.name},
        {"cc", r.gpu.cc},
        {"driver", r.gpu.driver},
        {"runtime", r.gpu.runtime}}},
      {"files", r.files},
  };
  if (r.timing) {
    const Timing& t = *r.timing;
    j["timing"] = {{"event_ms", percentiles_json(t.event_ms)},
                   {"cupti_kernel_ms", percentiles_json(t.cupti_kernel_ms)},
                   {"kernels_per_launch", t.kernels_per_launch},
                   {"kernels", kernels_json(t.kernels)},
                   {"trials", t.trials},
                   {"warmups", t.warmups},
                   {"l2_flush_bytes", t.l2_flush_bytes},
                   {"bytes_moved", t.bytes_moved},
                   {"achieved_gbps", t.achieved_gbps},
                   {"copy_gbps", t.copy_gbps},
                   {"method", t.method},
                   {"hold_timeouts", t.hold_timeouts},
                   {"cut_short", t.cut_short}};
  }
  if (r.accuracy) {
    const AccuracyRecord& a = *r.accuracy;
    j["accuracy"] = {{"mode", a.mode},
                     {"output", a.output},
                     {"factor", a.factor},
                     {"judged", a.judged},
                     {"passed", a.passed},
                     {"torch_max_abs_error", a.torch_max_abs_error},
                     {"kernel_max_abs_error", a.kernel_max_abs_error},
                     {"torch_mean_abs_error", a.torch_mean_abs_error},
                     {"kernel_mean_abs_error", a.kernel_mean_abs_error}};
  }
  if (!r.float64_unavailable.empty()) j["float64_unavailable"] = r.float64_unavailable;
  if (!r.repro.empty()) j["repro"] = r.repro;
  if (!r.work_dir.empty()) j["work_dir"] = r.work_dir;
  j["exit_code"] = r.exit_code;
  return j;
}

VerifyResult result_from_json(const nlohmann::json& j) {
  VerifyResult r;
  const std::string status = j.at("status").get<std::string>();
  const auto parsed = status_from_name(status);
  if (!parsed)
    throw nlohmann::json::other_error::create(501, "unknown status '" + status + "'", &j);
  r.status = *parsed;
  r.message = j.value("message", "");
  r.output = j.value("output", "");
  r.max_abs_error = num(j, "max_abs_error");
  r.max_rel_error = num(j, "max_rel_error");
  r.first_bad_index = whole<std::int64_t>(j, "first_bad_index", -1);
  r.bad_value = num(j, "bad_value");
  r.ref_value = num(j, "ref_value");
  r.bad_count = whole<std::int64_t>(j, "bad_count", 0);
  if (j.contains("tolerance")) {
    r.atol = num(j["tolerance"], "atol");
    r.rtol = num(j["tolerance"], "rtol");
  }
  r.sets_checked = whole<int>(j, "sets_checked", 0);
  r.deterministic_bitwise = j.value("deterministic_bitwise", true);
  r.sanitizer = j.value("sanitizer", "not run");
  r.phases_ms = j.value("phases_ms", nlohmann::json::object());
  if (j.contains("gpu")) {
    const auto& g = j["gpu"];
    r.gpu = {g.value("name", ""), g.value("cc", ""), g.value("driver", ""), g.value("runtime", "")};
  }
  r.files = j.value("files", std::vector<std::string>{});
  if (j.contains("timing")) {
    const auto& t = j["timing"];
    Timing timing;
    timing.event_ms = percentiles_from(t.value("event_ms", nlohmann::json::object()));
    timing.cupti_kernel_ms = percentiles_from(t.value("cupti_kernel_ms", nlohmann::json::object()));
    timing.kernels_per_launch = num(t, "kernels_per_launch");
    timing.kernels = kernels_from(t.value("kernels", nlohmann::json::array()));
    timing.trials = whole<int>(t, "trials", 0);
    timing.warmups = whole<int>(t, "warmups", 0);
    timing.l2_flush_bytes = whole<std::int64_t>(t, "l2_flush_bytes", 0);
    timing.bytes_moved = whole<std::int64_t>(t, "bytes_moved", 0);
    timing.achieved_gbps = num(t, "achieved_gbps");
    timing.copy_gbps = num(t, "copy_gbps");
    timing.method = t.value("method", std::string("events"));
    timing.hold_timeouts = whole<int>(t, "hold_timeouts", 0);
    timing.cut_short = t.value("cut_short", false);
    r.timing = timing;
  }
  if (j.contains("accuracy") && j["accuracy"].is_object()) {
    const auto& a = j["accuracy"];
    AccuracyRecord rec;
    rec.mode = a.value("mode", std::string("auto"));
    rec.output = a.value("output", std::string());
    rec.factor = num(a, "factor", 2.0);
    rec.judged = whole<int>(a, "judged", 0);
    rec.passed = a.value("passed", true);
    rec.torch_max_abs_error = num(a, "torch_max_abs_error");
    rec.kernel_max_abs_error = num(a, "kernel_max_abs_error");
    rec.torch_mean_abs_error = num(a, "torch_mean_abs_error");
    rec.kernel_mean_abs_error = num(a, "kernel_mean_abs_error");
    r.accuracy = rec;
  }
  r.float64_unavailable = j.value("float64_unavailable", std::string());
  r.repro = j.value("repro", "");
  r.work_dir = j.value("work_dir", "");
  r.exit_code = whole<int>(j, "exit_code", 0);
  return r;
}

}  // namespace egg::harness
