// The lifecycle of spec 2.3 as measurement.hpp documents it: auto-start, start/stop keep
// data, clear drops it, startFor cuts exactly at its duration (also inside a block), capture
// duration counts only stream time processed while running. Blocks are fed directly.
#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "support/probe.hpp"
#include "support/reference.hpp"
#include "tagflow/core/error.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

// One tag every `step` ps on channel 1 in [begin, end).
std::vector<Tag> evenTags(timestamp_t begin, timestamp_t end, timestamp_t step) {
  std::vector<Tag> tags;
  for (timestamp_t t = begin; t < end; t += step) tags.push_back(makeTimeTag(1, t));
  return tags;
}

}  // namespace

TEST_CASE("A measurement runs from construction and captures every block", "[lifecycle]") {
  Probe probe("probe");
  REQUIRE(probe.isRunning());
  REQUIRE(probe.getCaptureDuration() == 0);
  BlockFeeder feed(probe);
  feed.feed(0, 100, {makeTimeTag(1, 10), makeTimeTag(2, 20)});
  feed.feed(100, 250);  // empty block: time still advances
  CHECK(probe.getCaptureDuration() == 250);
  CHECK(probe.tagCount() == 2);
  CHECK(probe.advances() == std::vector<timestamp_t>{100, 250});
  REQUIRE(probe.captureStarts().size() == 1);
  CHECK(probe.captureStarts()[0].time == 0);
  CHECK(probe.captureStarts()[0].fresh);
}

TEST_CASE("stop keeps data and skips blocks, start continues without clearing", "[lifecycle]") {
  Probe probe("probe");
  BlockFeeder feed(probe);
  feed.feed(0, 100, evenTags(0, 100, 25));  // 4 tags
  probe.stop();
  CHECK_FALSE(probe.isRunning());
  CHECK(probe.tagCount() == 4);
  feed.feed(100, 200, evenTags(100, 200, 10));  // ignored
  CHECK(probe.tagCount() == 4);
  CHECK(probe.getCaptureDuration() == 100);
  probe.start();
  CHECK(probe.isRunning());
  feed.feed(200, 300, evenTags(200, 300, 50));  // 2 tags
  CHECK(probe.tagCount() == 6);
  CHECK(probe.getCaptureDuration() == 200);
  CHECK(probe.clears() == 0);
  const auto starts = probe.captureStarts();
  REQUIRE(starts.size() == 2);
  CHECK(starts[1].time == 200);
  CHECK_FALSE(starts[1].fresh);  // resumed, not a fresh capture
  probe.start();                 // start while running changes nothing
  CHECK(probe.isRunning());
  CHECK(probe.tagCount() == 6);
}

TEST_CASE("clear drops data and capture duration but keeps the running state", "[lifecycle]") {
  Probe probe("probe");
  BlockFeeder feed(probe);
  feed.feed(0, 100, evenTags(0, 100, 10));
  probe.clear();
  CHECK(probe.isRunning());
  CHECK(probe.tagCount() == 0);
  CHECK(probe.getCaptureDuration() == 0);
  CHECK(probe.clears() == 1);
  feed.feed(100, 180, evenTags(100, 180, 10));
  CHECK(probe.tagCount() == 8);
  CHECK(probe.getCaptureDuration() == 80);
  REQUIRE(probe.captureStarts().size() == 2);
  CHECK(probe.captureStarts()[1].time == 100);
  CHECK(probe.captureStarts()[1].fresh);

  probe.stop();
  probe.clear();
  CHECK_FALSE(probe.isRunning());
  CHECK(probe.tagCount() == 0);
  CHECK(probe.getCaptureDuration() == 0);
}

TEST_CASE("startFor clears, then cuts exactly at its duration inside a block", "[lifecycle]") {
  Probe probe("probe");
  BlockFeeder feed(probe);
  std::vector<Tag> all;
  const auto block = [&](timestamp_t begin, timestamp_t end) {
    auto tags = evenTags(begin, end, 7);
    all.insert(all.end(), tags.begin(), tags.end());
    feed.feed(begin, end, tags);
  };
  block(0, 1000);
  const timestamp_t duration = 2555;
  probe.startFor(duration);
  CHECK(probe.isRunning());
  CHECK(probe.tagCount() == 0);  // cleared
  block(1000, 2000);
  block(2000, 3000);
  CHECK(probe.isRunning());
  block(3000, 4000);  // the cut 3555 lies inside this block
  CHECK_FALSE(probe.isRunning());
  CHECK(probe.getCaptureDuration() == duration);
  CHECK(probe.tagCount() == countTimeTags(all, 1, 1000, 1000 + duration));
  CHECK(probe.advances().back() == 1000 + duration);
  block(4000, 5000);  // after the run: ignored
  CHECK(probe.getCaptureDuration() == duration);
  CHECK(probe.tagCount() == countTimeTags(all, 1, 1000, 1000 + duration));
  CHECK(probe.waitUntilFinished(0));
}

TEST_CASE("startFor ending exactly on a block edge stops after that block", "[lifecycle]") {
  Probe probe("probe");
  BlockFeeder feed(probe);
  probe.startFor(2000);
  feed.feed(0, 1000, evenTags(0, 1000, 100));
  CHECK(probe.isRunning());
  feed.feed(1000, 2000, evenTags(1000, 2000, 100));
  CHECK_FALSE(probe.isRunning());
  CHECK(probe.getCaptureDuration() == 2000);
  CHECK(probe.tagCount() == 20);
}

