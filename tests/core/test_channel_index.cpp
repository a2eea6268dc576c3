// ChannelIndex: channel -> dense slot in the given order, anything else -> the discard slot.
#include <catch2/catch.hpp>

#include <limits>
#include <random>
#include <span>
#include <vector>

#include "tagflow/core/channel_index.hpp"
#include "tagflow/core/error.hpp"

using namespace tagflow;
using Catch::Contains;

TEST_CASE("ChannelIndex maps listed channels to their position and others to discard",
          "[channel_index]") {
  const std::vector<channel_t> channels{5, -3, 17, 2};
  const ChannelIndex index(channels, "test");
  REQUIRE(index.size() == 4);
  REQUIRE(index.discardSlot() == 4);
  CHECK(index.channels() == channels);
  for (channel_t channel = -100; channel <= 100; ++channel) {
    std::uint32_t expected = 4;
    for (std::size_t i = 0; i < channels.size(); ++i) {
      if (channels[i] == channel) expected = static_cast<std::uint32_t>(i);
    }
    INFO("channel " << channel);
    REQUIRE(index.slot(channel) == expected);
  }
  CHECK(index.slot(std::numeric_limits<channel_t>::min()) == 4);
  CHECK(index.slot(std::numeric_limits<channel_t>::max()) == 4);
  CHECK(index.slot(CHANNEL_UNUSED) == 4);
}

TEST_CASE("ChannelIndex rejects bad channel lists, naming the bad value", "[channel_index]") {
  const auto make = [](std::vector<channel_t> channels) { ChannelIndex index(channels, "Owner"); };
  REQUIRE_THROWS_AS(make({}), InvalidArgument);
  REQUIRE_THROWS_WITH(make({}), Contains("Owner") && Contains("empty"));
  REQUIRE_THROWS_AS(make({1, 17, 3, 17}), InvalidArgument);
  REQUIRE_THROWS_WITH(make({1, 17, 3, 17}), Contains("duplicate channel 17"));
  REQUIRE_THROWS_WITH(make({1, CHANNEL_UNUSED}), Contains("CHANNEL_UNUSED"));
  REQUIRE_THROWS_WITH(make({1, 70000}), Contains("70000") && Contains("too far apart"));
  CHECK_NOTHROW(make({-32768, 32767}));  // a span of exactly 65536
}

TEST_CASE("countTags counts each slot's tags as a plain loop does", "[channel_index]") {
  std::mt19937_64 random(11);
  for (const std::size_t listed : {1, 2, 5, 8, 9, 12}) {
    std::vector<channel_t> channels;
    for (std::size_t i = 0; i < listed; ++i) channels.push_back(static_cast<channel_t>(3 * i) - 4);
    const ChannelIndex index(channels, "test");
    // Tags on the listed channels, on channels between and beside them, and of every type.
    std::vector<Tag> tags(300);
    for (Tag& tag : tags) {
      tag.channel = static_cast<channel_t>(random() % (3 * listed + 6)) - 6;
      tag.type = static_cast<TagType>(random() % 5);
      tag.time = static_cast<timestamp_t>(random());
    }
    for (std::size_t size = 0; size <= tags.size(); size += size < 80 ? 1 : 37) {
      for (const std::size_t offset : {std::size_t{0}, std::size_t{3}}) {
        if (offset + size > tags.size()) continue;
        const std::span<const Tag> span(tags.data() + offset, size);
        std::vector<std::uint64_t> expected(listed + 1, 7), counts(listed + 1, 7);
        for (const Tag& tag : span) ++expected[index.slot(tag.channel)];
        index.countTags(span, counts.data());
        INFO(listed << " channels, " << size << " tags from " << offset);
        REQUIRE(counts == expected);
      }
    }
  }
}
