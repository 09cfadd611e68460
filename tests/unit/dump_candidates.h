// A manual aid shared by the family tests: every candidate of a family, written out for compiling
// with nvcc by hand (tools outside the unit run).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "backend/builtin/family.h"
#include "contract/contract.h"
#include "emit/emit.h"
#include "spec/spec.h"

namespace egg::testing {

// For each spec.json under `in` that `family` implements: its structures, the tunings ("memory"
// and "latency") of the first structure — of every structure when `tune_every_structure` — and the
// fallback of the first, written to out/<spec>/<n>.cu (with <n>.id and include/egg/k.h).
inline void dump_every_candidate(const backend::builtin::Family& family,
                                 const std::filesystem::path& data_dir, const char* in,
                                 const char* out, bool tune_every_structure = false) {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(in)) {
    if (entry.path().filename() != "spec.json") continue;
    auto s = spec::read_spec(entry.path());
    if (family.cannot_implement(s)) continue;
    const std::string name = entry.path().parent_path().filename().string();
    auto c = contract::derive(s, "k");
    auto cands = family.structures(s, c);
    const auto first = cands.front();
    const auto bases = tune_every_structure ? cands : decltype(cands){first};
    for (const auto& b : bases) {
      for (auto& t : family.tunings(s, c, b, "memory")) cands.push_back(t);
      for (auto& t : family.tunings(s, c, b, "latency")) cands.push_back(t);
    }
    if (auto fb = family.fallback(s, c, first)) cands.push_back(*fb);
    const auto dir = std::filesystem::path(out) / name;
    std::filesystem::create_directories(dir / "include" / "egg");
    for (size_t i = 0; i < cands.size(); ++i) {
      auto src = emit::render_sources(data_dir, c, cands[i], "builtin", "op.py");
      std::ofstream(dir / "include" / "egg" / "k.h") << src.header;
      std::ofstream(dir / (std::to_string(i) + ".cu")) << src.cu;
      std::ofstream(dir / (std::to_string(i) + ".id")) << cands[i].id;
    }
  }
}

}  // namespace egg::testing
