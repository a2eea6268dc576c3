// Measurements below virtual channels added to and removed from a running graph, and
// SynchronizedMeasurements whose members sit on different branches: each sees exactly the
// stream of a run of whole blocks, checked against the brute-force references.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "reference_check.hpp"
#include "tagflow/channels/delayed_channel.hpp"
#include "tagflow/channels/gated_channel.hpp"
#include "tagflow/core/synchronized_measurements.hpp"

using namespace tagflow;
using namespace tagflow::test;
using namespace std::chrono_literals;

namespace {

constexpr timestamp_t kDelay = 5'000;

struct LiveStream {
  TestStream stream = randomStream(91, StreamShape{.time_tags = 6000});
  std::vector<DrainedBlock> blocks = cutEvery(stream, 7);
  std::vector<Tag> delayed =
      canonicalOutput(realize(delayedReference(stream.tags, 1, kDelay, 1000), stream.tags, blocks));
  std::vector<Tag> gated = canonicalOutput(
      realize(gatedReference(stream.tags, 2, 3, 4, false, 1001), stream.tags, blocks));
};

// Waits until `recorder` has processed every block that ends at or before `time`.
void waitUntilPast(const Recorder& recorder, timestamp_t time) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (recorder.reachedTime() < time) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(200us);
  }
}

std::vector<Tag> between(const std::vector<Tag>& tags, timestamp_t from, timestamp_t to) {
  std::vector<Tag> out;
  for (const Tag& tag : tags) {
    if (tag.time >= from && tag.time < to) out.push_back(tag);
  }
  return out;
}

bool isBlockBoundary(const std::vector<DrainedBlock>& blocks, timestamp_t time) {
  for (const DrainedBlock& block : blocks) {
    if (block.begin == time || block.end == time) return true;
  }
  return false;
}

// Checks that `recorder`, below the DelayedChannel, saw exactly [from, to) of the stream.
void checkSaw(const Recorder& recorder, const LiveStream& live, timestamp_t from, timestamp_t to) {
  const Recorded recorded{{1000}, recorder.tags(), {}, recorder.orderError()};
  CHECK(firstDifference(outputsOf(recorded), between(live.delayed, from, to)) == "");
  CHECK(firstDifference(passedThrough(recorded), between(live.stream.tags, from, to)) == "");
  CHECK(recorded.order_error == "");
}

}  // namespace

TEST_CASE(
    "A measurement added below a virtual channel while the graph runs sees the stream "
    "from a block boundary on",
    "[channels][graph][live]") {
  const LiveStream live;
  ScriptedSource inner(live.blocks);
  GatedSource source(inner, 100);
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  auto& delayed = graph.emplace<DelayedChannel>("delayed", 1, kDelay);
  Recorder pacer("pacer", {1});  // reads the source's stream
  Recorder early("early", {delayed.getChannel()});
  graph.add(pacer);
  graph.add(early);
  auto run = graph.runAsync();
  waitUntilPast(pacer, live.blocks[99].end);

  Recorder late("late", {delayed.getChannel()});
  graph.add(late);
  source.allowAll();
  run.get();

  checkSaw(early, live, live.stream.begin, live.stream.end);
  REQUIRE(late.captureStarts().size() == 1);
  const timestamp_t start = late.captureStarts()[0];
  CHECK(isBlockBoundary(live.blocks, start));
  CHECK(start >= live.blocks[100].begin);
  CHECK(late.getCaptureDuration() == live.stream.end - start);
  checkSaw(late, live, start, live.stream.end);
}

TEST_CASE("remove() of a measurement below a virtual channel returns while the graph runs",
          "[channels][graph][live]") {
  const LiveStream live;
  ScriptedSource inner(live.blocks);
  Recorder pacer("pacer", {1}, 100us);
  Recorder leaving("leaving", {1000});

  SECTION("while blocks flow") {
    MeasurementGraph graph(inner, GraphOptions{.threads = 2});
    graph.emplace<DelayedChannel>("delayed", 1, kDelay);
    graph.add(pacer);
    graph.add(leaving);
    auto run = graph.runAsync();
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (leaving.recordedCount() < 200) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(100us);
    }
    graph.remove(leaving);
    const std::uint64_t seen = leaving.recordedCount();
    run.get();
    CHECK(leaving.recordedCount() == seen);
    const timestamp_t end = leaving.getCaptureDuration();  // the stream starts at 0
    CHECK(isBlockBoundary(live.blocks, end));
    CHECK(end < live.stream.end);
    checkSaw(leaving, live, live.stream.begin, end);
  }

  SECTION("while the source waits for data") {
    GatedSource source(inner, 100);
    MeasurementGraph graph(source, GraphOptions{.threads = 2});
    graph.emplace<DelayedChannel>("delayed", 1, kDelay);
    graph.add(pacer);
    graph.add(leaving);
    auto run = graph.runAsync();
    waitUntilPast(pacer, live.blocks[99].end);
    // Every block the source produced has been processed; removal must not wait for more.
    auto removal = std::async(std::launch::async, [&] { graph.remove(leaving); });
    const bool returned = removal.wait_for(3s) == std::future_status::ready;
    CHECK(returned);
    source.allowAll();
    removal.get();
    run.get();
    const timestamp_t end = leaving.getCaptureDuration();
    CHECK(isBlockBoundary(live.blocks, end));
    checkSaw(leaving, live, live.stream.begin, end);
  }
}

TEST_CASE("SynchronizedMeasurements on different branches process exactly the same blocks",
          "[channels][graph][synchronized]") {
  const LiveStream live;
  ScriptedSource inner(live.blocks);
  GatedSource source(inner, 100);
  MeasurementGraph graph(source, GraphOptions{.max_blocks_in_flight = 8, .threads = 2});
  auto& delayed = graph.emplace<DelayedChannel>("delayed", 1, kDelay);
  auto& gate = graph.emplace<GatedChannel>("gate", 2, 3, 4);
  REQUIRE(gate.getChannel() == 1001);
  Recorder pacer("pacer", {1});  // reads the source's stream
  Recorder fast("fast", {delayed.getChannel()});
  Recorder slow("slow", {gate.getChannel()}, 100us);
  SynchronizedMeasurements group;
  group.registerMeasurement(fast);
  group.registerMeasurement(slow);
  graph.add(pacer);
  graph.add(fast);
  graph.add(slow);
  auto run = graph.runAsync();
  waitUntilPast(pacer, live.blocks[99].end);

  const timestamp_t duration = 150'000;
  group.startFor(duration);
  source.allowAll();
  REQUIRE(group.waitUntilFinished(60'000));
  run.get();

  CHECK(fast.getCaptureDuration() == duration);
  CHECK(slow.getCaptureDuration() == duration);
  const timestamp_t start = fast.captureStarts().back();
  CHECK(slow.captureStarts().back() == start);
  CHECK(isBlockBoundary(live.blocks, start));
  REQUIRE(start + duration < live.stream.end);
  checkSaw(fast, live, start, start + duration);
  const Recorded gated{{1001}, slow.tags(), {}, slow.orderError()};
  CHECK(firstDifference(outputsOf(gated), between(live.gated, start, start + duration)) == "");
  CHECK(firstDifference(passedThrough(gated), between(live.stream.tags, start, start + duration)) ==
        "");
}
