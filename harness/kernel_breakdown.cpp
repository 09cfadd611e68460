#include "kernel_breakdown.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "base/stats.h"

namespace egg::harness {

std::string short_kernel_name(std::string_view mangled) {
  const std::string in(mangled);
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(in.c_str(), nullptr, nullptr, &status), &std::free);
  std::string name = status == 0 && demangled ? std::string(demangled.get()) : in;
  // Drop the parameter list: the last top-level "(...)" (template arguments may hold parentheses).
  if (!name.empty() && name.back() == ')') {
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') ++depth;
      if (name[i] == '(' && --depth == 0) {
        name.resize(i);
        break;
      }
    }
  }
  if (name.starts_with("void ")) name.erase(0, 5);
  constexpr std::size_t kMax = 160;
  if (name.size() > kMax) name = name.substr(0, kMax - 3) + "...";
  return name;
}

KernelBreakdown kernel_breakdown(const std::vector<KernelRecord>& records,
                                 const std::vector<std::uint64_t>& marks) {
  KernelBreakdown out;
  if (marks.size() < 2) return out;
  const std::size_t trials = marks.size() - 1;
  out.trial_ms.assign(trials, 0.0);
  std::vector<std::vector<const KernelRecord*>> by_trial(trials);
  for (const auto& k : records) {
    const auto it = std::upper_bound(marks.begin(), marks.end(), k.start);
    if (it == marks.begin() || it == marks.end()) continue;
    const auto t = static_cast<std::size_t>(it - marks.begin() - 1);
    out.trial_ms[t] += static_cast<double>(k.end - k.start) / 1e6;
    by_trial[t].push_back(&k);
    ++out.kernels;
  }
  for (auto& ks : by_trial)
    std::stable_sort(ks.begin(), ks.end(), [](const KernelRecord* a, const KernelRecord* b) {
      return a->start < b->start;
    });
  const std::size_t n = by_trial.front().size();
  const bool same = std::all_of(by_trial.begin(), by_trial.end(), [&](const auto& ks) {
    if (ks.size() != n) return false;
    for (std::size_t i = 0; i < n; ++i)
      if (ks[i]->name != by_trial.front()[i]->name) return false;
    return true;
  });
  if (!same || n == 0) return out;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> ms;
    ms.reserve(trials);
    for (const auto& ks : by_trial)
      ms.push_back(static_cast<double>(ks[i]->end - ks[i]->start) / 1e6);
    out.per_kernel.push_back({short_kernel_name(by_trial.front()[i]->name), summarize(ms).median});
  }
  return out;
}

}  // namespace egg::harness
