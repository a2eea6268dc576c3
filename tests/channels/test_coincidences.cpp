// Coincidence and Coincidences against their brute-force reference on random streams, for every
// timestamp choice and several groups sharing channels; by hand: a coincidence stamped before
// the start of the block in which it completes is placed at that block's start, and the tags
// seen are forgotten at an overflow and at an Error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "reference_check.hpp"
#include "tagflow/channels/coincidences.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

ChannelUnderTest coincidences(std::vector<std::vector<channel_t>> groups, timestamp_t window,
                              CoincidenceTimestamp timestamp) {
  std::string label = "Coincidences(";
  for (const auto& group : groups) {
    label += "{";
    for (channel_t channel : group) label += std::to_string(channel) + " ";
    label += "}";
  }
  label += ", " + std::to_string(window) + ", " + std::string(toString(timestamp)) + ")";
  return {label,
          [=](const std::string& name) -> std::unique_ptr<VirtualChannel> {
            if (groups.size() == 1) {
              return std::make_unique<Coincidence>(name, groups[0], window, timestamp);
            }
            return std::make_unique<Coincidences>(name, groups, window, timestamp);
          },
          [=](const std::vector<Tag>& stream, const std::vector<channel_t>& outputs) {
            REQUIRE(outputs.size() == groups.size());
            for (std::size_t g = 1; g < outputs.size(); ++g) {
              REQUIRE(outputs[g] == outputs[0] + static_cast<channel_t>(g));
            }
            return coincidencesReference(stream, groups, window, timestamp, outputs.at(0));
          }};
}

constexpr CoincidenceTimestamp kAllTimestamps[] = {
    CoincidenceTimestamp::Last, CoincidenceTimestamp::Average, CoincidenceTimestamp::First,
    CoincidenceTimestamp::ListedFirst};

std::vector<Tag> coincidenceOutput(const std::vector<DrainedBlock>& blocks,
                                   std::vector<channel_t> channels, CoincidenceTimestamp stamp) {
  return outputsOf(recordOne(blocks, [=](const std::string& name) {
    return std::make_unique<Coincidence>(name, channels, 1'000, stamp);
  }));
}

}  // namespace

