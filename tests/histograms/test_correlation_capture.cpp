// When Correlation counts: a channel_1 event at t pairs with channel_2 events up to t - lo, so
// it is held back until the stream has passed t - lo (a live snapshot lags by at most half the
// window) and counted at the latest when the capture ends: end of stream, or a startFor() run
// that ends inside a block, after which nothing later is counted.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "support/generators.hpp"
#include "support/pairs.hpp"
#include "support/probe.hpp"
#include "support/reference.hpp"
#include "tagflow/measurements/correlation.hpp"

using namespace tagflow;
using namespace tagflow::test;

TEST_CASE("Correlation holds a channel_1 event back until the stream has passed t - lo",
          "[correlation][capture]") {
  // binwidth 10, 10 bins: lo = -50, bin = (tau + 50) / 10.
  Correlation correlation("c", 1, 2, 10, 10);
  BlockFeeder feeder(correlation);
  feeder.feed(0, 95, {makeTimeTag(1, 50), makeTimeTag(2, 90)});  // tau = -40, bin 1
  CHECK(correlation.getData() == std::vector<std::int64_t>(10, 0));
  feeder.feed(95, 100);  // empty; a partner at 100 ps (tau = lo) could still come
  CHECK(correlation.getData() == std::vector<std::int64_t>(10, 0));
  // The partner at exactly t - lo = 100 is in the next block: tau = -50 is bin 0's left edge.
  feeder.feed(100, 101, {makeTimeTag(2, 100)});
  CHECK(correlation.getData() == std::vector<std::int64_t>{1, 1, 0, 0, 0, 0, 0, 0, 0, 0});
  correlation.streamEnded();
  CHECK(correlation.getData() == std::vector<std::int64_t>{1, 1, 0, 0, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("Correlation counts the held-back events when the stream ends",
          "[correlation][capture]") {
  Correlation correlation("c", 1, 2, 10, 10);
  BlockFeeder feeder(correlation);
  feeder.feed(0, 200, {makeTimeTag(2, 180), makeTimeTag(1, 190)});  // tau = +10, bin 6
  feeder.feed(200, 210, {makeTimeTag(2, 205)});                     // tau = -15, bin 3
  CHECK(correlation.getData() == std::vector<std::int64_t>(10, 0));
  correlation.streamEnded();
  CHECK(correlation.getData() == std::vector<std::int64_t>{0, 0, 0, 1, 0, 0, 1, 0, 0, 0});
}

TEST_CASE("Correlation results after a finished run include the end of the stream",
          "[correlation][capture]") {
  // Dense pairs right up to the end: the last events' partners lie after them.
  constexpr timestamp_t kEnd = 1'000'000;
  std::vector<Tag> tags = randomTags(71, {1, 2}, 0, kEnd, 150.0);
  tags.push_back(makeTimeTag(2, kEnd + 10));  // the last channel_2 tag comes after the last 1
  const timestamp_t end = kEnd + 11;
  Correlation correlation("c", 1, 2, 100, 30);
  Correlation self("auto", 2, CHANNEL_UNUSED, 100, 31);
  runMemory(tags, GENERATE(1, 64, 100'000), 0, end, {&correlation, &self});
  const auto ref = correlationReference(tags, 1, 2, 100, 30, 0, end);
  CHECK(correlation.getData() == ref.counts);
  CHECK(self.getData() == correlationReference(tags, 2, CHANNEL_UNUSED, 100, 31, 0, end).counts);
  CHECK(correlation.getEventCounts() == std::pair<std::uint64_t, std::uint64_t>{ref.n1, ref.n2});
}

TEST_CASE("Correlation startFor cut inside a block counts exactly the pairs before the cut",
          "[correlation][capture]") {
  constexpr timestamp_t kEnd = 2'000'000;
  const std::vector<Tag> tags = randomTags(72, {1, 2}, 0, kEnd, 200.0);
  // Blocks of 1000 tags span ~100 ns each; 1'234'567 ps lies inside one of them.
  constexpr timestamp_t kDuration = 1'234'567;
  Correlation correlation("c", 1, 2, 100, 30);
  Correlation self("auto", 1, CHANNEL_UNUSED, 100, 30);
  correlation.startFor(kDuration);
  self.startFor(kDuration);
  runMemory(tags, 1000, 0, kEnd, {&correlation, &self});
  CHECK_FALSE(correlation.isRunning());
  CHECK(correlation.getCaptureDuration() == kDuration);
  const auto ref = correlationReference(tags, 1, 2, 100, 30, 0, kDuration);
  CHECK(correlation.getData() == ref.counts);
  CHECK(correlation.getEventCounts() == std::pair<std::uint64_t, std::uint64_t>{ref.n1, ref.n2});
  CHECK(sameValues(correlation.getDataNormalized(), ref.normalized(), 1e-12));
  CHECK(self.getData() ==
        correlationReference(tags, 1, CHANNEL_UNUSED, 100, 30, 0, kDuration).counts);
  // The whole stream would have given more pairs: the cut is real.
  CHECK(ref.counts != correlationReference(tags, 1, 2, 100, 30, 0, kEnd).counts);
}
