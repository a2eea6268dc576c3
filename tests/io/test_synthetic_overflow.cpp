// Overflow injection in SyntheticSource (spec 1.2): inside [begin, end) TimeTags are dropped;
// OverflowBegin at begin, MissedEvents per channel (split at 65535) and OverflowEnd at end;
// outside the intervals the stream is the one without overflows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "support/drain.hpp"
#include "support/reference.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

bool insideAny(timestamp_t time, const std::vector<OverflowInterval>& intervals) {
  for (const auto& o : intervals) {
    if (time >= o.begin_ps && time < o.end_ps) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("Overflow intervals drop tags and report them as missed events", "[synthetic]") {
  const std::size_t block_size = GENERATE(5, 1000, 100000);
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 3e6), SyntheticChannel::clock(2, 1e6, 10),
                     SyntheticChannel::partner(3, 1, 700, 20, 0.5)};
  config.seed = 4;
  config.block_size = block_size;
  config.duration_ps = 3'000'000'000;
  config.overflows = {
      {250'000'000, 750'000'000}, {1'000'000'000, 1'000'000'001}, {2'000'000'000, 2'600'000'000}};
  SyntheticConfig clean = config;
  clean.overflows.clear();
  SyntheticSource lossy_source(config);
  SyntheticSource full_source(clean);
  const DrainedStream lossy = drain(lossy_source);
  const DrainedStream full = drain(full_source);
  requireWellFormed(lossy);
  INFO("block_size " << block_size);

  // Outside the intervals: the same TimeTags. Inside: none.
  std::vector<Tag> kept;
  for (const Tag& tag : full.tags) {
    if (!insideAny(tag.time, config.overflows)) kept.push_back(tag);
  }
  std::vector<Tag> lossy_time_tags;
  for (const Tag& tag : lossy.tags) {
    if (tag.type == TagType::TimeTag) lossy_time_tags.push_back(tag);
  }
  CHECK(lossy_time_tags == kept);

  // The marks, at the right times, and the missed counts per channel and interval.
  const auto intervals = overflowIntervalsOf(lossy.tags);
  REQUIRE(intervals.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(intervals[i].begin == config.overflows[i].begin_ps);
    CHECK(intervals[i].end == config.overflows[i].end_ps);
    for (channel_t channel : {1, 2, 3}) {
      const timestamp_t end = config.overflows[i].end_ps;
      INFO("interval " << i << " channel " << channel);
      CHECK(countMissed(lossy.tags, channel, end, end + 1) ==
            countTimeTags(full.tags, channel, config.overflows[i].begin_ps, end));
    }
  }
  for (const Tag& tag : lossy.tags) {
    if (tag.type == TagType::OverflowBegin || tag.type == TagType::OverflowEnd) {
      CHECK(tag.channel == 0);
    }
  }
  // At an interval's end: missed events first, then OverflowEnd, then ordinary tags.
  for (std::size_t i = 0; i + 1 < lossy.tags.size(); ++i) {
    if (lossy.tags[i].type == TagType::OverflowEnd) {
      CHECK(lossy.tags[i + 1].type != TagType::MissedEvents);
    }
  }
}

TEST_CASE("Large losses are split into MissedEvents of at most 65535", "[synthetic]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 1e8)};
  config.duration_ps = 1'200'000'000;
  config.overflows = {{100'000'000, 1'100'000'000}};  // ~100k lost tags
  SyntheticConfig clean = config;
  clean.overflows.clear();
  SyntheticSource lossy_source(config);
  SyntheticSource full_source(clean);
  const DrainedStream lossy = drain(lossy_source);
  const DrainedStream full = drain(full_source);
  std::vector<std::uint16_t> chunks;
  for (const Tag& tag : lossy.tags) {
    if (tag.type == TagType::MissedEvents) chunks.push_back(tag.missed_events);
  }
  const std::uint64_t lost = countTimeTags(full.tags, 1, 100'000'000, 1'100'000'000);
  REQUIRE(lost > 65535);
  REQUIRE(lost <= 2 * 65535);
  REQUIRE(chunks.size() == 2);  // the order of equal-time chunks is not specified
  CHECK(std::max(chunks[0], chunks[1]) == 65535);
  CHECK(chunks[0] + chunks[1] == lost);
}