TEST_CASE("Coincidence matches its brute-force reference for every timestamp choice",
          "[channels][coincidence]") {
  for (std::uint64_t seed : {31, 32, 33}) {
    INFO("seed " << seed);
    std::vector<ChannelUnderTest> cases;
    for (CoincidenceTimestamp stamp : kAllTimestamps) {
      cases.push_back(coincidences({{1, 2}}, 300, stamp));
      cases.push_back(coincidences({{3, 1, 2}}, 1'000, stamp));
    }
    const auto totals = checkAgainstReferences(randomStream(seed), cases);
    CHECK(totals.time_tags > 2000);
  }
}

TEST_CASE("Coincidences with groups sharing channels match their brute-force reference",
          "[channels][coincidence]") {
  for (std::uint64_t seed : {34, 35}) {
    INFO("seed " << seed);
    std::vector<ChannelUnderTest> cases;
    for (CoincidenceTimestamp stamp : kAllTimestamps) {
      cases.push_back(coincidences({{1, 2}, {2, 3, 4}, {4, 1}, {3, 2}}, 500, stamp));
    }
    cases.push_back(coincidences({{1, 2}, {1, 2, 3, 4}}, 1, CoincidenceTimestamp::Average));
    const auto totals = checkAgainstReferences(randomStream(seed), cases);
    CHECK(totals.time_tags > 2000);
  }
}

TEST_CASE("Pairs sharing a channel that complete several coincidences a tag match the reference",
          "[channels][coincidence]") {
  // Channels 2, 3 and 4 fire once, then every tag of channel 1 completes each of its groups:
  // two or three coincidences a tag, more than a block's output holds when written in one
  // pass (the pass must hand the block to the general path, state untouched).
  TestStream stream{{makeTimeTag(2, 0), makeTimeTag(3, 1), makeTimeTag(4, 2)}, 0, 0};
  for (timestamp_t time = 10; time <= 30'000; time += 10) {
    stream.tags.push_back(makeTimeTag(1, time));
  }
  stream.end = 30'001;
  // A fourth channel pairs with 1 now and then, so that some blocks stay on the fast path.
  for (timestamp_t time = 15; time <= 30'000; time += 1'000) {
    stream.tags.push_back(makeTimeTag(5, time));
  }
  std::sort(stream.tags.begin(), stream.tags.end(), canonicalTagOrder);
  const auto totals = checkAgainstReferences(
      stream, {coincidences({{1, 2}, {1, 3}}, 1'000'000, CoincidenceTimestamp::Last),
               coincidences({{1, 2}, {1, 3}, {1, 4}}, 1'000'000, CoincidenceTimestamp::Last),
               coincidences({{5, 1}, {1, 2}}, 100, CoincidenceTimestamp::Last)});
  // Per block size: 2 and 3 a tag of channel 1, and the few pairs of 5 and 1 within 100 ps.
  CHECK(totals.time_tags >= blockSizesToTest().size() * 5 * 3'000);
}

TEST_CASE("A coincidence stamped before its block's start is placed at that block's start",
          "[channels][coincidence][blocks]") {
  const TestStream stream{
      {makeTimeTag(1, 100), makeTimeTag(2, 300), makeTimeTag(1, 2'000), makeTimeTag(2, 2'000)},
      0,
      3'000};
  const auto whole = oneBlock(stream);
  const auto split = cutAt(stream, {250, 1'000});  // the first pair straddles 250
  SECTION("Last never reaches back") {
    const std::vector<Tag> expected{makeTimeTag(1000, 300), makeTimeTag(1000, 2'000)};
    CHECK(coincidenceOutput(whole, {1, 2}, CoincidenceTimestamp::Last) == expected);
    CHECK(coincidenceOutput(split, {1, 2}, CoincidenceTimestamp::Last) == expected);
  }
  SECTION("First") {
    CHECK(coincidenceOutput(whole, {1, 2}, CoincidenceTimestamp::First) ==
          std::vector<Tag>{makeTimeTag(1000, 100), makeTimeTag(1000, 2'000)});
    CHECK(coincidenceOutput(split, {1, 2}, CoincidenceTimestamp::First) ==
          std::vector<Tag>{makeTimeTag(1000, 250), makeTimeTag(1000, 2'000)});
  }
  SECTION("Average") {
    CHECK(coincidenceOutput(whole, {1, 2}, CoincidenceTimestamp::Average) ==
          std::vector<Tag>{makeTimeTag(1000, 200), makeTimeTag(1000, 2'000)});
    CHECK(coincidenceOutput(split, {1, 2}, CoincidenceTimestamp::Average) ==
          std::vector<Tag>{makeTimeTag(1000, 250), makeTimeTag(1000, 2'000)});
  }
  SECTION("ListedFirst") {
    CHECK(coincidenceOutput(whole, {1, 2}, CoincidenceTimestamp::ListedFirst) ==
          std::vector<Tag>{makeTimeTag(1000, 100), makeTimeTag(1000, 2'000)});
    CHECK(coincidenceOutput(split, {1, 2}, CoincidenceTimestamp::ListedFirst) ==
          std::vector<Tag>{makeTimeTag(1000, 250), makeTimeTag(1000, 2'000)});
    CHECK(coincidenceOutput(split, {2, 1}, CoincidenceTimestamp::ListedFirst) ==
          std::vector<Tag>{makeTimeTag(1000, 300), makeTimeTag(1000, 2'000)});
  }
}

TEST_CASE("Coincidence forgets the tags seen at an overflow and at an Error",
          "[channels][coincidence][overflow]") {
  // Without the resets, 2@200 would also pair with 1@100 and 2@360 with 1@300.
  const TestStream stream{
      {makeTimeTag(1, 100), Tag{TagType::OverflowBegin, 0, 0, 0, 150},
       Tag{TagType::MissedEvents, 0, 3, 2, 160}, Tag{TagType::OverflowEnd, 0, 0, 0, 170},
       makeTimeTag(2, 200), makeTimeTag(1, 300), Tag{TagType::Error, 0, 0, 0, 350},
       makeTimeTag(2, 360), makeTimeTag(1, 400), makeTimeTag(2, 450)},
      0,
      1'000};
  const std::pair<CoincidenceTimestamp, std::vector<timestamp_t>> cases[] = {
      {CoincidenceTimestamp::Last, {300, 400, 450}},
      {CoincidenceTimestamp::First, {200, 360, 400}},
      {CoincidenceTimestamp::Average, {250, 380, 425}},
      {CoincidenceTimestamp::ListedFirst, {300, 400, 400}}};
  for (const auto& blocks : {oneBlock(stream), cutAt(stream, {120, 190, 355})}) {
    for (const auto& [stamp, times] : cases) {
      INFO(toString(stamp) << ", " << blocks.size() << " blocks");
      CHECK(coincidenceOutput(blocks, {1, 2}, stamp) ==
            std::vector<Tag>{makeTimeTag(1000, times[0]), makeTimeTag(1000, times[1]),
                             makeTimeTag(1000, times[2])});
    }
  }
}
