// The splittable measurements the split tests run, each on a stream that exercises its
// margins: pair windows of up to 2 us, overflow intervals, a partner channel.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "split_harness.hpp"
#include "support/synthetic.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

namespace tagflow::test {

struct SplitKind {
  std::string label;
  MeasurementFactory make;
};

inline std::vector<SplitKind> splitKinds() {
  return {
      {"Countrate",
       [] {
         return std::make_unique<Countrate>("m", std::vector<channel_t>{1, 2, 3, -1});
       }},
      {"Correlation cross, 2 us window",
       [] { return std::make_unique<Correlation>("m", 3, 1, 1000, 2000); }},
      {"Correlation cross, odd bins",
       [] { return std::make_unique<Correlation>("m", 1, 2, 37, 301); }},
      {"Correlation auto",
       [] { return std::make_unique<Correlation>("m", 1, CHANNEL_UNUSED, 50, 400); }},
      {"HistogramLogBins",
       [] { return std::make_unique<HistogramLogBins>("m", 3, 1, -10.0, -6.0, 120); }},
      {"HistogramLogBins, same channel",
       [] { return std::make_unique<HistogramLogBins>("m", 1, 1, -11.0, -7.0, 80); }},
  };
}

// About 20 ms of the mixed stream with two overflow intervals.
inline SyntheticConfig splitStreamConfig(std::uint64_t seed) {
  constexpr timestamp_t kDuration = 20'000'000'000;
  SyntheticConfig config = mixedConfig(kDuration, 4096, 1.0, seed);
  config.overflows = {{kDuration / 5, kDuration / 5 + 300'000'000},
                      {kDuration / 2, kDuration / 2 + 1'500'000}};
  return config;
}

}  // namespace tagflow::test
