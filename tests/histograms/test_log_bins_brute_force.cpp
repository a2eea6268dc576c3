// HistogramLogBins against the brute force, bin by bin and exactly: every start followed by a
// click with tau in [edge_0, edge_last) counts in the bin with edges[i] <= tau < edges[i+1]
// (tau on an edge goes right), clicks count once one span has passed since the capture
// started; auto mode pairs distinct events only. Also with many bins (every ps an edge, and the
// look-up's walk where several edges share a key), scripted blocks with empty blocks, and the
// facts.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "support/generators.hpp"
#include "support/pairs.hpp"
#include "support/reference.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

void requireMatches(const HistogramLogBins& histogram, const LogBinsReference& ref) {
  REQUIRE(histogram.getData() == ref.counts);
  const ResultSet results = histogram.getResults();
  CHECK(results.facts.getInt("n_start") == static_cast<std::int64_t>(ref.n_start));
  CHECK(results.facts.getInt("n_click") == static_cast<std::int64_t>(ref.n_click));
  CHECK(results.facts.getInt("accumulation_time_start") == ref.accumulation_start);
  CHECK(results.facts.getInt("accumulation_time_click") == ref.accumulation_click);
  CHECK(histogram.getAccumulationTimeStart() == ref.accumulation_start);
  CHECK(histogram.getAccumulationTimeClick() == ref.accumulation_click);
  // The snapshot: the same values, and g2's factor per bin as the formula gives it.
  const HistogramLogBinsData data = histogram.getDataObject();
  CHECK(data.bin_edges == histogram.getBinEdges());
  CHECK(data.counts == ref.counts);
  CHECK(data.accumulation_time_start == ref.accumulation_start);
  CHECK(data.accumulation_time_click == ref.accumulation_click);
  CHECK(data.n_start == ref.n_start);
  CHECK(data.n_click == ref.n_click);
  const std::vector<double> g2 = histogram.getDataNormalizedG2();
  REQUIRE(data.g2.size() == ref.counts.size());
  REQUIRE(data.g2_normalization.size() == ref.counts.size());
  const bool accumulated = ref.n_start > 0 && ref.n_click > 0 && ref.accumulation_start > 0;
  for (std::size_t i = 0; i < ref.counts.size(); ++i) {
    INFO("bin " << i);
    const double width = static_cast<double>(data.bin_edges[i + 1] - data.bin_edges[i]);
    const double factor = static_cast<double>(ref.accumulation_start) / width /
                          static_cast<double>(ref.n_start) / static_cast<double>(ref.n_click);
    if (!accumulated) {
      CHECK(std::isnan(data.g2_normalization[i]));
      CHECK(std::isnan(data.g2[i]));
      continue;
    }
    CHECK(data.g2_normalization[i] == Approx(factor).epsilon(1e-14));
    CHECK(data.g2[i] == g2[i]);
    CHECK(data.g2[i] ==
          Approx(static_cast<double>(ref.counts[i]) * data.g2_normalization[i]).epsilon(1e-14));
  }
}

std::uint64_t total(const std::vector<std::uint64_t>& counts) {
  std::uint64_t sum = 0;
  for (auto n : counts) sum += n;
  return sum;
}

}  // namespace

TEST_CASE("HistogramLogBins puts tau on an edge into the bin on its right", "[log_bins]") {
  // Edges 1, 10, 100, 1000 ps; span 1000 ps, so clicks count from 1000 ps on. One start at
  // 2000, clicks at 2000 + tau.
  std::vector<Tag> tags{makeTimeTag(1, 2000)};
  for (timestamp_t tau : {0, 1, 9, 10, 99, 100, 999, 1000, 1001}) {
    tags.push_back(makeTimeTag(2, 2000 + tau));
  }
  HistogramLogBins histogram("h", 2, 1, -12, -9, 3);
  runMemory(tags, GENERATE(1, 100), 0, 4000, {&histogram});
  CHECK(histogram.getData() == std::vector<std::uint64_t>{2, 2, 2});
  const auto ref = logBinsReference(tags, 2, 1, histogram.getBinEdges(), 0, 4000);
  CHECK(ref.counts == std::vector<std::uint64_t>{2, 2, 2});
  requireMatches(histogram, ref);
  CHECK(ref.n_click == 9);
  CHECK(ref.n_start == 1);
  CHECK(ref.accumulation_start == 3000);
}

