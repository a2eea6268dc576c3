// ChannelIndex: channel -> dense slot in the given order, anything else -> the discard slot.
#include <catch2/catch.hpp>

#include <limits>
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
