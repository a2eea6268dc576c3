// Settings changed while the stream runs: DelayedChannel::setDelay() and
// Coincidences::setCoincidenceWindow() between blocks, against the brute-force references with
// the value in force at each tag (random streams with equal times, overflows and Errors; blocks
// of 1, 7 and 1000 tags). A lower delay must merge its copies in among those still owed; the
// output stays in time order and the input passes through unchanged. Bad values are refused
// with their range, and the value set is what lookBack() reports.
#include <catch2/catch.hpp>

#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "channel_references.hpp"
#include "channel_streams.hpp"
#include "tagflow/channels/coincidences.hpp"
#include "tagflow/channels/delayed_channel.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/result_set.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

constexpr channel_t kFirstOutput = 1000;

struct Driven {
  std::vector<Tag> outputs;  // canonical order
  std::vector<Tag> passed_through;
  std::string order_error;
};

// Feeds the blocks to the channel directly, calling before(k) ahead of block k, as a setter
// called from another thread between two blocks.
Driven drive(VirtualChannel& channel, const std::vector<DrainedBlock>& blocks,
             const std::function<void(std::size_t)>& before) {
  channel.assignChannels(kFirstOutput);
  channel.streamStarting();
  const std::vector<channel_t> outputs = channel.getChannels();
  Driven driven;
  BlockBuffer in;
  BlockBuffer out;
  timestamp_t last = std::numeric_limits<timestamp_t>::min();
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    in.storage = blocks[k].tags;
    in.begin_time = blocks[k].begin;
    in.end_time = blocks[k].end;
    in.publishStorage();
    before(k);
    channel.process(in.view(k), out);
    for (const Tag& tag : out.tags) {
      if (tag.time < last && driven.order_error.empty()) {
        driven.order_error = describeTag(tag) + " after a tag at " + std::to_string(last) + " ps";
      }
      last = tag.time;
      (isOutput(tag, outputs) ? driven.outputs : driven.passed_through).push_back(tag);
    }
  }
  driven.outputs = canonicalOutput(std::move(driven.outputs));
  return driven;
}

// A value that changes every few blocks, up and down, from a list.
timestamp_t scheduled(const std::vector<timestamp_t>& values, std::size_t block) {
  return values[(block / 3) % values.size()];
}

// The scheduled value in force at each tag of the stream: that of the tag's block.
std::function<timestamp_t(std::size_t)> inForceAtTag(const std::vector<timestamp_t>& values,
                                                     const std::vector<DrainedBlock>& blocks) {
  std::vector<std::size_t> block_of;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    block_of.insert(block_of.end(), blocks[k].tags.size(), k);
  }
  return [values, block_of](std::size_t i) { return scheduled(values, block_of[i]); };
}

void checkAgainst(const Driven& driven, const std::vector<Owed>& reference,
                  const TestStream& stream, const std::vector<DrainedBlock>& blocks,
                  std::size_t at_least) {
  const auto expected = canonicalOutput(realize(reference, stream.tags, blocks));
  CHECK(expected.size() > at_least);
  CHECK(firstDifference(driven.outputs, expected) == "");
  CHECK(firstDifference(driven.passed_through, stream.tags) == "");
  CHECK(driven.order_error == "");
}

}  // namespace

