// The synthetic source's sorted runs (io/src/sources/sorted_runs.hpp): SparseMerge gives the
// canonical merge of two runs for every shape (empty, tiny, dense, sparse, ties at equal times,
// tags before and after the other run); restoreOrder sorts nearly sorted and shuffled runs;
// TagRun keeps its elements across growth and hand-over; timesOnChannel picks out one channel's
// times.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "sources/sorted_runs.hpp"

using namespace tagflow;
using namespace tagflow::synthetic;

namespace {

// A sorted run of `count` tags on `channels`, times from `first` with gaps up to `max_gap`
// (0 allowed: equal times, ordered by channel).
std::vector<Tag> sortedRun(std::mt19937_64& random, std::size_t count,
                           std::vector<channel_t> channels, timestamp_t first,
                           timestamp_t max_gap) {
  std::uniform_int_distribution<timestamp_t> gap(0, max_gap);
  std::uniform_int_distribution<std::size_t> pick(0, channels.size() - 1);
  std::vector<Tag> tags;
  timestamp_t time = first;
  for (std::size_t i = 0; i < count; ++i) {
    time += gap(random);
    tags.push_back(makeTimeTag(channels[pick(random)], time));
  }
  std::sort(tags.begin(), tags.end(), canonicalTagOrder);
  return tags;
}

TagRun runOf(const std::vector<Tag>& tags) {
  TagRun run;
  std::copy(tags.begin(), tags.end(), run.room(tags.size()));
  run.grow(tags.size());
  return run;
}

}  // namespace

TEST_CASE("SparseMerge gives the canonical merge of two sorted runs", "[synthetic]") {
  std::mt19937_64 random(3);
  struct Shape {
    std::size_t a, b;
    timestamp_t a_first, a_gap, b_first, b_gap;
  };
  const std::vector<Shape> shapes = {
      {0, 0, 0, 10, 0, 10},
      {0, 50, 0, 10, 0, 10},
      {50, 0, 0, 10, 0, 10},
      {1, 1, 5, 10, 5, 10},
      {1000, 3, 0, 10, 0, 3000},
      {3, 1000, 0, 3000, 0, 10},
      {5000, 5000, 0, 3, 0, 3},
      {100'000, 10, 0, 20, 0, 100'000},
      {2000, 700, 0, 50, 0, 140},
      {2000, 700, 1'000'000, 50, 0, 140},  // all of b before a
      {2000, 700, 0, 50, 50'000, 140},     // b from a's middle on, past its end
      {64, 64, 0, 0, 0, 0},                // one time: the order is the channels'
      {3000, 1, 0, 10, 29'999, 1},
      {3000, 9, -5000, 7, -9000, 2},
      {20, 20000, 0, 10'000, 0, 10},
  };
  for (const Shape& shape : shapes) {
    const auto a = sortedRun(random, shape.a, {1, 2, -1}, shape.a_first, shape.a_gap);
    const auto b = sortedRun(random, shape.b, {3, -2}, shape.b_first, shape.b_gap);
    std::vector<Tag> expected(a.size() + b.size());
    std::merge(a.begin(), a.end(), b.begin(), b.end(), expected.begin(), canonicalTagOrder);

    const TagRun run_a = runOf(a), run_b = runOf(b);
    SparseMerge merge;
    TagRun out;
    out.push_back(makeTimeTag(9, -1'000'000));  // merges append
    merge.append(run_a, a.size(), run_b, b.size(), out);
    INFO("sizes " << shape.a << " and " << shape.b);
    REQUIRE(out.size() == 1 + expected.size());
    CHECK(std::vector<Tag>(out.items().begin() + 1, out.items().end()) == expected);

    // A prefix of a run: the tags after it are not merged.
    if (a.size() > 10) {
      TagRun out_prefix;
      merge.append(run_a, a.size() / 2, run_b, b.size(), out_prefix);
      std::vector<Tag> expected_prefix(a.size() / 2 + b.size());
      std::merge(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(a.size() / 2), b.begin(),
                 b.end(), expected_prefix.begin(), canonicalTagOrder);
      CHECK(std::vector<Tag>(out_prefix.items().begin(), out_prefix.items().end()) ==
            expected_prefix);
    }
  }
}

TEST_CASE("timesOnChannel picks out the times of one channel's time tags", "[synthetic]") {
  std::mt19937_64 random(23);
  // Every length up to a few vectors and a long one; tags of other types on the channel, and a
  // channel that matches another's bits only in part, are not picked.
  for (const std::size_t count : {0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 1000}) {
    std::vector<Tag> tags = sortedRun(random, count, {3, 5, 3 + (1 << 16), -3}, 0, 100);
    for (std::size_t i = 0; i < tags.size(); i += 7) tags[i].type = TagType::MissedEvents;
    for (std::size_t i = 3; i < tags.size(); i += 11) tags[i].missed_events = 1;
    std::vector<timestamp_t> expected;
    for (const Tag& tag : tags) {
      if (tag.type == TagType::TimeTag && tag.missed_events == 0 && tag.channel == 3) {
        expected.push_back(tag.time);
      }
    }
    std::vector<timestamp_t> times(count + 4, -1);
    times.resize(timesOnChannel(tags, 3, times.data()));
    INFO(count << " tags");
    CHECK(times == expected);
  }
}

TEST_CASE("restoreOrder sorts runs appended nearly in order, and any other", "[synthetic]") {
  std::mt19937_64 random(4);
  for (const int displacement : {0, 1, 5, 100000}) {
    TimeRun run;
    std::vector<timestamp_t> times;
    for (int i = 0; i < 3000; ++i) times.push_back(1000 * i);
    // The first half stays sorted; the second is displaced by up to `displacement` places.
    for (std::size_t i = 1500; i < times.size(); ++i) {
      const std::size_t j = std::min(times.size() - 1, i + random() % (displacement + 1));
      std::swap(times[i], times[j]);
    }
    std::copy(times.begin(), times.end(), run.room(times.size()));
    run.grow(times.size());
    restoreOrder(run, 1500);
    std::sort(times.begin(), times.end());
    INFO("displacement " << displacement);
    CHECK(std::vector<timestamp_t>(run.items().begin(), run.items().end()) == times);
  }
}

TEST_CASE("TagRun keeps its tags when it grows, erases its front and is handed over",
          "[synthetic]") {
  TagRun run;
  std::vector<Tag> expected;
  for (int i = 0; i < 5000; ++i) {
    run.push_back(makeTimeTag(1, i));
    expected.push_back(makeTimeTag(1, i));
  }
  CHECK(std::vector<Tag>(run.items().begin(), run.items().end()) == expected);
  run.eraseFront(1234);
  expected.erase(expected.begin(), expected.begin() + 1234);
  CHECK(std::vector<Tag>(run.items().begin(), run.items().end()) == expected);

  std::vector<Tag> handed(3, makeTimeTag(7, 7));
  const std::size_t size = run.size();
  run.handOver(handed);
  CHECK(run.size() == 0);
  REQUIRE(handed.size() >= size);
  CHECK(std::vector<Tag>(handed.begin(), handed.begin() + static_cast<std::ptrdiff_t>(size)) ==
        expected);
  run.push_back(makeTimeTag(2, 2));  // the run works on with the storage it got
  CHECK(run.size() == 1);
  CHECK(run.items()[0] == makeTimeTag(2, 2));
}
