// Counter's ring of n_values bins (spec 3.1): rolling order (newest last, unfilled padded at
// the front), sweep order (write position wrapping to 0), and overwrite of old bins; sparse
// tags in fine bins, where empty bins are never written and must still read as zero.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "support/drain.hpp"
#include "support/reference.hpp"
#include "support/synthetic.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/counter.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

constexpr timestamp_t kBinwidth = 1000;

// Bin k holds k + 1 tags on channel 1 and k % 3 on channel 2, so a count names its bin.
// The stream ends half-way into bin `completed`, which holds a few tags too.
std::vector<Tag> labelledBins(std::uint64_t completed) {
  std::vector<Tag> tags;
  for (std::uint64_t k = 0; k <= completed; ++k) {
    const timestamp_t begin = static_cast<timestamp_t>(k) * kBinwidth;
    for (std::uint64_t i = 0; i < k + 1; ++i) tags.push_back(makeTimeTag(1, begin + 2 * i));
    for (std::uint64_t i = 0; i < k % 3; ++i) tags.push_back(makeTimeTag(2, begin + 400 + i));
  }
  return tags;
}

struct RingRun {
  std::unique_ptr<Counter> counter;
  CounterReference ref;
};

RingRun runRing(std::uint64_t completed, std::size_t n_values, std::size_t block_size) {
  const auto tags = std::make_shared<const std::vector<Tag>>(labelledBins(completed));
  const timestamp_t end = static_cast<timestamp_t>(completed) * kBinwidth + kBinwidth / 2;
  MemorySource source(tags, block_size, 0, end);
  RingRun run{std::make_unique<Counter>("counter", std::vector<channel_t>{1, 2}, kBinwidth,
                                        static_cast<std::int64_t>(n_values)),
              counterReference(*tags, {1, 2}, 0, end, kBinwidth, n_values)};
  MeasurementGraph graph(source, GraphOptions{.threads = 1});
  graph.add(*run.counter);
  graph.run();
  return run;
}

}  // namespace

TEST_CASE("Counter ring order matches the reference for every fill level", "[counter][ring]") {
  const std::size_t n_values = GENERATE(1, 3, 5, 8);
  const std::uint64_t completed = GENERATE(0, 2, 5, 8, 13, 40);
  const std::size_t block_size = GENERATE(1, 5, 1000);
  INFO("n_values " << n_values << ", completed " << completed << ", block_size " << block_size);
  const RingRun run = runRing(completed, n_values, block_size);
  REQUIRE(run.counter->getBinsCompleted() == completed);
  for (bool rolling : {true, false}) {
    INFO("rolling " << rolling);
    CHECK(run.counter->getData(rolling) == run.ref.data(rolling));
    CHECK(sameValues(run.counter->getDataNormalized(rolling), run.ref.normalized(rolling), 1e-12));
  }
  CHECK(run.counter->getDataTotalCounts() == run.ref.totals);
}

TEST_CASE("Counter ring order, spelled out for a wrapped ring", "[counter][ring]") {
  // n_values 3, 5 bins completed: bins 2, 3, 4 survive (channel-1 counts 3, 4, 5).
  const RingRun run = runRing(5, 3, 4);
  // Rolling: oldest to newest.
  CHECK(run.counter->getData(true) == std::vector<std::int64_t>{3, 4, 5, 2, 0, 1});
  // Sweep: bin k sits at k % 3 (bin 3 at 0, bin 4 at 1, bin 2 at 2).
  CHECK(run.counter->getData(false) == std::vector<std::int64_t>{4, 5, 3, 0, 1, 2});
  // Totals: every bin 0..4 plus the integrating bin 5 (6 tags on channel 1, 2 on channel 2; 21 and
  // 6 in all).
  CHECK(run.counter->getDataTotalCounts() == std::vector<std::uint64_t>{21, 6});
}

TEST_CASE("Counter ring order, spelled out for a partly filled ring", "[counter][ring]") {
  const RingRun run = runRing(2, 5, 1000);
  CHECK(run.counter->getData(true) == std::vector<std::int64_t>{0, 0, 0, 1, 2, 0, 0, 0, 0, 1});
  CHECK(run.counter->getData(false) == std::vector<std::int64_t>{1, 2, 0, 0, 0, 0, 1, 0, 0, 0});
  const auto normalized = run.counter->getDataNormalized(true);
  for (int column : {0, 1, 2, 5, 6, 7}) CHECK(std::isnan(normalized[column]));
  CHECK(normalized[4] == Approx(2e9));
}

