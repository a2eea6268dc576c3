// DelayedChannel against its brute-force reference on random streams (equal times, overflows,
// Errors, block sizes from 1 tag to the whole stream), and by hand: copies owed inside an
// overflow become MissedEvents, an Error drops the copies still owed, missed events of the
// input are passed on and stay inside their overflow interval.
#include <catch2/catch.hpp>

#include <memory>

#include "reference_check.hpp"
#include "tagflow/channels/delayed_channel.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

ChannelUnderTest delayed(channel_t input, timestamp_t delay) {
  return {
      "DelayedChannel(" + std::to_string(input) + ", " + std::to_string(delay) + ")",
      [=](const std::string& name) { return std::make_unique<DelayedChannel>(name, input, delay); },
      [=](const std::vector<Tag>& stream, const std::vector<channel_t>& outputs) {
        return delayedReference(stream, input, delay, outputs.at(0));
      }};
}

}  // namespace

TEST_CASE("DelayedChannel matches its brute-force reference", "[channels][delayed]") {
  for (std::uint64_t seed : {1, 2, 3}) {
    INFO("seed " << seed);
    const auto totals = checkAgainstReferences(
        randomStream(seed),
        {delayed(1, 0), delayed(2, 137), delayed(3, 5'000), delayed(4, 250'000)});
    CHECK(totals.time_tags > 1000);
    CHECK(totals.missed > 0);
  }
}

TEST_CASE(
    "DelayedChannel: copies owed inside an overflow become missed events, an Error drops "
    "the copies still owed",
    "[channels][delayed][overflow]") {
  const TestStream stream{
      {makeTimeTag(1, 100), makeTimeTag(1, 200), makeTimeTag(1, 1'000),
       Tag{TagType::OverflowBegin, 0, 0, 0, 1'000}, Tag{TagType::MissedEvents, 0, 7, 1, 1'500},
       Tag{TagType::MissedEvents, 0, 9, 2, 1'500}, Tag{TagType::OverflowEnd, 0, 0, 0, 2'000},
       makeTimeTag(1, 2'000), makeTimeTag(1, 2'500), makeTimeTag(2, 2'600),
       Tag{TagType::Error, 0, 0, 0, 3'000}, makeTimeTag(1, 3'100)},
      0,
      10'000};
  // 100 and 200 fall inside the overflow (count 1 each), 1000 lands on the OverflowEnd's time
  // (outside), 2000 and 2500 were still owed at the Error (3000 and 3500 ps), 3100 survives.
  const std::vector<Tag> expected{Tag{TagType::MissedEvents, 0, 1, 1000, 1'100},
                                  Tag{TagType::MissedEvents, 0, 1, 1000, 1'200},
                                  Tag{TagType::MissedEvents, 0, 7, 1000, 1'500},
                                  makeTimeTag(1000, 2'000), makeTimeTag(1000, 4'100)};
  for (const auto& blocks :
       {oneBlock(stream), cutAt(stream, {150, 1'050, 2'600, 3'050}), cutEvery(stream, 1)}) {
    INFO(blocks.size() << " blocks");
    const Recorded recorded = recordOne(blocks, [](const std::string& name) {
      return std::make_unique<DelayedChannel>(name, 1, 1'000);
    });
    REQUIRE(recorded.outputs == std::vector<channel_t>{1000});
    const std::string difference = firstDifference(outputsOf(recorded), expected);
    CHECK(difference == "");
    CHECK(passedThrough(recorded) == stream.tags);
  }
}

TEST_CASE("DelayedChannel: missed events passed on stay inside their overflow interval",
          "[channels][delayed][overflow]") {
  // The header promises the loss stays visible inside the same overflow interval; a time
  // tagger reports missed events up to the OverflowEnd's time.
  const TestStream stream{
      {makeTimeTag(1, 100), Tag{TagType::OverflowBegin, 0, 0, 0, 1'000},
       Tag{TagType::MissedEvents, 0, 5, 1, 1'400}, Tag{TagType::MissedEvents, 0, 3, 1, 2'000},
       Tag{TagType::OverflowEnd, 0, 0, 0, 2'000}, makeTimeTag(1, 2'100)},
      0,
      5'000};
  for (const auto& blocks : {oneBlock(stream), cutAt(stream, {1'500})}) {
    const Recorded recorded = recordOne(blocks, [](const std::string& name) {
      return std::make_unique<DelayedChannel>(name, 1, 10);
    });
    std::uint64_t passed_on = 0;
    for (const Tag& tag : outputsOf(recorded)) {
      passed_on += tag.type == TagType::MissedEvents ? tag.missed_events : 0;
    }
    CHECK(passed_on == 8);
    std::string outside;
    for (const Tag& tag : recorded.missed_outside_overflow) outside += describeTag(tag) + " ";
    CHECK(outside == "");
  }
}
