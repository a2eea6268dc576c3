// Counter against a brute-force binning of the same stream (spec 3.1): synthetic streams with
// blocks that straddle bin edges, mostly-empty blocks, hand-made streams with long gaps,
// startFor cut inside a block, clear, stopped stretches, and bad parameters.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "support/probe.hpp"
#include "support/reference.hpp"
#include "support/synthetic.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/counter.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

// Everything a Counter reports, compared with the reference for both orders.
void requireMatches(const Counter& counter, const CounterReference& ref) {
  CHECK(counter.getBinsCompleted() == ref.completed);
  for (bool rolling : {true, false}) {
    INFO("rolling " << rolling);
    CHECK(counter.getData(rolling) == ref.data(rolling));
    CHECK(counter.getOverflowMask(rolling) == ref.mask(rolling));
    CHECK(sameValues(counter.getDataNormalized(rolling), ref.normalized(rolling), 1e-12));
  }
  CHECK(counter.getDataTotalCounts() == ref.totals);
}

// How many bin edges start + k * binwidth lie strictly inside a block.
std::size_t straddledEdges(const DrainedStream& stream, timestamp_t start, timestamp_t binwidth) {
  std::size_t count = 0;
  for (timestamp_t edge = start + binwidth; edge < stream.end(); edge += binwidth) {
    count += blocksStraddling(stream, edge);
  }
  return count;
}

}  // namespace

