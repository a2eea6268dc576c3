// HistogramLogBins exposure: nothing counts until one full span (the last edge) after the
// capture start, after every overflow interval and after every Error; starts seen during the
// warm-up are valid partners, clicks during it are not; starts from before the restart are
// forgotten. The accumulation times are the capture time after the warm-ups.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "support/pairs.hpp"
#include "support/probe.hpp"
#include "support/synthetic.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

Tag special(TagType type, timestamp_t time) {
  return Tag{type, 0, 0, 0, time};
}

void requireMatches(const HistogramLogBins& histogram, const LogBinsReference& ref) {
  CHECK(histogram.getData() == ref.counts);
  const ResultSet results = histogram.getResults();
  CHECK(results.facts.getInt("n_start") == static_cast<std::int64_t>(ref.n_start));
  CHECK(results.facts.getInt("n_click") == static_cast<std::int64_t>(ref.n_click));
  CHECK(histogram.getAccumulationTimeStart() == ref.accumulation_start);
  CHECK(histogram.getAccumulationTimeClick() == ref.accumulation_click);
}

}  // namespace

TEST_CASE("HistogramLogBins counts no click during the warm-up after the capture start",
          "[log_bins][exposure]") {
  // Edges 1, 10, 100, 1000 ps; capture from 0; clicks count from 1000 ps on.
  const std::vector<Tag> tags{makeTimeTag(1, 500),    // start during the warm-up
                              makeTimeTag(2, 999),    // tau 499: before the warm-up ends
                              makeTimeTag(2, 1000),   // tau 500: counts (bin 2)
                              makeTimeTag(1, 1005),   // start after the warm-up
                              makeTimeTag(2, 1050)};  // tau 550 (bin 2) and 45 (bin 1)
  HistogramLogBins histogram("h", 2, 1, -12, -9, 3);
  runMemory(tags, GENERATE(1, 2, 10), 0, 5000, {&histogram});
  CHECK(histogram.getData() == std::vector<std::uint64_t>{0, 1, 2});
  const ResultSet results = histogram.getResults();
  CHECK(results.facts.getInt("n_click") == 2);
  CHECK(results.facts.getInt("n_start") == 1);  // the start at 500 pairs but is not counted
  CHECK(histogram.getAccumulationTimeStart() == 4000);
  CHECK(histogram.getAccumulationTimeClick() == 4000);
  requireMatches(histogram, logBinsReference(tags, 2, 1, histogram.getBinEdges(), 0, 5000));
}

TEST_CASE("HistogramLogBins warm-up follows the capture start, not the first tag",
          "[log_bins][exposure]") {
  // The stream starts at 10'000 ps with two empty blocks: the warm-up runs from there, not
  // from the first tag at 11'000 ps (then the click at 11'500 would not count).
  const std::vector<Tag> tags{makeTimeTag(1, 11'000), makeTimeTag(2, 11'500)};
  const std::vector<DrainedBlock> blocks{
      {10'000, 10'500, {}}, {10'500, 11'000, {}}, {11'000, 12'000, tags}, {12'000, 13'000, {}}};
  HistogramLogBins histogram("h", 2, 1, -12, -9, 3);
  runScripted(blocks, {&histogram});
  CHECK(histogram.getData() == std::vector<std::uint64_t>{0, 0, 1});
  CHECK(histogram.getAccumulationTimeStart() == 2000);
  requireMatches(histogram, logBinsReference(tags, 2, 1, histogram.getBinEdges(), 10'000, 13'000));
}

TEST_CASE("HistogramLogBins restarts the exposure after an overflow and after an Error",
          "[log_bins][exposure]") {
  // Edges 1, 10, 100, 1000 ps.
  const std::vector<Tag> tags{
      makeTimeTag(1, 2000),
      makeTimeTag(2, 2100),  // counts: tau 100
      special(TagType::OverflowBegin, 3000),
      makeTimeTag(1, 3100),
      makeTimeTag(2, 3200),  // inside the overflow: ignored
      special(TagType::OverflowEnd, 4000),
      makeTimeTag(1, 4500),  // start during the warm-up: a valid partner
      makeTimeTag(2, 4900),  // click before 4000 + 1000: not counted
      makeTimeTag(2, 5000),  // counts: tau 500 (the start at 2000 is forgotten)
      special(TagType::Error, 6000),
      makeTimeTag(1, 6100),
      makeTimeTag(2, 6200),  // before 7000: not counted
      makeTimeTag(2, 7050),  // tau 950 with 6100: counts
  };
  HistogramLogBins histogram("h", 2, 1, -12, -9, 3);
  runMemory(tags, GENERATE(1, 3, 100), 0, 8000, {&histogram});
  CHECK(histogram.getData() == std::vector<std::uint64_t>{0, 0, 3});
  const ResultSet results = histogram.getResults();
  CHECK(results.facts.getInt("n_click") == 3);
  CHECK(results.facts.getInt("n_start") == 1);  // 2000; 4500 and 6100 were in warm-ups
  // [1000, 3000) + [5000, 6000) + [7000, 8000)
  CHECK(histogram.getAccumulationTimeStart() == 4000);
  CHECK(histogram.getAccumulationTimeClick() == 4000);
  requireMatches(histogram, logBinsReference(tags, 2, 1, histogram.getBinEdges(), 0, 8000));
}