TEST_CASE("HistogramLogBins of two channels equals the brute force", "[log_bins][reference]") {
  struct Case {
    double exp_start, exp_stop;
    std::int64_t n_bins;
    timestamp_t grid;  // event times are multiples of this
  };
  const Case c = GENERATE(values<Case>({{-10, -8, 40, 1},
                                        {-12, -8, 100, 1},  // n_bins 100, duplicates near 1 ps
                                        {-11, -8.5, 100, 10},
                                        {-12, -9, 3, 10},  // edges 1, 10, 100, 1000 on the grid
                                        {-10.3, -8.1, 7, 1}}));
  INFO("exp " << c.exp_start << " .. " << c.exp_stop << ", n_bins " << c.n_bins << ", grid "
              << c.grid);
  constexpr timestamp_t kEnd = 40'000'000;  // 40 us, ~20000 events per channel
  std::vector<Tag> tags = randomTags(81, {1, 2, 3}, 0, kEnd, 2000.0);
  for (Tag& tag : tags) tag.time -= tag.time % c.grid;
  sortStream(tags);
  HistogramLogBins histogram("h", 2, 1, c.exp_start, c.exp_stop, c.n_bins);
  HistogramLogBins swapped("swapped", 1, 2, c.exp_start, c.exp_stop, c.n_bins);
  runMemory(tags, 1000, 0, kEnd, {&histogram, &swapped});
  const auto& edges = histogram.getBinEdges();
  const auto ref = logBinsReference(tags, 2, 1, edges, 0, kEnd);
  REQUIRE(total(ref.counts) > 1000);
  requireMatches(histogram, ref);
  CHECK(ref.accumulation_start == kEnd - edges.back());
  CHECK(ref.accumulation_click == kEnd - edges.back());
  CHECK(ref.n_click == countTimeTags(tags, 2, edges.back(), kEnd));
  CHECK(ref.n_start == countTimeTags(tags, 1, edges.back(), kEnd));
  requireMatches(swapped, logBinsReference(tags, 1, 2, edges, 0, kEnd));
}

TEST_CASE("HistogramLogBins with click_channel == start_channel pairs distinct events",
          "[log_bins][reference]") {
  // By hand: events at 2000, 2010, 2010, 2110 ps with edges 1, 10, 100, 1000.
  const std::vector<Tag> hand{makeTimeTag(5, 2000), makeTimeTag(5, 2010), makeTimeTag(5, 2010),
                              makeTimeTag(5, 2110)};
  HistogramLogBins small("small", 5, 5, -12, -9, 3);
  runMemory(hand, 1, 0, 3000, {&small});
  // taus: 10, 10 (bin 1), 110 (bin 2), 100, 100 (bin 2); never 0 (same time or itself)
  CHECK(small.getData() == std::vector<std::uint64_t>{0, 2, 3});

  constexpr timestamp_t kEnd = 20'000'000;
  std::vector<Tag> tags = randomTags(82, {5, 6}, 0, kEnd, 1000.0);
  for (Tag& tag : tags) tag.time -= tag.time % 3;  // some events share a time
  sortStream(tags);
  HistogramLogBins histogram("h", 5, 5, -11.7, -8.3, 60);
  runMemory(tags, 333, 0, kEnd, {&histogram});
  const auto ref = logBinsReference(tags, 5, 5, histogram.getBinEdges(), 0, kEnd);
  REQUIRE(total(ref.counts) > 1000);
  requireMatches(histogram, ref);
  CHECK(ref.n_start == ref.n_click);
}

TEST_CASE("HistogramLogBins with tens of thousands of bins equals the brute force",
          "[log_bins][reference]") {
  struct Case {
    double exp_start, exp_stop;
    std::int64_t n_bins;
    double mean_gap_ps;
    timestamp_t end;
  };
  const Case c = GENERATE(values<Case>({
      {-9, -8, 20000, 2000.0, 40'000'000},            // every ps from 1 to 10 ns is an edge
      {-6, -5, 100000, 1'000'000.0, 40'000'000'000},  // up to 6 edges per key near 10 us
  }));
  INFO("exp " << c.exp_start << " .. " << c.exp_stop << ", n_bins " << c.n_bins);
  const std::vector<Tag> tags = randomTags(83, {1, 2}, 0, c.end, c.mean_gap_ps);
  HistogramLogBins histogram("h", 2, 1, c.exp_start, c.exp_stop, c.n_bins);
  runMemory(tags, 1000, 0, c.end, {&histogram});
  const auto ref = logBinsReference(tags, 2, 1, histogram.getBinEdges(), 0, c.end);
  REQUIRE(total(ref.counts) > 10000);
  requireMatches(histogram, ref);
}

TEST_CASE("HistogramLogBins over scripted blocks with empty blocks equals the brute force",
          "[log_bins][reference]") {
  // Bursts separated by silence longer than the 10 ns span: the warm-up ends inside a gap,
  // i.e. in an empty block.
  const std::vector<Tag> tags = burstyTags(84, {1, 2}, 3000, 40, 30, 6'000, 25'000);
  const timestamp_t end = tags.back().time + 50'000;
  const std::uint64_t seed = GENERATE(1, 2, 3);
  const auto blocks = cutIntoBlocks(tags, 0, end, seed, 0.3, 0.6);
  HistogramLogBins histogram("h", 2, 1, -11, -8, 30);
  HistogramLogBins self("self", 1, 1, -11, -8, 30);
  runScripted(blocks, {&histogram, &self});
  const auto& edges = histogram.getBinEdges();
  const auto ref = logBinsReference(tags, 2, 1, edges, 0, end);
  REQUIRE(total(ref.counts) > 100);
  requireMatches(histogram, ref);
  requireMatches(self, logBinsReference(tags, 1, 1, edges, 0, end));
}
