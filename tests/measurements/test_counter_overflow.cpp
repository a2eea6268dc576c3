// Counter under overflow (spec 1.4, 3.1): exactly the bins that overlap an overflow interval
// [begin, end) are flagged (mask 1, NaN normalised); their counts are the tags received;
// total counts add the MissedEvents, so they equal the counts of the stream without overflow.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "support/reference.hpp"
#include "support/synthetic.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/counter.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

constexpr timestamp_t kBinwidth = 10'000'000;  // 10 us

SyntheticConfig overflowConfig(std::size_t block_size) {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 5e6), SyntheticChannel::clock(2, 2e6, 40)};
  config.seed = 21;
  config.block_size = block_size;
  config.duration_ps = 2'000'000'000;  // 2 ms: 200 bins
  config.overflows = {
      {105'000'000, 133'000'000},      // begins and ends inside bins (bins 10-13)
      {200'000'000, 230'000'000},      // begins and ends exactly on bin edges
      {555'555'555, 555'600'000},      // inside one bin
      {1'000'000'001, 1'500'000'000},  // long, ends on an edge
  };
  return config;
}

std::vector<Interval> intervalsOf(const SyntheticConfig& config) {
  std::vector<Interval> intervals;
  for (const auto& o : config.overflows) intervals.push_back(Interval{o.begin_ps, o.end_ps});
  return intervals;
}

}  // namespace

TEST_CASE("Counter flags exactly the bins an overflow interval touches", "[counter][overflow]") {
  const std::size_t block_size = GENERATE(100, 4096);
  const SyntheticConfig config = overflowConfig(block_size);
  const DrainedStream stream = drainSynthetic(config);
  REQUIRE(overflowIntervalsOf(stream.tags).size() == 4);

  SyntheticSource source(config);
  Counter counter("counter", {1, 2}, kBinwidth, 200);
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(counter);
  graph.run();

  const auto ref =
      counterReference(stream.tags, {1, 2}, 0, stream.end(), kBinwidth, 200, intervalsOf(config));
  REQUIRE(ref.completed == 200);
  INFO("block_size " << block_size);
  const auto mask = counter.getOverflowMask(true);
  CHECK(mask == ref.mask(true));
  CHECK(counter.getOverflowMask(false) == ref.mask(false));
  CHECK(std::count(mask.begin(), mask.end(), 1) == 4 + 3 + 1 + 50);
  CHECK(mask[23] == 0);  // the interval ending at 230 us does not touch [230 us, 240 us)
  CHECK(mask[19] == 0);  // nor does the one beginning at 200 us touch [190 us, 200 us)
  CHECK(counter.getData(true) == ref.data(true));  // received tags
  CHECK(sameValues(counter.getDataNormalized(true), ref.normalized(true), 1e-12));
  CHECK(counter.getOverflowCount() == 4);
}

TEST_CASE("Counter totals under overflow equal the counts without overflow",
          "[counter][overflow]") {
  SyntheticConfig config = overflowConfig(512);
  SyntheticConfig clean = config;
  clean.overflows.clear();
  const DrainedStream lossy = drainSynthetic(config);
  const DrainedStream full = drainSynthetic(clean);
  REQUIRE(lossy.tags.size() < full.tags.size());

  SyntheticSource source(config);
  Counter counter("counter", {1, 2}, kBinwidth, 10);
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(counter);
  graph.run();
  const auto totals = counter.getDataTotalCounts();
  CHECK(totals[0] == countTimeTags(full.tags, 1, 0, full.end()));
  CHECK(totals[1] == countTimeTags(full.tags, 2, 0, full.end()));
}

TEST_CASE("Counter flags overflow bins of a hand-made stream", "[counter][overflow]") {
  // Overflow from 2.5 bins to 4.5 bins: bins 2, 3 and 4 are flagged.
  const auto clean = randomTags(17, {1, 2}, 0, 8 * kBinwidth, 50'000);
  const auto lossy = std::make_shared<const std::vector<Tag>>(
      withOverflow(clean, 2 * kBinwidth + kBinwidth / 2, 4 * kBinwidth + kBinwidth / 2));
  const std::size_t block_size = GENERATE(3, 100, 10000);
  MemorySource source(lossy, block_size, 0, 8 * kBinwidth);
  Counter counter("counter", {1, 2}, kBinwidth, 8);
  MeasurementGraph graph(source);
  graph.add(counter);
  graph.run();
  CHECK(counter.getOverflowMask() == std::vector<std::int8_t>{0, 0, 1, 1, 1, 0, 0, 0});
  const auto ref =
      counterReference(*lossy, {1, 2}, 0, 8 * kBinwidth, kBinwidth, 8, overflowIntervalsOf(*lossy));
  CHECK(counter.getOverflowMask() == ref.mask(true));
  CHECK(counter.getData() == ref.data(true));
  CHECK(counter.getDataTotalCounts()[0] == countTimeTags(clean, 1, 0, 8 * kBinwidth));
  CHECK(counter.getDataTotalCounts()[1] == countTimeTags(clean, 2, 0, 8 * kBinwidth));
}
