// HistogramLogBins edges (docs/measurements.md, HistogramLogBins): 10^(exp_start + i*step) s
// rounded to whole ps, the last one 10^exp_stop s; edges that rounding made equal are merged,
// so near 1 ps there are fewer bins than asked for.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <variant>
#include <vector>

#include "support/pairs.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

using namespace tagflow;
using namespace tagflow::test;

TEST_CASE("HistogramLogBins edges by hand", "[log_bins][edges]") {
  struct Case {
    double exp_start, exp_stop;
    std::int64_t n_bins;
    std::vector<std::int64_t> edges;
  };
  const Case c = GENERATE(values<Case>({
      {-12, -9, 3, {1, 10, 100, 1000}},
      // 10^(0.1 i) ps: 1, 1.26, 1.58, 2.00, 2.51, 3.16, 3.98, 5.01, 6.31, 7.94, 10 -> 7 bins
      {-12, -11, 10, {1, 2, 3, 4, 5, 6, 8, 10}},
      {-9, -8, 10, {1000, 1259, 1585, 1995, 2512, 3162, 3981, 5012, 6310, 7943, 10000}},
      {5, 6, 1, {100'000'000'000'000'000, 1'000'000'000'000'000'000}},
      {-12, -12 + std::log10(3.0), 2, {1, 2, 3}},  // 1, 1.73 -> 2, 3
  }));
  INFO("exp " << c.exp_start << " .. " << c.exp_stop << ", n_bins " << c.n_bins);
  HistogramLogBins histogram("h", 1, 2, c.exp_start, c.exp_stop, c.n_bins);
  CHECK(histogram.getBinEdges() == c.edges);
  CHECK(histogram.getData().size() == c.edges.size() - 1);
  CHECK(histogram.getDataNormalizedCountsPerPs().size() == c.edges.size() - 1);
  const ResultSet results = histogram.getResults();
  CHECK(std::get<std::vector<std::int64_t>>(results.array("bin_edges").data) == c.edges);
}

TEST_CASE("HistogramLogBins edges follow the rounding rule and merge duplicates",
          "[log_bins][edges]") {
  struct Case {
    double exp_start, exp_stop;
    std::int64_t n_bins;
  };
  const Case c = GENERATE(values<Case>({{-12, -6, 1000},
                                        {-12, 6, 18},
                                        {-11.5, -7.25, 77},
                                        {-10, -7, 100},
                                        {-9, -8, 20000},
                                        {-6, -5, 20000},
                                        {-3, 6, 500},
                                        {-12, -11.5, 50}}));
  INFO("exp " << c.exp_start << " .. " << c.exp_stop << ", n_bins " << c.n_bins);
  HistogramLogBins histogram("h", 1, 2, c.exp_start, c.exp_stop, c.n_bins);
  const auto& edges = histogram.getBinEdges();
  CHECK(edges == logBinEdges(c.exp_start, c.exp_stop, c.n_bins));
  REQUIRE(edges.size() >= 2);
  CHECK(edges.size() <= static_cast<std::size_t>(c.n_bins) + 1);
  for (std::size_t i = 1; i < edges.size(); ++i) REQUIRE(edges[i - 1] < edges[i]);
  CHECK(edges.front() == std::llround(std::pow(10.0, c.exp_start + 12)));
  CHECK(edges.back() == std::llround(std::pow(10.0, c.exp_stop + 12)));
  CHECK(histogram.getData().size() == edges.size() - 1);
}

TEST_CASE("HistogramLogBins from 1 ps has fewer bins than asked for", "[log_bins][edges]") {
  HistogramLogBins histogram("h", 1, 2, -12, -6, 1000);  // 1 ps .. 1 us
  const auto& edges = histogram.getBinEdges();
  CHECK(edges.front() == 1);
  CHECK(edges.back() == 1'000'000);
  // Below ~70 ps consecutive exponents round to the same integer (step 0.006 decades).
  CHECK(edges.size() < 1001);
  CHECK(edges[1] == 2);
  CHECK(histogram.getData().size() == edges.size() - 1);
}
