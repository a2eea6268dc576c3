// MergedSource against a reference built here from the inputs' tag vectors: every tag shifted,
// the overflow intervals united by interval arithmetic, all sorted stably in the canonical
// order; for any block size, and with overlap_only against the common span.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/sources/merged_source.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

struct Recording {
  std::vector<Tag> tags;
  timestamp_t begin = 0;
  timestamp_t end = 0;
  channel_t channel_offset = 0;
  timestamp_t time_offset = 0;
};

struct Interval {
  timestamp_t begin;
  timestamp_t end;
};

// A source whose stream holds nothing, not even an empty block.
class NoStream : public Source {
 public:
  bool next(BlockBuffer&) override { return false; }
  std::size_t maxBlockTags() const override { return 0; }
  std::string describe() const override { return "no stream"; }
};

MergedSource mergedOf(const std::vector<Recording>& recordings, bool overlap_only,
                      std::size_t block_size, bool with_empty_input = false) {
  std::vector<MergedInput> inputs;
  if (with_empty_input) inputs.push_back(MergedInput{std::make_unique<NoStream>()});
  for (const Recording& recording : recordings) {
    auto tags = std::make_shared<const std::vector<Tag>>(recording.tags);
    inputs.push_back(
        MergedInput{std::make_unique<MemorySource>(tags, 97, recording.begin, recording.end),
                    recording.channel_offset, recording.time_offset});
  }
  return MergedSource(std::move(inputs), overlap_only, block_size);
}

// The shifted overflow intervals of one recording; one still open at its end closes there.
std::vector<Interval> overflowIntervals(const Recording& recording) {
  std::vector<Interval> intervals;
  bool open = false;
  for (const Tag& tag : recording.tags) {
    if (tag.type == TagType::OverflowBegin && !open) {
      intervals.push_back({tag.time + recording.time_offset, 0});
      open = true;
    } else if (tag.type == TagType::OverflowEnd && open) {
      intervals.back().end = tag.time + recording.time_offset;
      open = false;
    }
  }
  if (open) intervals.back().end = recording.end + recording.time_offset;
  return intervals;
}

struct Expected {
  std::vector<Tag> tags;
  timestamp_t begin = 0;
  timestamp_t end = 0;
};

