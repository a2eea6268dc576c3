// blockSplitPoint, firstOnChannels and BlockBuffer's special-tag index, against brute-force
// definitions.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "tagflow/core/tag_block.hpp"

using namespace tagflow;

namespace {

// The definition in tag_block.hpp, as a plain search: the largest count <= max_tags after
// which time strictly increases; if there is none, the whole run of the first tag's time.
std::size_t expectedSplit(const std::vector<Tag>& tags, std::size_t max_tags) {
  if (tags.size() <= max_tags) return tags.size();
  for (std::size_t count = max_tags; count > 0; --count) {
    if (tags[count - 1].time < tags[count].time) return count;
  }
  std::size_t run = 0;
  while (run < tags.size() && tags[run].time == tags[0].time) ++run;
  return run;
}

}  // namespace

TEST_CASE("blockSplitPoint never splits tags that share a time", "[block]") {
  std::mt19937_64 random(42);
  std::uniform_int_distribution<int> gap(0, 2);  // many equal times
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<Tag> tags;
    timestamp_t time = 0;
    const int n = 1 + trial % 40;
    for (int i = 0; i < n; ++i) {
      time += gap(random);
      tags.push_back(makeTimeTag(1, time));
    }
    for (std::size_t max_tags = 1; max_tags <= 12; ++max_tags) {
      const std::size_t split = blockSplitPoint(tags, max_tags);
      INFO("trial " << trial << " max_tags " << max_tags);
      REQUIRE(split == expectedSplit(tags, max_tags));
      REQUIRE(split >= 1);
      if (split < tags.size()) REQUIRE(tags[split - 1].time < tags[split].time);
    }
  }
}

TEST_CASE("blockSplitPoint returns a whole run of equal times longer than the limit", "[block]") {
  std::vector<Tag> tags(10, makeTimeTag(1, 5));
  tags.push_back(makeTimeTag(1, 6));
  CHECK(blockSplitPoint(tags, 3) == 10);
  CHECK(blockSplitPoint(tags, 10) == 10);
  CHECK(blockSplitPoint(tags, 11) == 11);
  CHECK(blockSplitPoint(std::vector<Tag>{}, 4) == 0);
}

TEST_CASE("BlockBuffer indexes exactly the special tags", "[block]") {
  BlockBuffer buffer;
  buffer.storage = {makeTimeTag(1, 1),
                    Tag{TagType::OverflowBegin, 0, 0, 0, 2},
                    makeTimeTag(2, 3),
                    Tag{TagType::MissedEvents, 0, 9, 1, 4},
                    Tag{TagType::OverflowEnd, 0, 0, 0, 4},
                    makeTimeTag(1, 5),
                    Tag{TagType::Error, 0, 0, 0, 6}};
  buffer.begin_time = 0;
  buffer.end_time = 10;
  buffer.publishStorage();
  REQUIRE(buffer.tags.size() == 7);
  REQUIRE(buffer.tags.data() == buffer.storage.data());
  CHECK(buffer.special == std::vector<std::uint32_t>{1, 3, 4, 6});
  const TagBlock view = buffer.view(17);
  CHECK(view.sequence == 17);
  CHECK(view.begin_time == 0);
  CHECK(view.end_time == 10);
  CHECK(view.special.size() == 4);

  buffer.storage = {makeTimeTag(1, 1)};
  buffer.publishStorage();
  CHECK(buffer.special.empty());
}

TEST_CASE("firstOnChannels finds the first tag on a range of channels", "[block]") {
  // Every length around the groups of eight, the hit at every position, channels at and around
  // the range's ends, negative ones and the extremes of the type.
  const std::vector<channel_t> outside{999, 1003, 0, -1000, -1, 1, 2147483647, -2147483647 - 1};
  const std::vector<channel_t> inside{1000, 1001, 1002};
  for (std::size_t length = 0; length <= 40; ++length) {
    std::vector<Tag> tags;
    for (std::size_t i = 0; i < length; ++i) {
      tags.push_back(makeTimeTag(outside[i % outside.size()], static_cast<timestamp_t>(i)));
    }
    CHECK(firstOnChannels(tags, 1000, 1003) == length);
    for (std::size_t hit = 0; hit < length; ++hit) {
      for (const channel_t channel : inside) {
        std::vector<Tag> marked = tags;
        marked[hit].channel = channel;
        if (hit + 3 < length) marked[hit + 3].channel = 1000;  // a later one changes nothing
        INFO("length " << length << ", tag " << hit << " on channel " << channel);
        CHECK(firstOnChannels(marked, 1000, 1003) == hit);
      }
    }
  }
  // The empty range finds nothing; a range up to the largest channel finds it.
  const std::vector<Tag> extreme{makeTimeTag(5, 0), makeTimeTag(2147483647, 1)};
  CHECK(firstOnChannels(extreme, 1000, 1000) == extreme.size());
  CHECK(firstOnChannels(extreme, 6, 2147483647) == extreme.size());
  CHECK(firstOnChannels(extreme, 2147483646, 2147483647) == extreme.size());
  CHECK(firstOnChannels(extreme, 5, 6) == 0);
}