TEST_CASE("startFor without clear adds its duration to the data so far", "[lifecycle]") {
  Probe probe("probe");
  BlockFeeder feed(probe);
  feed.feed(0, 1000, evenTags(0, 1000, 10));  // 100 tags
  probe.startFor(500, false);
  feed.feed(1000, 2000, evenTags(1000, 2000, 10));  // 50 of them before the cut
  CHECK_FALSE(probe.isRunning());
  CHECK(probe.getCaptureDuration() == 1500);
  CHECK(probe.tagCount() == 150);
  CHECK(probe.clears() == 0);
}

TEST_CASE("startFor rejects a duration that is not positive", "[lifecycle]") {
  Probe probe("probe");
  REQUIRE_THROWS_AS(probe.startFor(0), InvalidArgument);
  REQUIRE_THROWS_WITH(probe.startFor(-5), Contains("-5") && Contains("probe"));
  CHECK(probe.isRunning());  // unchanged
}

TEST_CASE("Special tags reach their hooks in order, time advanced to each first", "[lifecycle]") {
  Probe probe("probe");
  BlockFeeder feed(probe);
  const std::vector<Tag> tags{makeTimeTag(1, 10),
                              Tag{TagType::OverflowBegin, 0, 0, 0, 20},
                              Tag{TagType::MissedEvents, 0, 5, 1, 30},
                              Tag{TagType::OverflowEnd, 0, 0, 0, 30},
                              makeTimeTag(1, 40),
                              Tag{TagType::Error, 0, 0, 0, 50}};
  feed.feed(0, 100, tags);
  CHECK(probe.advances() == std::vector<timestamp_t>{20, 30, 30, 50, 100});
  const auto specials = probe.specials();
  REQUIRE(specials.size() == 4);
  CHECK(specials[0] == tags[1]);
  CHECK(specials[1] == tags[2]);
  CHECK(specials[2] == tags[3]);
  CHECK(specials[3] == tags[5]);
  CHECK(probe.tagCount() == 2);
  CHECK(probe.getOverflowCount() == 1);
  CHECK(probe.orderError().empty());
  probe.clear();
  CHECK(probe.getOverflowCount() == 0);
}

TEST_CASE("An overflow that begins while stopped is still known after start", "[lifecycle]") {
  Probe probe("probe");
  BlockFeeder feed(probe);
  probe.stop();
  feed.feed(0, 100, {Tag{TagType::OverflowBegin, 0, 0, 0, 50}});
  probe.start();
  feed.feed(100, 200, {makeTimeTag(1, 150)});
  CHECK(probe.getResults().facts.getBool("in_overflow", false));
  CHECK(probe.getOverflowCount() == 0);  // it began while stopped
  feed.feed(200, 300, {Tag{TagType::OverflowEnd, 0, 0, 0, 250}});
  CHECK_FALSE(probe.getResults().facts.getBool("in_overflow", true));
}

TEST_CASE("Overflow tags after a startFor cut are still known after start", "[lifecycle]") {
  const Tag begin_at_5{TagType::OverflowBegin, 0, 0, 0, 5};
  const Tag end_at_30{TagType::OverflowEnd, 0, 0, 0, 30};
  const Tag begin_at_30{TagType::OverflowBegin, 0, 0, 0, 30};
  const Tag end_at_50{TagType::OverflowEnd, 0, 0, 0, 50};
  const Tag begin_at_50{TagType::OverflowBegin, 0, 0, 0, 50};
  // The cut at 40 lies inside the block; the tags after it decide the state at the next start.
  const std::pair<std::vector<Tag>, bool> cases[] = {
      {{makeTimeTag(1, 10), begin_at_30, end_at_50, makeTimeTag(1, 60)}, false},
      {{begin_at_5, makeTimeTag(1, 10), end_at_30, begin_at_50, makeTimeTag(1, 60)}, true}};
  for (const auto& [tags, in_overflow_after] : cases) {
    INFO("in an overflow after the cut: " << in_overflow_after);
    Probe probe("probe");
    BlockFeeder feed(probe);
    probe.startFor(40);
    feed.feed(0, 100, tags);
    CHECK_FALSE(probe.isRunning());
    CHECK(probe.tagCount() == 1);
    probe.start();
    feed.feed(100, 200, {makeTimeTag(1, 150)});
    CHECK(probe.getResults().facts.getBool("in_overflow", !in_overflow_after) == in_overflow_after);
  }
}

TEST_CASE("getResults carries name, kind, parameters and run facts", "[lifecycle]") {
  Probe probe("probe", Probe::Options{.keep_tags = true});
  BlockFeeder feed(probe);
  feed.feed(0, 300, {makeTimeTag(1, 1), Tag{TagType::OverflowBegin, 0, 0, 0, 2}});
  probe.stop();
  const ResultSet result = probe.getResults();
  CHECK(result.kind == "Probe");
  CHECK(result.name == "probe");
  CHECK(result.parameters.getBool("keep_tags", false));
  CHECK(result.facts.getInt("capture_duration_ps") == 300);
  CHECK(result.facts.getInt("overflow_count") == 1);
  CHECK_FALSE(result.facts.getBool("running", true));
  CHECK(std::get<std::vector<std::uint64_t>>(result.array("tag_count").data) ==
        std::vector<std::uint64_t>{1});
  REQUIRE_THROWS_WITH(result.array("nope"), Contains("'nope'"));
}

TEST_CASE("A measurement needs a name", "[lifecycle]") {
  REQUIRE_THROWS_AS(Probe(""), InvalidArgument);
}
