// Nsight Compute metrics for the profile agent, where `ncu` is installed and can read the counters.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace egg::verify {

// The metrics asked of ncu: memory and compute throughput (% of peak), achieved occupancy,
// duration.
inline constexpr const char* kNcuMetrics =
    "dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_"
    "elapsed,"
    "sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum";

// Parses `ncu --csv` output (the details page: one row per kernel and metric, with "Metric Name",
// "Metric Unit" and "Metric Value" columns) into {metric: {"value": v, "unit": u}} for the kernel
// that ran longest; an empty object when the text holds no metric rows.
nlohmann::json parse_ncu_csv(const std::string& csv);

}  // namespace egg::verify