TEST_CASE("HistogramLogBins with overflows and errors in a random stream equals the brute force",
          "[log_bins][exposure]") {
  constexpr timestamp_t kEnd = 30'000'000;
  std::vector<Tag> tags = randomTags(91, {1, 2}, 0, kEnd, 1500.0);
  tags = withOverflow(tags, 5'000'000, 5'004'000);
  tags = withOverflow(tags, 12'345'678, 12'345'679);  // 1 ps
  std::mt19937_64 random(92);
  std::uniform_int_distribution<timestamp_t> when(1, kEnd - 1);
  for (int i = 0; i < 5; ++i) tags.push_back(special(TagType::Error, when(random)));
  sortStream(tags);
  const auto blocks = cutIntoBlocks(tags, 0, kEnd, GENERATE(1, 2), 0.05, 0.3);
  HistogramLogBins histogram("h", 2, 1, -10.5, -8, 25);
  HistogramLogBins self("self", 1, 1, -10.5, -8, 25);
  runScripted(blocks, {&histogram, &self});
  const auto& edges = histogram.getBinEdges();
  const auto ref = logBinsReference(tags, 2, 1, edges, 0, kEnd);
  // Eight warm-ups of one span each (start, two overflows, five errors), and the overflows, are not
  // accumulated.
  CHECK(ref.accumulation_start == kEnd - 4000 - 1 - 8 * edges.back());
  requireMatches(histogram, ref);
  requireMatches(self, logBinsReference(tags, 1, 1, edges, 0, kEnd));
}

TEST_CASE("HistogramLogBins over the synthetic source's overflows equals the brute force",
          "[log_bins][exposure]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 4e6),
                     SyntheticChannel::partner(2, 1, 3000, 500, 0.5)};
  config.seed = 93;
  config.block_size = GENERATE(7, 1000);
  config.duration_ps = 5'000'000'000;  // 5 ms, ~30000 tags
  config.overflows = {{1'000'000'000, 1'000'005'000}, {2'000'000'000, 2'300'000'000}};
  const DrainedStream stream = drainSynthetic(config);
  SyntheticSource source(config);
  HistogramLogBins histogram("h", 2, 1, -11, -7, 40);
  runGraph(source, {&histogram});
  const auto& edges = histogram.getBinEdges();
  const auto ref = logBinsReference(stream.tags, 2, 1, edges, stream.begin(), stream.end());
  CHECK(ref.accumulation_start ==
        stream.end() - stream.begin() - 5'000 - 300'000'000 - 3 * edges.back());
  requireMatches(histogram, ref);
  CHECK(histogram.getOverflowCount() == 2);
}

TEST_CASE("HistogramLogBins started inside an overflow waits for its end and a warm-up",
          "[log_bins][exposure]") {
  // Edges 1, 10, 100, 1000 ps. The overflow begins while the histogram is stopped.
  HistogramLogBins histogram("h", 2, 1, -12, -9, 3);
  histogram.stop();
  BlockFeeder feed(histogram);
  feed.feed(0, 1000, {special(TagType::OverflowBegin, 500)});
  histogram.start();
  feed.feed(1000, 8000,
            {makeTimeTag(1, 2400), makeTimeTag(2, 2500),  // inside the overflow: ignored
             special(TagType::OverflowEnd, 4000), makeTimeTag(1, 5100),
             makeTimeTag(2, 5200)});  // after the warm-up: tau 100
  CHECK(histogram.getData() == std::vector<std::uint64_t>{0, 0, 1});
  CHECK(histogram.getResults().facts.getInt("n_click") == 1);
  // [5000, 8000): the overflow and the warm-up after it are not exposure.
  CHECK(histogram.getAccumulationTimeStart() == 3000);
  CHECK(histogram.getAccumulationTimeClick() == 3000);
}