TEST_CASE("DelayedChannel::setDelay between blocks matches the reference with each tag's delay",
          "[channels][delayed][settings]") {
  // Rises and falls far beyond a block's span, so that falls leave many copies owed.
  const std::vector<timestamp_t> delays{5'000, 40'000, 100, 0, 25'000, 24'000, 3'000};
  for (std::uint64_t seed : {1, 2}) {
    const TestStream stream = randomStream(seed);
    for (std::size_t block_size : {std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
      INFO("seed " << seed << ", blocks of up to " << block_size << " tags");
      const auto blocks = blocksOf(stream, block_size);
      DelayedChannel channel("delayed", 1, delays.front());
      const Driven driven = drive(channel, blocks, [&](std::size_t k) {
        channel.setDelay(scheduled(delays, k));
        CHECK(channel.getDelay() == scheduled(delays, k));
      });
      checkAgainst(driven,
                   delayedReferenceBy(stream.tags, 1, inForceAtTag(delays, blocks), kFirstOutput),
                   stream, blocks, 300);
    }
  }
}

TEST_CASE("Coincidences::setCoincidenceWindow between blocks matches the reference",
          "[channels][coincidences][settings]") {
  const std::vector<timestamp_t> windows{300, 50, 2'000, 1, 700};
  const std::vector<std::vector<channel_t>> pairs{{1, 2}, {2, 3}};
  const std::vector<std::vector<channel_t>> three{{1, 2, 3}};
  // Pairs stamped Last take the one-pass path; three channels, the general one.
  for (const auto& [groups, stamp] : {std::pair{pairs, CoincidenceTimestamp::Last},
                                      std::pair{three, CoincidenceTimestamp::Average}}) {
    const TestStream stream = randomStream(3);
    for (std::size_t block_size : {std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
      INFO(groups.size() << " groups, blocks of up to " << block_size << " tags");
      const auto blocks = blocksOf(stream, block_size);
      Coincidences channel("coincidences", groups, windows.front(), stamp);
      const Driven driven = drive(channel, blocks, [&](std::size_t k) {
        channel.setCoincidenceWindow(scheduled(windows, k));
      });
      checkAgainst(driven,
                   coincidencesReferenceBy(stream.tags, groups, inForceAtTag(windows, blocks),
                                           stamp, kFirstOutput),
                   stream, blocks, 50);
    }
  }
}

TEST_CASE("setDelay and setCoincidenceWindow refuse bad values and report the value set",
          "[channels][settings][arguments]") {
  DelayedChannel delayed("delayed", 1, 10);
  CHECK_THROWS_WITH(delayed.setDelay(-1),
                    Catch::Contains("delay -1 ps is invalid") && Catch::Contains("valid: 0.."));
  CHECK_THROWS_AS(delayed.setDelay((timestamp_t{1} << 62) + 1), InvalidArgument);
  CHECK(delayed.getDelay() == 10);
  delayed.setDelay(2'500);
  CHECK(delayed.getDelay() == 2'500);
  CHECK(delayed.lookBack() == 2'500);

  Coincidence coincidence("coincidence", {1, 2}, 1000, CoincidenceTimestamp::First);
  CHECK_THROWS_WITH(
      coincidence.setCoincidenceWindow(0),
      Catch::Contains("coincidence_window 0 ps is invalid (valid: 1..4611686018427387904)"));
  CHECK_THROWS_AS(coincidence.setCoincidenceWindow((timestamp_t{1} << 62) + 1), InvalidArgument);
  CHECK(coincidence.getCoincidenceWindow() == 1000);
  coincidence.setCoincidenceWindow(40);
  CHECK(coincidence.getCoincidenceWindow() == 40);
  CHECK(coincidence.lookBack() == 40);
  CHECK(coincidence.lookAhead() == 40);
}

TEST_CASE("A live change is logged from the first block that used it, and in the results",
          "[channels][settings]") {
  const TestStream stream = randomStream(4);
  const auto blocks = blocksOf(stream, 7);
  REQUIRE(blocks.size() > 30);
  const std::vector<timestamp_t> delays{5'000, 40'000, 40'000, 100, 5'000};
  DelayedChannel channel("delayed", 1, delays.front());
  drive(channel, blocks, [&](std::size_t k) {
    // A value set and taken back before the next block never held: nothing to log.
    channel.setDelay(777);
    channel.setDelay(scheduled(delays, k));
  });
  std::vector<std::int64_t> expected_values, expected_from;
  timestamp_t in_force = delays.front();
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    if (scheduled(delays, k) == in_force) continue;
    in_force = scheduled(delays, k);
    expected_values.push_back(in_force);
    expected_from.push_back(blocks[k].begin);
  }
  REQUIRE(expected_values.size() >= 6);

  const auto changes = channel.settingChanges();
  REQUIRE(changes.size() == expected_values.size());
  for (std::size_t i = 0; i < changes.size(); ++i) {
    INFO("change " << i);
    CHECK(changes[i].key == "delay");
    CHECK(changes[i].value == expected_values[i]);
    CHECK(changes[i].from == expected_from[i]);
  }
  const ResultSet results = channel.getResults();
  CHECK(results.kind == "DelayedChannel");
  CHECK(results.name == "delayed");
  CHECK(results.parameters.getInt("delay") == delays.front());
  CHECK(results.facts.getIntList("output_channels") == std::vector<std::int64_t>{kFirstOutput});
  CHECK(results.values<std::int64_t>("delay_changes", changes.size()) == expected_values);
  CHECK(results.values<std::int64_t>("delay_changed_from", changes.size()) == expected_from);
  CHECK(results.array("delay_changes").unit == "ps");

  Coincidence coincidence("coincidence", {1, 2}, 1000, CoincidenceTimestamp::First);
  drive(coincidence, blocks, [&](std::size_t k) {
    if (k == 5) coincidence.setCoincidenceWindow(40);
  });
  const auto window_changes = coincidence.settingChanges();
  REQUIRE(window_changes.size() == 1);
  CHECK(window_changes[0].key == "coincidence_window");
  CHECK(window_changes[0].value == 40);
  CHECK(window_changes[0].from == blocks[5].begin);
  CHECK(coincidence.getResults().values<std::int64_t>("coincidence_window_changes", 1) ==
        std::vector<std::int64_t>{40});
}
