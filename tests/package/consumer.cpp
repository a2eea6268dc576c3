// A small graph built from the installed package: one include, a synthetic source with a
// Poisson channel and its delayed partner, a Counter, a Correlation and a virtual channel.
// Exits non-zero unless the results are what the stream must give.
#include <tagflow/tagflow.hpp>

#include <cstdio>
#include <vector>

int main() {
  using namespace tagflow;
  std::printf("tagflow %s\n", kVersion);

  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 1e6),
                     SyntheticChannel::partner(2, 1, 5000, 0, 1.0)};
  config.duration_ps = kPicosecondsPerSecond / 10;
  SyntheticSource source(config);

  MeasurementGraph graph(source);
  auto& delayed = graph.emplace<DelayedChannel>("delayed", 1, 5000);
  auto& counter = graph.emplace<Counter>("counter", std::vector<channel_t>{1, 2},
                                         kPicosecondsPerSecond / 100, 10);
  auto& correlation = graph.emplace<Correlation>("g2", 2, delayed.getChannel(), 100, 11);
  graph.run();

  const auto counts = counter.getData();
  const auto histogram = correlation.getData();
  std::int64_t total_1 = 0, total_2 = 0, coincidences = 0;
  for (std::size_t bin = 0; bin < 10; ++bin) {
    total_1 += counts[bin];
    total_2 += counts[10 + bin];
  }
  for (std::int64_t count : histogram) coincidences += count;
  std::printf("channel 1: %lld, channel 2: %lld, g2 at zero delay: %lld of %lld pairs\n",
              static_cast<long long>(total_1), static_cast<long long>(total_2),
              static_cast<long long>(histogram[5]), static_cast<long long>(coincidences));
  // Every partner is 5 ns after its event (the last may fall past the stream's end): after
  // the delay every pair sits in the middle bin, on top of accidental pairs of unrelated
  // events, about 1e5 events * 1 MHz * 100 ps = 10 per bin (bound: 60, five times that).
  const bool ok = total_1 > 90'000 && total_2 <= total_1 && total_2 >= total_1 - 1 &&
                  histogram[5] >= total_2 && histogram[5] - total_2 < 60 &&
                  coincidences - histogram[5] < 10 * 60;
  return ok ? 0 : 1;
}