TEST_CASE("A silent stretch longer than the ring leaves only zero bins", "[counter][ring]") {
  // Tags in bins 0..4, then silence for 50 bins, then one tag; one block spans the silence.
  std::vector<Tag> tags;
  for (timestamp_t k = 0; k < 5; ++k) tags.push_back(makeTimeTag(1, k * kBinwidth + 10));
  tags.push_back(makeTimeTag(1, 55 * kBinwidth + 10));
  const auto shared = std::make_shared<const std::vector<Tag>>(tags);
  MemorySource source(shared, 100, 0, 56 * kBinwidth + 500);
  Counter counter("counter", {1}, kBinwidth, 7);
  MeasurementGraph graph(source);
  graph.add(counter);
  graph.run();
  CHECK(counter.getBinsCompleted() == 56);
  const auto ref = counterReference(tags, {1}, 0, 56 * kBinwidth + 500, kBinwidth, 7);
  CHECK(counter.getData(true) == ref.data(true));
  CHECK(counter.getData(false) == ref.data(false));
  CHECK(counter.getData(true) == std::vector<std::int64_t>{0, 0, 0, 0, 0, 0, 1});
  CHECK(counter.getDataTotalCounts() == std::vector<std::uint64_t>{6});
}

TEST_CASE("Sparse tags in fine bins: empty bins read as zero without being written",
          "[counter][ring]") {
  // About one tag per 7 bins of 1 ns, a ring of 37 bins wrapped thousands of times, and
  // overflow intervals (inside a bin, across many empty bins, longer than the ring) whose
  // empty bins must be flagged while the others read as plain zeros.
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 1e8), SyntheticChannel::poisson(2, 4e7)};
  config.seed = 5;
  config.block_size = GENERATE(1, 7, 1000);
  config.duration_ps = 200'000'000;
  config.overflows = {{1'000'500, 1'000'700}, {5'000'000, 5'030'000}, {90'000'000, 90'100'000}};
  const DrainedStream stream = drainSynthetic(config);
  std::vector<Interval> intervals;
  for (const auto& o : config.overflows) intervals.push_back(Interval{o.begin_ps, o.end_ps});

  SyntheticSource source(config);
  Counter counter("counter", {1, 2}, 1000, 37);
  MeasurementGraph graph(source, GraphOptions{.threads = 1});
  graph.add(counter);
  graph.run();
  const auto ref = counterReference(stream.tags, {1, 2}, 0, stream.end(), 1000, 37, intervals);
  INFO("block_size " << config.block_size);
  REQUIRE(counter.getBinsCompleted() == ref.completed);
  for (bool rolling : {true, false}) {
    INFO("rolling " << rolling);
    CHECK(counter.getData(rolling) == ref.data(rolling));
    CHECK(counter.getOverflowMask(rolling) == ref.mask(rolling));
    CHECK(sameValues(counter.getDataNormalized(rolling), ref.normalized(rolling), 1e-12));
  }
  CHECK(counter.getDataTotalCounts() == ref.totals);

  // Stopped at a point where the ring holds flagged bins of the long interval and zeros.
  Counter partial("partial", {1, 2}, 1000, 37);
  SyntheticConfig cut = config;
  cut.duration_ps = 90'050'500;
  cut.overflows.back().end_ps = 90'050'000;  // the last 37 completed bins lie inside it
  const DrainedStream cut_stream = drainSynthetic(cut);
  SyntheticSource cut_source(cut);
  MeasurementGraph cut_graph(cut_source, GraphOptions{.threads = 1});
  cut_graph.add(partial);
  cut_graph.run();
  intervals.back().end = 90'050'000;
  const auto cut_ref =
      counterReference(cut_stream.tags, {1, 2}, 0, cut_stream.end(), 1000, 37, intervals);
  const auto mask = partial.getOverflowMask(true);
  CHECK(mask == cut_ref.mask(true));
  CHECK(std::count(mask.begin(), mask.end(), 1) == 37);
  CHECK(partial.getData(true) == cut_ref.data(true));
}

