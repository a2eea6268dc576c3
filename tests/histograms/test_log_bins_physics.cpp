// HistogramLogBins physics on synthetic data (fixed seed): for independent Poisson start and
// click channels g2 is 1 within 3 sigma in every bin with at least 100 expected counts,
// sigma = 1/sqrt(expected), expected_i = N_start * N_click * w_i / T_start.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "support/pairs.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

using namespace tagflow;
using namespace tagflow::test;

TEST_CASE("HistogramLogBins g2 of independent Poisson channels is flat at 1",
          "[log_bins][physics]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 1e6), SyntheticChannel::poisson(2, 1e6)};
  config.seed = 121;
  config.duration_ps = kPicosecondsPerSecond / 5;  // 0.2 s: ~400000 tags
  SyntheticSource source(config);
  // 100 ps .. 50 ns: rate * span = 0.05 keeps the counts Poisson.
  HistogramLogBins histogram("h", 2, 1, -10, -7.3, 12);
  runGraph(source, {&histogram});

  const auto& edges = histogram.getBinEdges();
  const auto g2 = histogram.getDataNormalizedG2();
  const ResultSet results = histogram.getResults();
  const auto n_start = static_cast<double>(results.facts.getInt("n_start"));
  const auto n_click = static_cast<double>(results.facts.getInt("n_click"));
  const auto time = static_cast<double>(histogram.getAccumulationTimeStart());
  REQUIRE(histogram.getAccumulationTimeStart() == config.duration_ps - edges.back());
  int tested = 0;
  for (std::size_t i = 0; i + 1 < edges.size(); ++i) {
    const double expected = n_start * n_click * static_cast<double>(edges[i + 1] - edges[i]) / time;
    if (expected < 100) continue;
    ++tested;
    const double sigma = 1 / std::sqrt(expected);
    INFO("bin " << i << " [" << edges[i] << ", " << edges[i + 1] << "): g2 " << g2[i]
                << ", expected counts " << expected);
    CHECK(std::abs(g2[i] - 1) < 3 * sigma);
  }
  CHECK(tested >= 6);
}
