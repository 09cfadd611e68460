// `egg-gen bench`: generate + verify every op.py of some files or folders and report a table
// (op, verified, kernel/eager/compile ms, speedups, achieved bandwidth) with a summary (correct
// rate, fast_1 against eager and torch.compile, geomean speedups) as text, JSON and Markdown.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace egg::pipeline {

// The op.py files named by `paths` (files as given; folders: their *.py, recursively, sorted).
std::vector<std::filesystem::path> collect_ops(const std::vector<std::filesystem::path>& paths);

// Each op's kernel name, which is also its output folder and its row: the file's stem, unless
// several ops share it (a folder of models, each `<model>/op.py`); those are named
// `<folder>_<stem>`, and a name still shared gets `_2`, `_3`... in order. Unique, so parallel
// generations never write into one folder.
std::vector<std::string> bench_names(const std::vector<std::filesystem::path>& ops);

// One row from a generated kernel's manifest (or from the error that stopped it).
nlohmann::json bench_row(const std::string& op, const nlohmann::json& manifest, double generate_s);
nlohmann::json bench_error_row(const std::string& op, const std::string& error, double generate_s);

// Rows and summary as one JSON document.
nlohmann::json bench_report(const nlohmann::json& rows, const std::string& gpu, double copy_gbps);

// The report as a fixed-width text table and as Markdown.
std::string bench_text(const nlohmann::json& report);
std::string bench_markdown(const nlohmann::json& report);

}  // namespace egg::pipeline