TEST_CASE("Bins counted tag by tag match brute force, uncounted channels included",
          "[counter][ring]") {
  // Bins from well under one tag to a few thousand (the tag-by-tag path) and past that (the
  // bulk path); blocks of 64 and 4096 tags take the path their bins ask for, blocks of one tag
  // the general one. Channel -1 fires but is not counted, channel 9 is counted but never
  // fires. The ring holds every bin of the stream, so that each one is compared.
  const timestamp_t binwidth = GENERATE(7'000, 150'000, 3'000'000, 1'000'000'000);
  const std::size_t block_size = GENERATE(1, 64, 4096);
  const timestamp_t duration = binwidth < 1'000'000'000 ? 3'000'000'000 : 30'000'000'000;
  const auto config = mixedConfig(duration, block_size);  // ~8.5 MTags/s of stream time
  const DrainedStream stream = drainSynthetic(config);
  const std::vector<channel_t> channels{1, 2, 3, 9};
  const auto n_values = static_cast<std::size_t>(stream.end() / binwidth);

  SyntheticSource source(config);
  Counter counter("counter", channels, binwidth, static_cast<std::int64_t>(n_values));
  MeasurementGraph graph(source, GraphOptions{.threads = 1});
  graph.add(counter);
  graph.run();
  const auto ref = counterReference(stream.tags, channels, 0, stream.end(), binwidth, n_values);
  INFO("binwidth " << binwidth << ", block_size " << block_size);
  REQUIRE(counter.getBinsCompleted() == ref.completed);
  REQUIRE(ref.completed == n_values);
  for (bool rolling : {true, false}) {
    INFO("rolling " << rolling);
    CHECK(counter.getData(rolling) == ref.data(rolling));
    CHECK(counter.getOverflowMask(rolling) == ref.mask(rolling));
  }
  CHECK(counter.getDataTotalCounts() == ref.totals);
  CHECK(counter.getDataTotalCounts()[0] > 10'000);
}

TEST_CASE("Gaps at and beyond the divider's range between fine bins in one block",
          "[counter][ring]") {
  // Two tags, then silence of about 2^52 ps (the multiply-high divider's range; 75 minutes) up
  // to nearly 2^62, then more tags: the tags are counted one by one, a gap past the range in
  // bins by a division. At a 7 ps bin and a gap just below 2^62 that is 6 past a multiple of
  // 7, the divider would give one bin too many.
  const timestamp_t binwidth = GENERATE(timestamp_t{1000}, timestamp_t{7});
  // Gaps past the divider's range, and at 7 ps bins the largest gap it takes (2^52 - 1 ps past
  // the bin of the tag at 2500 ps, which ends at 2506 ps) and the smallest it leaves.
  const timestamp_t far =
      GENERATE(timestamp_t{9'007'199'254'741'000}, (timestamp_t{1} << 62) - 4'999,
               (timestamp_t{1} << 52) + 2'005, (timestamp_t{1} << 52) + 2'006);
  const std::vector<Tag> tags{makeTimeTag(1, 1'500),      makeTimeTag(-1, 1'700),
                              makeTimeTag(1, 2'500),      makeTimeTag(1, far + 500),
                              makeTimeTag(-1, far + 900), makeTimeTag(1, far + 1'500)};
  const timestamp_t end = far + 2'000;
  const auto shared = std::make_shared<const std::vector<Tag>>(tags);
  MemorySource source(shared, 100, 0, end);
  constexpr std::size_t kValues = 300;
  Counter counter("counter", {1}, binwidth, kValues);
  MeasurementGraph graph(source, GraphOptions{.threads = 1});
  graph.add(counter);
  graph.run();

  // The last kValues bins before the end, counted directly.
  const auto completed = static_cast<std::uint64_t>(end / binwidth);
  std::vector<std::int64_t> expected(kValues, 0);
  for (const Tag& tag : tags) {
    const auto bin = static_cast<std::uint64_t>(tag.time / binwidth);
    if (tag.channel == 1 && bin < completed && bin + kValues >= completed) {
      ++expected[kValues - (completed - bin)];
    }
  }
  INFO("binwidth " << binwidth << ", far " << far);
  CHECK(counter.getBinsCompleted() == completed);
  CHECK(counter.getData(true) == expected);
  CHECK(std::accumulate(expected.begin(), expected.end(), std::int64_t{0}) >= 1);
  CHECK(counter.getDataTotalCounts() == std::vector<std::uint64_t>{4});
}
