// The splittable measurements the split tests run, each on a stream that exercises its
// margins: pair windows of up to 2 us, overflow intervals, a partner channel, bin edges.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "split_harness.hpp"
#include "support/synthetic.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

namespace tagflow::test {

struct SplitKind {
  std::string label;
  MeasurementFactory make;
};

// Kinds whose partial states merge in any order: they also run as interleaved shards.
inline std::vector<SplitKind> anyOrderKinds() {
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

// Kinds whose partial states merge only in time order: consecutive ranges.
inline std::vector<SplitKind> timeOrderKinds() {
  return {
      {"Counter, every bin kept",
       [] {
         return std::make_unique<Counter>("m", std::vector<channel_t>{1, 2, 3, -1, 7}, 123'456'789,
                                          200);
       }},
      // The overflow intervals of splitStreamConfig() begin and end on bin edges.
      {"Counter, overflow marks on bin edges",
       [] {
         return std::make_unique<Counter>("m", std::vector<channel_t>{1, 2, -1}, 500'000, 40'000);
       }},
      {"Counter, sparse bins, ring wrapped",
       [] {
         return std::make_unique<Counter>("m", std::vector<channel_t>{2, 3}, 100'000, 1000);
       }},
      {"Counter, bins longer than ranges",
       [] {
         return std::make_unique<Counter>("m", std::vector<channel_t>{1, -1}, 5'000'000'000, 3);
       }},
      // Every range lies inside the one bin, which never completes.
      {"Counter, one bin longer than the stream",
       [] {
         return std::make_unique<Counter>("m", std::vector<channel_t>{1, 2, -1}, 30'000'000'000, 2);
       }},
      {"Counter, one bin kept",
       [] { return std::make_unique<Counter>("m", std::vector<channel_t>{1}, 1'000'003, 1); }},
      // A later range does not know its gates' states at its start (below: gates on busy
      // channels, a gate that opens once and stays open, one that never moves).
      {"HistogramLogBins, click gate",
       [] {
         return std::make_unique<HistogramLogBins>("m", 3, 1, -10.0, -6.0, 60,
                                                   ChannelGate{2, -1, false});
       }},
      {"HistogramLogBins, start gate",
       [] {
         return std::make_unique<HistogramLogBins>("m", 3, 1, -10.0, -6.0, 60, std::nullopt,
                                                   ChannelGate{-1, 2, true});
       }},
      {"HistogramLogBins, both gates, one opening once",
       [] {
         return std::make_unique<HistogramLogBins>(
             "m", 1, 1, -11.0, -7.0, 40, ChannelGate{2, 7, false}, ChannelGate{-1, 2, false});
       }},
      {"HistogramLogBins, a gate that never moves",
       [] {
         return std::make_unique<HistogramLogBins>("m", 3, 1, -10.0, -6.0, 30,
                                                   ChannelGate{7, 8, true});
       }},
  };
}

// Every splittable kind: they all split into consecutive ranges.
inline std::vector<SplitKind> splitKinds() {
  std::vector<SplitKind> kinds = anyOrderKinds();
  for (SplitKind& kind : timeOrderKinds()) kinds.push_back(std::move(kind));
  return kinds;
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