TEST_CASE("Counter matches brute-force bins on a synthetic stream", "[counter]") {
  const std::size_t n_values = GENERATE(30, 100);
  const auto config = mixedConfig(10'000'000'000, 1000);  // 10 ms, ~70k tags
  const DrainedStream stream = drainSynthetic(config);
  requireWellFormed(stream);
  const std::vector<channel_t> channels{1, 2, 3, -1, 7};  // 7 never fires
  const timestamp_t binwidth = 123'456'789;               // edges fall inside blocks
  REQUIRE(straddledEdges(stream, stream.begin(), binwidth) > 50);

  SyntheticSource source(config);
  Counter counter("counter", channels, binwidth, static_cast<std::int64_t>(n_values));
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(counter);
  graph.run();

  const auto ref =
      counterReference(stream.tags, channels, stream.begin(), stream.end(), binwidth, n_values);
  REQUIRE(ref.completed == 81);
  requireMatches(counter, ref);
  CHECK(counter.getDataTotalCounts()[4] == 0);
  CHECK(counter.getDataTotalCounts()[0] > 40'000);
}

TEST_CASE("Counter bins complete through empty blocks", "[counter]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 1e6), SyntheticChannel::clock(2, 2e5)};
  config.duration_ps = 1'000'000'000;     // 1 ms
  config.max_block_duration_ps = 50'000;  // 50 ns blocks, tags about 1 us apart
  config.seed = 3;
  const DrainedStream stream = drainSynthetic(config);
  requireWellFormed(stream);
  REQUIRE(stream.emptyBlocks() * 10 > stream.blocks.size() * 9);

  SyntheticSource source(config);
  const timestamp_t binwidth = 10'000'000;
  Counter counter("counter", {1, 2}, binwidth, 120);
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(counter);
  graph.run();
  const auto ref = counterReference(stream.tags, {1, 2}, 0, stream.end(), binwidth, 120);
  REQUIRE(ref.completed == 100);
  requireMatches(counter, ref);
}

TEST_CASE("Counter bins a hand-made stream with long silent gaps", "[counter]") {
  // Bursts of 1 us every 38 us: one block spans a gap of several empty 5 us bins.
  const auto tags = std::make_shared<const std::vector<Tag>>(
      burstyTags(11, {1, 2, 3}, 2'000'000, 50, 200, 1'000'000, 37'000'000));
  const std::size_t block_size = GENERATE(1, 64, 100000);
  const timestamp_t begin = 0;
  const timestamp_t end = tags->back().time + 12'345'678;
  MemorySource memory(tags, block_size, begin, end);
  const DrainedStream stream = drain(memory);
  requireWellFormed(stream);
  memory.rewind();

  const timestamp_t binwidth = 5'000'000;
  Counter counter("counter", {3, 1}, binwidth, 500);
  MeasurementGraph graph(memory, GraphOptions{.threads = 1});
  graph.add(counter);
  graph.run();
  const auto ref = counterReference(*tags, {3, 1}, begin, end, binwidth, 500);
  INFO("block_size " << block_size);
  REQUIRE(ref.completed > 350);
  requireMatches(counter, ref);
  // Many bins are empty, and zero-count bins appear as zeros, not as gaps.
  const auto data = counter.getData();
  CHECK(std::count(data.begin(), data.end(), 0) > 300);
}

TEST_CASE("Counter startFor cuts inside a block and counts exactly that duration", "[counter]") {
  const auto config = mixedConfig(10'000'000'000, 777);
  const DrainedStream stream = drainSynthetic(config);
  const timestamp_t duration = 3'333'333'337;
  REQUIRE(blocksStraddling(stream, stream.begin() + duration) == 1);

  SyntheticSource source(config);
  const timestamp_t binwidth = 100'000'000;
  Counter counter("counter", {1, 2, -1}, binwidth, 40);
  counter.startFor(duration);
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(counter);
  graph.run();
  CHECK_FALSE(counter.isRunning());
  CHECK(counter.getCaptureDuration() == duration);
  const auto ref = counterReference(stream.tags, {1, 2, -1}, stream.begin(),
                                    stream.begin() + duration, binwidth, 40);
  REQUIRE(ref.completed == 33);
  requireMatches(counter, ref);
}

TEST_CASE("getDataTotalCounts includes the bin still integrating", "[counter]") {
  // Bin 0 = [0, 1000): two tags; bin 1 = [1000, 2000) is still integrating at 1700.
  const auto tags = std::make_shared<const std::vector<Tag>>(std::vector<Tag>{
      makeTimeTag(1, 100), makeTimeTag(1, 900), makeTimeTag(1, 1500), makeTimeTag(2, 1600)});
  MemorySource memory(tags, 2, 0, 1700);
  Counter counter("counter", {1, 2}, 1000, 3);
  MeasurementGraph graph(memory);
  graph.add(counter);
  graph.run();
  CHECK(counter.getBinsCompleted() == 1);
  CHECK(counter.getData() == std::vector<std::int64_t>{0, 0, 2, 0, 0, 0});
  CHECK(counter.getDataTotalCounts() == std::vector<std::uint64_t>{3, 1});
  const auto normalized = counter.getDataNormalized();
  CHECK(std::isnan(normalized[0]));
  CHECK(normalized[2] == Approx(2e9));  // 2 counts in 1 ns
  CHECK(counter.getIndex() == std::vector<std::int64_t>{0, 1000, 2000});
}

TEST_CASE("Counter clear restarts bin 0 at the next block", "[counter]") {
  Counter counter("counter", {1}, 300, 10);
  BlockFeeder feed(counter);
  const std::vector<Tag> all = randomTags(5, {1}, 0, 5000, 37);
  const auto slice = [&](timestamp_t from, timestamp_t to) {
    std::vector<Tag> out;
    for (const Tag& tag : all) {
      if (tag.time >= from && tag.time < to) out.push_back(tag);
    }
    return out;
  };
  feed.feed(0, 1100, slice(0, 1100));
  counter.clear();
  CHECK(counter.getBinsCompleted() == 0);
  CHECK(counter.getDataTotalCounts() == std::vector<std::uint64_t>{0});
  feed.feed(1100, 2950, slice(1100, 2950));
  feed.feed(2950, 5000, slice(2950, 5000));
  requireMatches(counter, counterReference(all, {1}, 1100, 5000, 300, 10));
}

TEST_CASE("Counter bins integrate capture time: a stopped stretch is skipped", "[counter]") {
  Counter counter("counter", {1, 2}, 700, 20);
  BlockFeeder feed(counter);
  const std::vector<Tag> all = randomTags(9, {1, 2}, 0, 9000, 50);
  std::vector<Tag> captured;  // the running stretches, shifted onto one capture timeline
  const auto block = [&](timestamp_t from, timestamp_t to, timestamp_t shift) {
    std::vector<Tag> tags;
    for (const Tag& tag : all) {
      if (tag.time < from || tag.time >= to) continue;
      tags.push_back(tag);
      if (shift >= 0) captured.push_back(makeTimeTag(tag.channel, tag.time - shift));
    }
    feed.feed(from, to, tags);
  };
  block(0, 1000, 0);
  block(1000, 2500, 0);
  counter.stop();
  block(2500, 6000, -1);  // not captured
  counter.start();
  block(6000, 9000, 3500);
  CHECK(counter.getCaptureDuration() == 5500);
  requireMatches(counter, counterReference(captured, {1, 2}, 0, 5500, 700, 20));
}

TEST_CASE("Counter rejects bad parameters, naming the bad value", "[counter]") {
  REQUIRE_THROWS_AS(Counter("c", {1}, 0, 1), InvalidArgument);
  REQUIRE_THROWS_WITH(Counter("c", {1}, -5, 1), Contains("binwidth -5") && Contains("'c'"));
  REQUIRE_THROWS_AS(Counter("c", {1}, 1000, 0), InvalidArgument);
  REQUIRE_THROWS_WITH(Counter("c", {1}, 1000, -3), Contains("n_values -3"));
  REQUIRE_THROWS_WITH(Counter("c", {1}, 1000, std::int64_t{1} << 40),
                      Contains(std::to_string(std::int64_t{1} << 40)));
  REQUIRE_THROWS_AS(Counter("c", {1, 2, 1}, 1000, 1), InvalidArgument);
  REQUIRE_THROWS_WITH(Counter("c", {1, 2, 1}, 1000, 1), Contains("duplicate channel 1"));
  REQUIRE_THROWS_WITH(Counter("c", {}, 1000, 1), Contains("empty"));
  const Counter ok("c", {4, 2}, 1000, 3);
  CHECK(ok.channels() == std::vector<channel_t>{4, 2});
  CHECK(ok.binwidth() == 1000);
  CHECK(ok.nValues() == 3);
}
