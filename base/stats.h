// Summary statistics of timing samples.
#pragma once

#include <vector>

namespace egg {

// Median and 10th/90th percentiles (linear interpolation); zeros for an empty sample.
struct Summary {
  double median = 0, p10 = 0, p90 = 0;
};
Summary summarize(std::vector<double> samples);

}  // namespace egg
