// Correlation physics on synthetic data (fixed seeds): a partner channel delayed by d with
// Gaussian jitter s gives a peak whose background-subtracted mean lies within 3 standard errors
// of d and whose standard deviation is within 10 % of s; two independent Poisson channels (and
// one channel with itself, which has no self pairs) give g2 within 3 sigma of 1 in every bin,
// sigma = 1/sqrt(expected counts).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "support/pairs.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/correlation.hpp"

using namespace tagflow;
using namespace tagflow::test;

TEST_CASE("Correlation finds a delayed, jittered partner at its delay and width",
          "[correlation][physics]") {
  constexpr timestamp_t kDelay = 5000;
  constexpr double kJitter = 100;
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 1e6),
                     SyntheticChannel::partner(2, 1, kDelay, kJitter, 0.5)};
  config.seed = 111;
  config.duration_ps = kPicosecondsPerSecond / 10;  // 0.1 s: ~150000 tags, ~50000 partners
  SyntheticSource source(config);
  // Odd binwidth: the index (left edge + 10) is the mean of the integer taus of a bin.
  Correlation correlation("c", 2, 1, 21, 701);  // tau = t2 - t1, window -7360 .. 7361
  runGraph(source, {&correlation});

  const auto counts = correlation.getData();
  const auto index = correlation.getIndex();
  // Background: the mean of the bins farther than 1500 ps (15 s) from the peak.
  double background_sum = 0;
  int background_bins = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (std::abs(static_cast<double>(index[i] - kDelay)) > 1500) {
      background_sum += static_cast<double>(counts[i]);
      ++background_bins;
    }
  }
  REQUIRE(background_bins > 300);
  const double background = background_sum / background_bins;

  // Moments of the background-subtracted peak within 6 s of the delay.
  double signal = 0, first = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double x = static_cast<double>(index[i]);
    if (std::abs(x - kDelay) > 6 * kJitter) continue;
    signal += static_cast<double>(counts[i]) - background;
    first += (static_cast<double>(counts[i]) - background) * x;
  }
  REQUIRE(signal > 40'000);
  const double mean = first / signal;
  double second = 0, mean_variance = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double x = static_cast<double>(index[i]);
    if (std::abs(x - kDelay) > 6 * kJitter) continue;
    second += (static_cast<double>(counts[i]) - background) * (x - mean) * (x - mean);
    // Each bin's count is Poisson: its variance is the count itself.
    mean_variance += static_cast<double>(counts[i]) * (x - mean) * (x - mean);
  }
  const double standard_error = std::sqrt(mean_variance) / signal;
  // Binning adds binwidth^2 / 12 to the variance.
  const double width = std::sqrt(second / signal - 21.0 * 21.0 / 12.0);
  INFO("mean " << mean << " +- " << standard_error << " ps, width " << width << " ps, background "
               << background << " per bin, signal " << signal);
  CHECK(std::abs(mean - kDelay) < 3 * standard_error);
  CHECK(std::abs(width - kJitter) < 0.1 * kJitter);
  CHECK(standard_error < 1.0);  // the check above is a sharp one
  // The peak is at positive tau: channel_1 (the partner) comes later.
  const auto peak = std::max_element(counts.begin(), counts.end()) - counts.begin();
  CHECK(std::abs(index[static_cast<std::size_t>(peak)] - kDelay) < 2 * kJitter);
}

TEST_CASE("Correlation g2 of independent Poisson channels is flat at 1", "[correlation][physics]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 2e6), SyntheticChannel::poisson(2, 2e6)};
  config.seed = 112;
  config.duration_ps = kPicosecondsPerSecond / 20;  // 0.05 s: ~200000 tags
  SyntheticSource source(config);
  // 16 bins of 10 ns: ~2000 pairs per bin; rate * binwidth = 0.02 keeps the counts Poisson.
  Correlation cross("cross", 1, 2, 10'000, 16);
  Correlation self("auto", 1, CHANNEL_UNUSED, 10'000, 16);
  runGraph(source, {&cross, &self});

  for (const Correlation* correlation : {&cross, &self}) {
    INFO(correlation->name());
    const auto g2 = correlation->getDataNormalized();
    const auto [n1, n2] = correlation->getEventCounts();
    const double expected = static_cast<double>(n1) * static_cast<double>(n2) * 10'000.0 /
                            static_cast<double>(correlation->getCaptureDuration());
    REQUIRE(expected > 1000);
    const double sigma = 1 / std::sqrt(expected);
    for (std::size_t i = 0; i < g2.size(); ++i) {
      INFO("bin " << i << ": g2 " << g2[i] << ", sigma " << sigma);
      CHECK(std::abs(g2[i] - 1) < 3 * sigma);
    }
  }
}
