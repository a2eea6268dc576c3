// The raw records' check (io/src/sources/record_check.hpp) against a brute force, record by
// record: runs of every length around the vector groups, with special tags, unknown types and
// out-of-order times placed at every position, the first record against the time before the
// run included.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "sources/record_check.hpp"

using namespace tagflow;

namespace {

struct Expected {
  bool valid = true;
  std::vector<std::size_t> specials;
};

Expected bruteForce(const std::vector<Tag>& records, timestamp_t previous, std::size_t first) {
  Expected expected;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto type = static_cast<int>(records[i].type);
    if (type > kMaxTagType || records[i].time < previous) expected.valid = false;
    if (type != 0) expected.specials.push_back(first + i);
    previous = records[i].time;
  }
  return expected;
}

std::vector<Tag> sortedRecords(std::mt19937_64& random, std::size_t count, timestamp_t first) {
  std::vector<Tag> records;
  timestamp_t time = first;
  for (std::size_t i = 0; i < count; ++i) {
    time += static_cast<timestamp_t>(random() % 3);  // equal times are in order
    records.push_back(makeTimeTag(static_cast<channel_t>(1 + random() % 8), time));
  }
  return records;
}

void requireMatches(const std::vector<Tag>& records, timestamp_t previous) {
  constexpr std::size_t kFirstIndex = 1000;
  const Expected expected = bruteForce(records, previous, kFirstIndex);
  std::vector<std::size_t> specials = {7};  // appended to, never cleared
  const bool valid = checkRecords(records, previous, kFirstIndex, specials);
  REQUIRE(valid == expected.valid);
  if (valid) {
    REQUIRE(specials.front() == 7);
    REQUIRE(std::vector<std::size_t>(specials.begin() + 1, specials.end()) == expected.specials);
  }
}

}  // namespace

TEST_CASE("checkRecords agrees with a record-by-record check", "[raw_file]") {
  std::mt19937_64 random(11);
  const timestamp_t start = 5000;
  for (std::size_t count : {0, 1, 3, 4, 15, 16, 17, 31, 32, 33, 64, 100}) {
    CAPTURE(count);
    const std::vector<Tag> sorted = sortedRecords(random, count, start);
    requireMatches(sorted, start);
    requireMatches(sorted, start - 1);
    if (count > 0) requireMatches(sorted, sorted.front().time + 1);  // the first one too early
    for (std::size_t at = 0; at < count; ++at) {
      CAPTURE(at);
      // A special tag.
      std::vector<Tag> records = sorted;
      records[at].type = TagType::OverflowBegin;
      requireMatches(records, start);
      // An unknown type.
      records = sorted;
      records[at].type = static_cast<TagType>(kMaxTagType + 1 + random() % 200);
      requireMatches(records, start);
      // A time earlier than the one before.
      records = sorted;
      records[at].time = (at == 0 ? start : records[at - 1].time) - 1;
      requireMatches(records, start);
      // A time later than the one after.
      records = sorted;
      if (at + 1 < count) records[at].time = records[at + 1].time + 1;
      requireMatches(records, start);
      // Special tags in every other record, and one time too late.
      records = sorted;
      for (std::size_t i = at % 2; i < count; i += 2) records[i].type = TagType::MissedEvents;
      records[at].time = records[count - 1].time + 1 + static_cast<timestamp_t>(at);
      requireMatches(records, start);
    }
  }
}
