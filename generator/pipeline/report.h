// `egg-gen report`: an HTML page of generated kernels or a bench run. The page is drawn by EGG's
// Python side (python/egg_report: matplotlib plots inlined as SVG), run as a child process.
#pragma once

#include <filesystem>

#include "util/process.h"

namespace egg::pipeline {

// What the report needs: the Python with matplotlib, EGG's data folder (python/ inside it), the
// folder (or bench rows .jsonl file) to show, and the page to write.
struct ReportRequest {
  std::filesystem::path python;
  std::filesystem::path data_dir;
  std::filesystem::path source;
  std::filesystem::path html;
};

// Writes the page. Throws UserError (the report's own message and hint) when the input cannot be
// shown or matplotlib is missing, InternalError when the report fails otherwise.
void write_report(ProcessRunner& runner, const ReportRequest& request);

}  // namespace egg::pipeline
