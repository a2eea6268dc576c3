// SynchronizedMeasurements: members at different speeds in one graph start, stop and clear on
// the same block, so they process exactly the same tags (spec 2.3).
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "support/probe.hpp"
#include "support/reference.hpp"
#include "support/sources.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/core/synchronized_measurements.hpp"

using namespace tagflow;
using namespace tagflow::test;
using namespace std::chrono_literals;
using Catch::Contains;

namespace {

PatternSource::Config groupStream() {
  PatternSource::Config config;
  config.blocks = 1200;
  config.block_ps = 1000;
  config.tags_per_block = 8;
  config.channels = {1, 2, 3};
  config.empty_every = 5;
  return config;
}

// Waits until `probe` has finished `blocks` blocks (it must not be stopped).
void waitForProgress(const Probe& probe, std::uint64_t blocks) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (probe.advanceCount() < blocks) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(200us);
  }
}

std::vector<Tag> tagsBetween(const std::vector<Tag>& tags, timestamp_t from, timestamp_t to) {
  std::vector<Tag> out;
  for (const Tag& tag : tags) {
    if (tag.time >= from && tag.time < to) out.push_back(tag);
  }
  return out;
}

}  // namespace

TEST_CASE("A synchronized startFor makes a fast and a slow member see the same tags",
          "[synchronized][graph]") {
  const auto config = groupStream();
  PatternSource pattern(config);
  GatedSource source(pattern, 100);
  Probe pacer("pacer");
  Probe fast("fast", Probe::Options{.keep_tags = true});
  Probe slow("slow", Probe::Options{.sleep_per_block = 100us, .keep_tags = true});
  SynchronizedMeasurements group;
  group.registerMeasurement(fast);
  group.registerMeasurement(slow);
  REQUIRE(group.size() == 2);

  MeasurementGraph graph(source, GraphOptions{.max_blocks_in_flight = 8, .threads = 2});
  graph.add(pacer);
  graph.add(fast);
  graph.add(slow);
  auto run = graph.runAsync();
  waitForProgress(pacer, 100);  // the slow member is still some blocks behind

  const timestamp_t duration = 300'500;  // 300.5 blocks: the cut lies inside a block
  group.startFor(duration);
  source.allowAll();
  REQUIRE(group.waitUntilFinished(60'000));
  // Finished means finished for every member, the slow one included.
  CHECK_FALSE(group.isRunning());
  CHECK(fast.getCaptureDuration() == duration);
  CHECK(slow.getCaptureDuration() == duration);
  run.get();

  REQUIRE(fast.captureStarts().size() == 2);  // construction, then the startFor
  REQUIRE(slow.captureStarts().size() == 2);
  const timestamp_t start = fast.captureStarts()[1].time;
  CHECK(slow.captureStarts()[1].time == start);
  CHECK(start >= 90 * config.block_ps);  // at most max_blocks_in_flight behind the pacer
  const auto all = PatternSource::allTags(config, config.blocks);
  const auto expected = tagsBetween(all, start, start + duration);
  REQUIRE_FALSE(expected.empty());
  CHECK(fast.tags() == expected);
  CHECK(slow.tags() == expected);
  CHECK(fast.orderError().empty());
  CHECK(slow.orderError().empty());
}

TEST_CASE("A synchronized start and stop mid-run cut both members on the same blocks",
          "[synchronized][graph]") {
  const auto config = groupStream();
  PatternSource pattern(config);
  GatedSource source(pattern, 100);
  Probe pacer("pacer");
  Probe fast("fast", Probe::Options{.keep_tags = true});
  Probe slow("slow", Probe::Options{.sleep_per_block = 100us, .keep_tags = true});
  SynchronizedMeasurements group;
  group.registerMeasurement(slow);
  group.registerMeasurement(fast);
  group.stop();  // members auto-start; hold them until the run is under way
  REQUIRE_FALSE(group.isRunning());

  MeasurementGraph graph(source, GraphOptions{.max_blocks_in_flight = 8, .threads = 2});
  graph.add(pacer);
  graph.add(fast);
  graph.add(slow);
  auto run = graph.runAsync();
  waitForProgress(pacer, 100);
  group.start();
  CHECK(group.isRunning());
  source.allow(400);
  waitForProgress(pacer, 400);
  group.stop();  // the slow member lags: it stops when it reaches the same block
  source.allowAll();
  run.get();

  CHECK_FALSE(group.isRunning());
  const timestamp_t captured = fast.getCaptureDuration();
  CHECK(captured >= 200 * config.block_ps);
  CHECK(slow.getCaptureDuration() == captured);
  const timestamp_t start = fast.captureStarts().at(0).time;
  CHECK(slow.captureStarts().at(0).time == start);
  const auto expected =
      tagsBetween(PatternSource::allTags(config, config.blocks), start, start + captured);
  CHECK(fast.tags() == expected);
  CHECK(slow.tags() == expected);
}

TEST_CASE("A synchronized clear mid-run drops data of both members at the same block",
          "[synchronized][graph]") {
  const auto config = groupStream();
  PatternSource pattern(config);
  GatedSource source(pattern, 300);
  Probe pacer("pacer");
  Probe fast("fast", Probe::Options{.keep_tags = true});
  Probe slow("slow", Probe::Options{.sleep_per_block = 100us, .keep_tags = true});
  SynchronizedMeasurements group;
  group.registerMeasurement(fast);
  group.registerMeasurement(slow);

  MeasurementGraph graph(source, GraphOptions{.max_blocks_in_flight = 8, .threads = 2});
  graph.add(pacer);
  graph.add(fast);
  graph.add(slow);
  auto run = graph.runAsync();
  waitForProgress(pacer, 300);
  group.clear();
  source.allowAll();
  run.get();

  CHECK(fast.isRunning());
  CHECK(slow.isRunning());
  const auto fast_starts = fast.captureStarts();
  REQUIRE(fast_starts.size() == 2);  // construction, then the clear
  const timestamp_t cleared_at = fast_starts[1].time;
  CHECK(cleared_at >= 250 * config.block_ps);
  CHECK(slow.captureStarts().at(1).time == cleared_at);
  const timestamp_t end = config.blocks * config.block_ps;
  CHECK(fast.getCaptureDuration() == end - cleared_at);
  CHECK(slow.getCaptureDuration() == end - cleared_at);
  const auto expected = tagsBetween(PatternSource::allTags(config, config.blocks), cleared_at, end);
  CHECK(fast.tags() == expected);
  CHECK(slow.tags() == expected);
}

TEST_CASE("SynchronizedMeasurements registration and an empty group", "[synchronized]") {
  Probe a("a");
  Probe b("b");
  SynchronizedMeasurements group;
  CHECK_FALSE(group.isRunning());
  CHECK(group.waitUntilFinished(0));
  group.registerMeasurement(a);
  REQUIRE_THROWS_AS(group.registerMeasurement(a), InvalidArgument);
  REQUIRE_THROWS_WITH(group.registerMeasurement(a), Contains("'a'"));
  group.registerMeasurement(b);
  b.stop();
  CHECK(group.isRunning());  // true if any member runs
  group.unregisterMeasurement(a);
  CHECK(group.size() == 1);
  CHECK_FALSE(group.isRunning());
  group.start();  // outside a graph both are at block 0: applied at once
  CHECK(b.isRunning());
  REQUIRE_THROWS_WITH(group.startFor(-3), Contains("-3"));
}

// Deterministic versions of the above: each member is fed by hand, the slow one lags.
TEST_CASE("A lagging member applies successive group actions in order at their blocks",
          "[synchronized]") {
  Probe fast("fast");
  Probe slow("slow");
  BlockFeeder feed_fast(fast);
  BlockFeeder feed_slow(slow);
  SynchronizedMeasurements group;
  group.registerMeasurement(fast);
  group.registerMeasurement(slow);
  const auto block = [](BlockFeeder& feeder, timestamp_t i) {
    feeder.feed(i * 100, (i + 1) * 100, {makeTimeTag(1, i * 100)});
  };
  for (timestamp_t i = 0; i < 5; ++i) block(feed_fast, i);
  for (timestamp_t i = 0; i < 2; ++i) block(feed_slow, i);
  group.stop();  // fast stops before block 5; slow must stop there too
  for (timestamp_t i = 5; i < 8; ++i) block(feed_fast, i);
  group.start();  // fast resumes at block 8; so must slow
  for (timestamp_t i = 8; i < 12; ++i) block(feed_fast, i);
  for (timestamp_t i = 2; i < 12; ++i) block(feed_slow, i);

  CHECK(fast.tagCount() == 9);  // blocks 0-4 and 8-11
  CHECK(slow.tagCount() == fast.tagCount());
  CHECK(slow.getCaptureDuration() == fast.getCaptureDuration());
  CHECK(slow.advances() == fast.advances());
}

TEST_CASE("A lagging stopped member is not finished before its startFor even began",
          "[synchronized][wait]") {
  Probe fast("fast");
  Probe slow("slow");
  BlockFeeder feed_fast(fast);
  BlockFeeder feed_slow(slow);
  SynchronizedMeasurements group;
  group.registerMeasurement(fast);
  group.registerMeasurement(slow);
  group.stop();
  for (timestamp_t i = 0; i < 3; ++i) feed_fast.feed(i * 100, (i + 1) * 100);
  feed_slow.feed(0, 100);
  group.startFor(200);  // fast starts at block 3 now; slow when it gets there
  CHECK_FALSE(slow.waitUntilFinished(0));
  CHECK_FALSE(group.waitUntilFinished(0));
  for (timestamp_t i = 3; i < 6; ++i) feed_fast.feed(i * 100, (i + 1) * 100);
  CHECK(fast.waitUntilFinished(0));
  CHECK_FALSE(slow.waitUntilFinished(0));
  for (timestamp_t i = 1; i < 6; ++i) feed_slow.feed(i * 100, (i + 1) * 100);
  CHECK(slow.waitUntilFinished(0));
  CHECK(group.waitUntilFinished(0));
  CHECK(fast.getCaptureDuration() == 200);
  CHECK(slow.getCaptureDuration() == 200);
  CHECK(slow.captureStarts().at(0).time == 300);
  CHECK(fast.captureStarts().at(0).time == 300);
}
