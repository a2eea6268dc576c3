// FrequencyMultiplier against its brute-force reference on random streams; by hand: the
// interpolated tags of a steady clock, early inputs dropping the predictions at or after them,
// the period forgotten at an overflow and at an Error, predictions inside an overflow turned
// into missed events and predictions owed at an Error dropped.
#include <catch2/catch.hpp>

#include <memory>

#include "reference_check.hpp"
#include "tagflow/channels/frequency_multiplier.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

ChannelUnderTest multiplier(channel_t input, std::int64_t factor) {
  return {"FrequencyMultiplier(" + std::to_string(input) + ", " + std::to_string(factor) + ")",
          [=](const std::string& name) {
            return std::make_unique<FrequencyMultiplier>(name, input, factor);
          },
          [=](const std::vector<Tag>& stream, const std::vector<channel_t>& outputs) {
            return frequencyMultiplierReference(stream, input, factor, outputs.at(0));
          }};
}

std::vector<Tag> multiplied(const std::vector<DrainedBlock>& blocks, std::int64_t factor) {
  return outputsOf(recordOne(blocks, [=](const std::string& name) {
    return std::make_unique<FrequencyMultiplier>(name, 1, factor);
  }));
}

}  // namespace

TEST_CASE("FrequencyMultiplier matches its brute-force reference", "[channels][multiplier]") {
  for (std::uint64_t seed : {51, 52, 53}) {
    INFO("seed " << seed);
    const auto totals = checkAgainstReferences(
        randomStream(seed),
        {multiplier(1, 1), multiplier(1, 2), multiplier(2, 3), multiplier(1, 4), multiplier(2, 5),
         multiplier(3, 7), multiplier(1, 8), multiplier(2, 12)});
    CHECK(totals.time_tags > 5000);
    CHECK(totals.missed > 0);
  }
}

TEST_CASE("FrequencyMultiplier interpolates a steady clock exactly", "[channels][multiplier]") {
  std::vector<Tag> clock;
  for (timestamp_t k = 0; k < 50; ++k) clock.push_back(makeTimeTag(1, 1'000 + 3'000 * k));
  const TestStream stream{clock, 0, 1'000 + 3'000 * 49 + 1};
  std::vector<Tag> expected;
  // Tags at 1000 + 1000 j; the predictions after the last input lie past the stream's end.
  for (timestamp_t j = 0; j <= 3 * 49; ++j)
    expected.push_back(makeTimeTag(1000, 1'000 + 1'000 * j));
  // After the first input nothing is predicted: the period is not known yet.
  expected.erase(expected.begin() + 1, expected.begin() + 3);
  for (const auto& blocks : {oneBlock(stream), cutEvery(stream, 1), cutEvery(stream, 7)}) {
    const std::string difference = firstDifference(multiplied(blocks, 3), expected);
    CHECK(difference == "");
  }
}

TEST_CASE("FrequencyMultiplier forgets the period at an overflow and at an Error",
          "[channels][multiplier][overflow]") {
  const TestStream stream{
      {makeTimeTag(1, 0), makeTimeTag(1, 1'000),     // period 1000
       makeTimeTag(1, 1'500),                        // early: 1500 and 1750
       Tag{TagType::OverflowBegin, 0, 0, 0, 1'600},  // 1750 missed
       Tag{TagType::OverflowEnd, 0, 0, 0, 1'800},
       makeTimeTag(1, 3'000),  // repeated alone: period forgotten
       makeTimeTag(1, 4'000),  // predicts 4500, dropped by the Error
       Tag{TagType::Error, 0, 0, 0, 4'400}, makeTimeTag(1, 6'000), makeTimeTag(1, 6'400)},
      0,
      7'000};
  const std::vector<Tag> expected{
      makeTimeTag(1000, 0),     makeTimeTag(1000, 1'000),
      makeTimeTag(1000, 1'500), Tag{TagType::MissedEvents, 0, 1, 1000, 1'750},
      makeTimeTag(1000, 3'000), makeTimeTag(1000, 4'000),
      makeTimeTag(1000, 6'000), makeTimeTag(1000, 6'400),
      makeTimeTag(1000, 6'600)};
  for (const auto& blocks :
       {oneBlock(stream), cutEvery(stream, 1), cutAt(stream, {1'700, 4'450})}) {
    INFO(blocks.size() << " blocks");
    const std::string difference = firstDifference(multiplied(blocks, 2), expected);
    CHECK(difference == "");
  }
}