Expected reference(const std::vector<Recording>& recordings, bool overlap_only) {
  Expected expected;
  expected.begin = recordings.front().begin + recordings.front().time_offset;
  expected.end = recordings.front().end + recordings.front().time_offset;
  std::vector<Interval> overflow;
  for (const Recording& recording : recordings) {
    const timestamp_t begin = recording.begin + recording.time_offset;
    const timestamp_t end = recording.end + recording.time_offset;
    expected.begin =
        overlap_only ? std::max(expected.begin, begin) : std::min(expected.begin, begin);
    expected.end = overlap_only ? std::min(expected.end, end) : std::max(expected.end, end);
    for (const Interval& interval : overflowIntervals(recording)) overflow.push_back(interval);
    for (Tag tag : recording.tags) {
      if (tag.type == TagType::OverflowBegin || tag.type == TagType::OverflowEnd) continue;
      tag.time += recording.time_offset;
      if (tag.type == TagType::TimeTag || tag.type == TagType::MissedEvents) {
        tag.channel += tag.channel > 0 ? recording.channel_offset : -recording.channel_offset;
      }
      expected.tags.push_back(tag);
    }
  }
  // United intervals, half-open: touching ones join.
  std::sort(overflow.begin(), overflow.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> united;
  for (const Interval& interval : overflow) {
    if (!united.empty() && interval.begin <= united.back().end) {
      united.back().end = std::max(united.back().end, interval.end);
    } else {
      united.push_back(interval);
    }
  }
  for (const Interval& interval : united) {
    expected.tags.push_back(Tag{TagType::OverflowBegin, 0, 0, 0, interval.begin});
    expected.tags.push_back(Tag{TagType::OverflowEnd, 0, 0, 0, interval.end});
  }
  std::stable_sort(expected.tags.begin(), expected.tags.end(), canonicalTagOrder);
  // The span cuts the stream; an interval open at its begin starts there (one that ends
  // there too: its missed-event counts and end stand at the begin).
  std::vector<Tag> inside;
  for (const Interval& interval : united) {
    if (interval.begin < expected.begin && interval.end >= expected.begin) {
      inside.push_back(Tag{TagType::OverflowBegin, 0, 0, 0, expected.begin});
    }
  }
  for (const Tag& tag : expected.tags) {
    if (tag.time >= expected.begin && tag.time < expected.end) inside.push_back(tag);
  }
  expected.tags = std::move(inside);
  return expected;
}

std::vector<Recording> threeRecordings() {
  Recording first;
  first.tags = withOverflow(randomTags(1, {1, 2, -2}, 0, 4'000'000, 900), 1'000'000, 1'400'000);
  first.begin = 0;
  first.end = 6'000'000;
  Recording second;
  second.tags =
      withOverflow(burstyTags(2, {1, 3}, 500'000, 30, 200, 20'000, 80'000), 1'000'000, 1'400'000);
  second.begin = 500'000;
  second.end = 3'600'000;
  second.channel_offset = 10;
  second.time_offset = 250'000;
  Recording third;
  third.tags =
      withOverflow(randomTags(3, {4, -4}, 2'000'000, 7'000'000, 2000), 6'000'000, 6'900'000);
  third.begin = 2'000'000;
  third.end = 7'000'000;  // ends inside its overflow interval
  third.tags.erase(std::remove_if(third.tags.begin(), third.tags.end(),
                                  [](const Tag& tag) { return tag.type == TagType::OverflowEnd; }),
                   third.tags.end());
  third.tags.erase(std::remove_if(third.tags.begin(), third.tags.end(),
                                  [](const Tag& tag) { return tag.time >= 6'900'000; }),
                   third.tags.end());
  third.channel_offset = 20;
  third.time_offset = -1'500'000;
  return {first, second, third};
}

}  // namespace

TEST_CASE("MergedSource: the union of shifted streams, overflow intervals united",
          "[merged_source]") {
  const std::vector<Recording> recordings = threeRecordings();
  const std::size_t block_size = GENERATE(1, 7, 1000, 32768);
  INFO("block_size " << block_size);
  MergedSource merged = mergedOf(recordings, false, block_size);
  const DrainedStream stream = drain(merged);
  requireWellFormed(stream);
  const Expected expected = reference(recordings, false);
  CHECK(stream.begin() == expected.begin);
  CHECK(stream.end() == expected.end);
  CHECK(stream.tags.size() == expected.tags.size());
  CHECK(stream.tags == expected.tags);
  for (const auto& block : stream.blocks) {
    if (block.tags.size() > block_size) CHECK(block.tags.front().time == block.tags.back().time);
  }
  // The second and first intervals overlap: they are one in the merged stream.
  const auto begins = std::count_if(stream.tags.begin(), stream.tags.end(), [](const Tag& tag) {
    return tag.type == TagType::OverflowBegin;
  });
  CHECK(begins == 2);
}

TEST_CASE("MergedSource: overlap_only keeps the common span and its overflow state",
          "[merged_source]") {
  std::vector<Recording> recordings = threeRecordings();
  // The common span [1'200'000, 3'850'000) begins inside the first input's overflow interval.
  recordings[2].time_offset = -800'000;
  const std::size_t block_size = GENERATE(3, 32768);
  MergedSource merged = mergedOf(recordings, true, block_size);
  const DrainedStream stream = drain(merged);
  requireWellFormed(stream);
  const Expected expected = reference(recordings, true);
  REQUIRE(expected.begin == 1'200'000);
  REQUIRE(expected.end == 3'850'000);
  CHECK(stream.begin() == expected.begin);
  CHECK(stream.end() == expected.end);
  CHECK(stream.tags == expected.tags);
  REQUIRE_FALSE(stream.tags.empty());
  CHECK(stream.tags.front() == Tag{TagType::OverflowBegin, 0, 0, 0, 1'200'000});
}

TEST_CASE("MergedSource: overflow intervals at the very begin pair up", "[merged_source]") {
  SECTION("an input that begins with an OverflowBegin") {
    std::vector<Recording> recordings(2);
    recordings[0].tags = withOverflow(randomTags(4, {1}, 0, 1'000'000, 500), 0, 100'000);
    recordings[0].end = 1'000'000;
    recordings[1].tags = randomTags(5, {2}, 0, 1'000'000, 500);
    recordings[1].end = 1'000'000;
    MergedSource merged = mergedOf(recordings, false, 1000);
    const DrainedStream stream = drain(merged);
    requireWellFormed(stream);
    CHECK(stream.tags == reference(recordings, false).tags);
    CHECK(std::count_if(stream.tags.begin(), stream.tags.end(),
                        [](const Tag& tag) { return tag.type == TagType::OverflowBegin; }) == 1);
  }
  SECTION("an overlap that begins where an interval ends") {
    std::vector<Recording> recordings(2);
    recordings[0].tags = withOverflow(randomTags(6, {1}, 0, 1'000'000, 500), 100'000, 300'000);
    std::erase_if(recordings[0].tags,
                  [](const Tag& tag) { return tag.type == TagType::MissedEvents; });
    recordings[0].end = 1'000'000;
    recordings[1].tags = randomTags(7, {2}, 300'000, 1'000'000, 500);
    recordings[1].begin = 300'000;
    recordings[1].end = 1'000'000;
    MergedSource merged = mergedOf(recordings, true, 1000);
    const DrainedStream stream = drain(merged);
    requireWellFormed(stream);
    const Expected expected = reference(recordings, true);
    CHECK(stream.tags == expected.tags);
    REQUIRE(stream.tags.size() >= 2);
    CHECK(stream.tags[0] == Tag{TagType::OverflowBegin, 0, 0, 0, 300'000});
    CHECK(stream.tags[1] == Tag{TagType::OverflowEnd, 0, 0, 0, 300'000});
  }
}

TEST_CASE("MergedSource: equal times keep the canonical order, then the inputs' order",
          "[merged_source]") {
  std::vector<Recording> recordings(2);
  recordings[0].tags = {makeTimeTag(2, 100), makeTimeTag(5, 100), makeTimeTag(1, 300)};
  recordings[0].end = 400;
  recordings[1].tags = {makeTimeTag(1, 100), makeTimeTag(2, 100), makeTimeTag(1, 300)};
  recordings[1].end = 400;
  recordings[1].channel_offset = 1;
  MergedSource merged = mergedOf(recordings, false, 2);
  const DrainedStream stream = drain(merged);
  requireWellFormed(stream);
  const std::vector<Tag> expected = {makeTimeTag(2, 100), makeTimeTag(2, 100), makeTimeTag(3, 100),
                                     makeTimeTag(5, 100), makeTimeTag(1, 300), makeTimeTag(2, 300)};
  CHECK(stream.tags == expected);
  CHECK(stream.blocks.front().tags.size() == 4);  // the run of equal times stays whole
}

TEST_CASE("MergedSource: an input without a stream", "[merged_source]") {
  const std::vector<Recording> recordings = threeRecordings();
  SECTION("adds nothing to the union") {
    MergedSource merged = mergedOf(recordings, false, 500, true);
    const DrainedStream stream = drain(merged);
    requireWellFormed(stream);
    const Expected expected = reference(recordings, false);
    CHECK(stream.tags == expected.tags);
    CHECK(stream.begin() == expected.begin);
    CHECK(stream.end() == expected.end);
  }
  SECTION("empties the overlap") {
    MergedSource merged = mergedOf(recordings, true, 500, true);
    BlockBuffer buffer;
    CHECK_FALSE(merged.next(buffer));
  }
}

TEST_CASE("MergedSource: bad offsets and shifted values are named", "[merged_source]") {
  std::vector<Recording> recordings = threeRecordings();
  SECTION("no inputs") {
    CHECK_THROWS_WITH(MergedSource({}, false), Contains("no inputs"));
  }
  SECTION("a block size") {
    CHECK_THROWS_WITH(mergedOf(recordings, false, 0), Contains("block_size 0 is invalid"));
  }
  SECTION("a time offset beyond the stream's range") {
    recordings[1].time_offset = kStreamTimeLimit + 1;
    CHECK_THROWS_WITH(mergedOf(recordings, false, 100),
                      Contains("time offset 4611686018427387905 ps of input 1 is invalid"));
  }
  SECTION("a shifted time beyond it") {
    recordings[0].time_offset = kStreamTimeLimit - 2'000'000;
    MergedSource merged = mergedOf(recordings, false, 100);
    CHECK_THROWS_WITH(drain(merged), Contains("input 0") && Contains("leaves"));
  }
  SECTION("a shifted channel that crosses zero") {
    recordings[2].channel_offset = -4;
    MergedSource merged = mergedOf(recordings, false, 100);
    CHECK_THROWS_WITH(drain(merged), Contains("input 2") && Contains("shifted by -4 channels"));
  }
}
