// EventGenerator against its brute-force reference on random streams (dividers, offsets, stop
// channels, stop == trigger); by hand: pattern tags inside an overflow become missed events, an
// overflow restarts the divider count, an Error drops the pattern still owed, a stop aborts the
// tags after it.
#include <catch2/catch.hpp>

#include <memory>

#include "reference_check.hpp"
#include "tagflow/channels/event_generator.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

ChannelUnderTest generator(channel_t trigger, std::vector<timestamp_t> pattern,
                           std::int64_t divider, std::int64_t offset, channel_t stop) {
  return {"EventGenerator(" + std::to_string(trigger) + ", " + std::to_string(pattern.size()) +
              " offsets, " + std::to_string(divider) + ", " + std::to_string(offset) + ", " +
              std::to_string(stop) + ")",
          [=](const std::string& name) {
            return std::make_unique<EventGenerator>(name, trigger, pattern, divider, offset, stop);
          },
          [=](const std::vector<Tag>& stream, const std::vector<channel_t>& outputs) {
            return eventGeneratorReference(stream, trigger, pattern, divider, offset, stop,
                                           outputs.at(0));
          }};
}

}  // namespace

TEST_CASE("EventGenerator matches its brute-force reference", "[channels][generator]") {
  for (std::uint64_t seed : {61, 62, 63}) {
    INFO("seed " << seed);
    const auto totals = checkAgainstReferences(
        randomStream(seed),
        {generator(1, {0, 50, 400}, 1, 0, CHANNEL_UNUSED), generator(2, {3'000, 10}, 3, 1, 3),
         generator(4, {100, 200, 5'000}, 1, 0, 4), generator(3, {0, 700, 30'000}, 2, 0, 1)});
    CHECK(totals.time_tags > 2000);
    CHECK(totals.missed > 0);
  }
}

TEST_CASE("EventGenerator: overflow and Error", "[channels][generator][overflow]") {
  const TestStream stream{
      {makeTimeTag(1, 0),    // counted (0): 100, 900
       makeTimeTag(1, 200),  // not counted (1)
       makeTimeTag(1, 400),  // counted (2): 500, 1300 (missed)
       Tag{TagType::OverflowBegin, 0, 0, 0, 1'200}, Tag{TagType::OverflowEnd, 0, 0, 0, 1'500},
       makeTimeTag(1, 1'600),                // counted again (0 after the overflow)
       makeTimeTag(1, 1'650),                // not counted
       Tag{TagType::Error, 0, 0, 0, 2'000},  // drops 2500
       makeTimeTag(1, 3'000),                // counted (0 after the Error): 3100, 3900
       makeTimeTag(2, 3'100),                // stop: 3900 aborted, 3100 still counts
       makeTimeTag(1, 3'200)},               // not counted
      0,
      5'000};
  const std::vector<Tag> expected{
      makeTimeTag(1000, 100),   makeTimeTag(1000, 500),
      makeTimeTag(1000, 900),   Tag{TagType::MissedEvents, 0, 1, 1000, 1'300},
      makeTimeTag(1000, 1'700), makeTimeTag(1000, 3'100)};
  for (const auto& blocks :
       {oneBlock(stream), cutEvery(stream, 1), cutAt(stream, {1'300, 2'600})}) {
    INFO(blocks.size() << " blocks");
    const auto output = outputsOf(recordOne(blocks, [](const std::string& name) {
      return std::make_unique<EventGenerator>(name, 1, std::vector<timestamp_t>{900, 100}, 2, 0, 2);
    }));
    const std::string difference = firstDifference(output, expected);
    CHECK(difference == "");
  }
}
