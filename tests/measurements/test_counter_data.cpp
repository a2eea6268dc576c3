// Counter::getDataObject against a brute-force binning: polled with remove after every block
// it returns every completed bin exactly once, in order, with its overflow flag, its number,
// its capture-time index and the stream time at which it began (pauses included); polled too
// rarely it returns the newest n_values bins and counts the ones overwritten in between;
// without remove it returns the same bins again.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "support/generators.hpp"
#include "support/probe.hpp"
#include "support/reference.hpp"
#include "tagflow/measurements/counter.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

const std::vector<channel_t> kChannels{1, 2};

// The tags of [from, to), fed as one block.
void feedRange(BlockFeeder& feed, const std::vector<Tag>& all, timestamp_t from, timestamp_t to) {
  std::vector<Tag> tags;
  for (const Tag& tag : all) {
    if (tag.time >= from && tag.time < to) tags.push_back(tag);
  }
  feed.feed(from, to, tags);
}

// Bin k of a polled CounterData equals reference bin `reference_bin`.
void requireBinMatches(const CounterData& polled, std::size_t i, const CounterReference& ref,
                       std::uint64_t reference_bin) {
  INFO("bin " << reference_bin);
  for (std::size_t c = 0; c < kChannels.size(); ++c) {
    CHECK(polled.data[c * polled.size + i] == ref.bins[c][reference_bin]);
  }
  CHECK(polled.overflow_mask[i] == (ref.overflow[reference_bin] ? 1 : 0));
}

}  // namespace

TEST_CASE("Counter data polled with remove returns every bin once, in order",
          "[counter][data_object]") {
  constexpr timestamp_t kBinwidth = 1'000;
  constexpr timestamp_t kEnd = 400'000;
  std::vector<Tag> all = randomTags(17, kChannels, 0, kEnd, 300.0);
  all = withOverflow(all, 123'456, 131'000);
  Counter counter("counter", kChannels, kBinwidth, 20);
  BlockFeeder feed(counter);
  std::vector<std::uint64_t> numbers;
  std::vector<std::vector<std::int64_t>> counts(kChannels.size());
  std::vector<std::int8_t> mask;
  // Blocks of 1 to 19 bins' time, so that no bin is overwritten between two polls.
  timestamp_t time = 0;
  for (timestamp_t step = 3'700; time < kEnd; step = (step * 7) % 19'000 + 1'000) {
    const timestamp_t to = std::min(kEnd, time + step);
    feedRange(feed, all, time, to);
    time = to;
    const CounterData polled = counter.getDataObject(true);
    CHECK(polled.dropped_bins == 0);
    REQUIRE(polled.data.size() == kChannels.size() * polled.size);
    bool flagged = false;
    for (std::size_t i = 0; i < polled.size; ++i) {
      numbers.push_back(polled.first_bin + i);
      for (std::size_t c = 0; c < kChannels.size(); ++c) {
        counts[c].push_back(polled.data[c * polled.size + i]);
      }
      mask.push_back(polled.overflow_mask[i]);
      flagged = flagged || polled.overflow_mask[i] != 0;
      CHECK(polled.time[i] == static_cast<timestamp_t>(polled.first_bin + i) * kBinwidth);
      CHECK(polled.index()[i] == polled.time[i]);  // no pause: capture time is stream time
    }
    CHECK(polled.overflow == flagged);
  }
  const CounterReference ref =
      counterReference(all, kChannels, 0, kEnd, kBinwidth, 20, {{123'456, 131'000}});
  REQUIRE(numbers.size() == ref.completed);
  for (std::uint64_t k = 0; k < ref.completed; ++k) {
    INFO("bin " << k);
    CHECK(numbers[k] == k);
    for (std::size_t c = 0; c < kChannels.size(); ++c) CHECK(counts[c][k] == ref.bins[c][k]);
    CHECK(mask[k] == (ref.overflow[k] ? 1 : 0));
  }
  // Completed bins and missed events: all there is, the integrating bin being empty.
  CHECK(counter.getDataObject().total_counts == ref.totals);
  CHECK(counter.getDataObject(true).size == 0);
}

TEST_CASE("Counter data polled too rarely returns the newest bins and counts the dropped ones",
          "[counter][data_object]") {
  constexpr timestamp_t kBinwidth = 500;
  const std::vector<Tag> all = randomTags(18, kChannels, 0, 100'000, 80.0);
  Counter counter("counter", kChannels, kBinwidth, 30);
  BlockFeeder feed(counter);
  feedRange(feed, all, 0, 4'000);  // 8 bins
  CHECK(counter.getDataObject(true).size == 8);
  feedRange(feed, all, 4'000, 100'000);  // 192 more: 162 overwritten before the next poll
  const CounterReference ref = counterReference(all, kChannels, 0, 100'000, kBinwidth, 30);
  const CounterData again = counter.getDataObject();
  const CounterData polled = counter.getDataObject(true);
  for (const CounterData* data : {&again, &polled}) {
    CHECK(data->size == 30);
    CHECK(data->dropped_bins == 162);
    CHECK(data->first_bin == 170);
    for (std::size_t i = 0; i < data->size; ++i) requireBinMatches(*data, i, ref, 170 + i);
  }
  const std::vector<double> normalized = polled.dataNormalized();
  for (std::size_t k = 0; k < normalized.size(); ++k) {
    CHECK(normalized[k] == static_cast<double>(polled.data[k]) * 1e12 / kBinwidth);
  }
  const CounterData after = counter.getDataObject(true);
  CHECK(after.size == 0);
  CHECK(after.dropped_bins == 0);
}

TEST_CASE("Counter data gives the stream time at which each bin began, pauses included",
          "[counter][data_object]") {
  constexpr timestamp_t kBinwidth = 700;
  const std::vector<Tag> all = randomTags(9, kChannels, 0, 9'000, 50.0);
  // Stopped at capture time 2500, inside bin 3, or at 2100, where bin 3 begins; resumed 3500
  // ps later. A bin that began before the stop keeps its start.
  for (const timestamp_t stop_at : {timestamp_t{2'500}, timestamp_t{2'100}}) {
    INFO("stopped at " << stop_at);
    constexpr timestamp_t kPause = 3'500;
    Counter counter("counter", kChannels, kBinwidth, 20);
    BlockFeeder feed(counter);
    feedRange(feed, all, 0, stop_at);
    counter.stop();
    feedRange(feed, all, stop_at, stop_at + kPause);
    counter.start();
    feedRange(feed, all, stop_at + kPause, 9'000);
    const CounterData polled = counter.getDataObject();
    REQUIRE(polled.size == static_cast<std::size_t>((9'000 - kPause) / kBinwidth));
    for (std::size_t i = 0; i < polled.size; ++i) {
      const timestamp_t capture_start = static_cast<timestamp_t>(i) * kBinwidth;
      INFO("bin " << i);
      CHECK(polled.index()[i] == capture_start);
      CHECK(polled.time[i] == capture_start + (capture_start >= stop_at ? kPause : 0));
    }
  }
}
