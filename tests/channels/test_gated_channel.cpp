// GatedChannel against its brute-force reference on random streams (input equal to the gate's
// start or stop channel included), and by hand: the gate falls back to its initial state at an
// overflow and at an Error, missed events pass while it is open and stay inside their interval.
#include <catch2/catch.hpp>

#include <memory>

#include "reference_check.hpp"
#include "tagflow/channels/gated_channel.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

ChannelUnderTest gated(channel_t input, channel_t start, channel_t stop, bool open) {
  return {"GatedChannel(" + std::to_string(input) + ", " + std::to_string(start) + ", " +
              std::to_string(stop) + (open ? ", open)" : ", closed)"),
          [=](const std::string& name) {
            return std::make_unique<GatedChannel>(name, input, start, stop, open);
          },
          [=](const std::vector<Tag>& stream, const std::vector<channel_t>& outputs) {
            return gatedReference(stream, input, start, stop, open, outputs.at(0));
          }};
}

std::vector<Tag> gatedOutput(const std::vector<DrainedBlock>& blocks, bool initially_open) {
  return outputsOf(recordOne(blocks, [=](const std::string& name) {
    return std::make_unique<GatedChannel>(name, 1, 2, 3, initially_open);
  }));
}

}  // namespace

TEST_CASE("GatedChannel matches its brute-force reference", "[channels][gated]") {
  for (std::uint64_t seed : {11, 12, 13}) {
    INFO("seed " << seed);
    const auto totals = checkAgainstReferences(
        randomStream(seed),
        {gated(1, 2, 3, false), gated(2, 2, 4, true), gated(3, 1, 3, false), gated(4, 3, 1, true)});
    CHECK(totals.time_tags > 500);
    CHECK(totals.missed > 0);
  }
}

TEST_CASE("GatedChannel falls back to its initial state at an overflow and at an Error",
          "[channels][gated][overflow]") {
  const TestStream stream{
      {makeTimeTag(1, 100), makeTimeTag(2, 200), makeTimeTag(1, 300),
       Tag{TagType::OverflowBegin, 0, 0, 0, 400}, Tag{TagType::MissedEvents, 0, 4, 1, 450},
       Tag{TagType::OverflowEnd, 0, 0, 0, 500}, makeTimeTag(1, 600), makeTimeTag(2, 700),
       makeTimeTag(1, 800), Tag{TagType::Error, 0, 0, 0, 900}, makeTimeTag(1, 1'000),
       makeTimeTag(2, 1'100), makeTimeTag(1, 1'100), makeTimeTag(3, 1'200), makeTimeTag(1, 1'300)},
      0,
      2'000};
  for (const auto& blocks :
       {oneBlock(stream), cutAt(stream, {350, 650, 950}), cutEvery(stream, 1)}) {
    INFO(blocks.size() << " blocks");
    const std::vector<Tag> expected_closed{makeTimeTag(1000, 300), makeTimeTag(1000, 800),
                                           makeTimeTag(1000, 1'100)};
    const std::string closed = firstDifference(gatedOutput(blocks, false), expected_closed);
    CHECK(closed == "");
    const std::vector<Tag> expected_open{makeTimeTag(1000, 100),
                                         makeTimeTag(1000, 300),
                                         Tag{TagType::MissedEvents, 0, 4, 1000, 450},
                                         makeTimeTag(1000, 600),
                                         makeTimeTag(1000, 800),
                                         makeTimeTag(1000, 1'000),
                                         makeTimeTag(1000, 1'100)};
    const std::string open = firstDifference(gatedOutput(blocks, true), expected_open);
    CHECK(open == "");
  }
}

TEST_CASE("GatedChannel: missed events passed on stay inside their overflow interval",
          "[channels][gated][overflow]") {
  const TestStream stream{
      {Tag{TagType::OverflowBegin, 0, 0, 0, 1'000}, Tag{TagType::MissedEvents, 0, 6, 1, 2'000},
       Tag{TagType::OverflowEnd, 0, 0, 0, 2'000}},
      0,
      5'000};
  const Recorded recorded = recordOne(oneBlock(stream), [](const std::string& name) {
    return std::make_unique<GatedChannel>(name, 1, 2, 3, true);
  });
  REQUIRE(outputsOf(recorded) == std::vector<Tag>{Tag{TagType::MissedEvents, 0, 6, 1000, 2'000}});
  std::string outside;
  for (const Tag& tag : recorded.missed_outside_overflow) outside += describeTag(tag) + " ";
  CHECK(outside == "");
}
