// Correlation against the brute-force pair enumeration, bin by bin and exactly: cross- and
// auto-correlation (channel_2 left out or equal to channel_1: ordered pairs of two different
// events, never a tag with itself), odd and even n_bins, and times on a coarse grid so that
// many taus land exactly on bin edges and events share times; also a histogram counted in
// batches (larger than the caches). Event counts and g2 follow.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <variant>
#include <vector>

#include "support/generators.hpp"
#include "support/pairs.hpp"
#include "support/reference.hpp"
#include "tagflow/measurements/correlation.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

constexpr timestamp_t kEnd = 2'000'000;

// Channels 1, 2 and 3 with mean gaps of 100 ps, all times rounded down to a multiple of `grid`.
std::vector<Tag> gridTags(std::uint64_t seed, timestamp_t grid) {
  std::vector<Tag> tags = randomTags(seed, {1, 2, 3}, 0, kEnd, 100.0);
  for (Tag& tag : tags) tag.time -= tag.time % grid;
  sortStream(tags);
  return tags;
}

void requireMatches(const Correlation& correlation, const CorrelationReference& ref) {
  REQUIRE(correlation.getData() == ref.counts);
  CHECK(correlation.getEventCounts() == std::pair<std::uint64_t, std::uint64_t>{ref.n1, ref.n2});
  CHECK(sameValues(correlation.getDataNormalized(), ref.normalized(), 1e-12));
  const ResultSet results = correlation.getResults();
  CHECK(std::get<std::vector<std::int64_t>>(results.array("data").data) == ref.counts);
  CHECK(results.facts.getInt("events_1") == static_cast<std::int64_t>(ref.n1));
  CHECK(results.facts.getInt("events_2") == static_cast<std::int64_t>(ref.n2));
  CHECK(results.facts.getInt("valid_duration_ps") == ref.valid_time);
}

}  // namespace

TEST_CASE("Correlation of two channels equals the brute force", "[correlation][reference]") {
  const timestamp_t grid = GENERATE(1, 5);
  const timestamp_t binwidth = GENERATE(1, 5, 37, 49);
  const std::int64_t n_bins = GENERATE(1, 2, 40, 41);
  INFO("grid " << grid << ", binwidth " << binwidth << ", n_bins " << n_bins);
  const std::vector<Tag> tags = gridTags(11, grid);
  Correlation forward("forward", 1, 2, binwidth, n_bins);
  Correlation backward("backward", 2, 1, binwidth, n_bins);
  runMemory(tags, 997, 0, kEnd, {&forward, &backward});
  const auto ref = correlationReference(tags, 1, 2, binwidth, n_bins, 0, kEnd);
  REQUIRE(std::count_if(ref.counts.begin(), ref.counts.end(), [](auto n) { return n > 0; }) > 0);
  requireMatches(forward, ref);
  requireMatches(backward, correlationReference(tags, 2, 1, binwidth, n_bins, 0, kEnd));
}

TEST_CASE("Correlation of a channel with itself equals the brute force, without self pairs",
          "[correlation][reference]") {
  const timestamp_t grid = GENERATE(1, 5);
  const timestamp_t binwidth = GENERATE(1, 5, 37, 49);
  const std::int64_t n_bins = GENERATE(1, 2, 40, 41);
  INFO("grid " << grid << ", binwidth " << binwidth << ", n_bins " << n_bins);
  const std::vector<Tag> tags = gridTags(12, grid);
  Correlation unused("unused", 3, CHANNEL_UNUSED, binwidth, n_bins);
  Correlation same("same", 3, 3, binwidth, n_bins);
  runMemory(tags, 997, 0, kEnd, {&unused, &same});
  const auto ref = correlationReference(tags, 3, CHANNEL_UNUSED, binwidth, n_bins, 0, kEnd);
  CHECK(ref.n1 == ref.n2);
  requireMatches(unused, ref);
  requireMatches(same, ref);

  // Every unordered pair appears at +tau and -tau: with an odd window the bins are symmetric
  // around zero, so the histogram is too.
  if ((binwidth * n_bins) % 2 == 1) {
    const auto counts = unused.getData();
    for (std::size_t i = 0; i < counts.size(); ++i) {
      REQUIRE(counts[i] == counts[counts.size() - 1 - i]);
    }
  }
}

TEST_CASE("Correlation auto mode pairs different events only", "[correlation]") {
  // Three events at 0, 10 and 25 ps, plus two more sharing a time at 40 ps.
  const std::vector<Tag> tags{makeTimeTag(4, 0), makeTimeTag(4, 10), makeTimeTag(4, 25),
                              makeTimeTag(4, 40), makeTimeTag(4, 40)};
  // binwidth 1, 101 bins: bin 50 + tau holds tau in -50..50.
  Correlation correlation("auto", 4, CHANNEL_UNUSED, 1, 101);
  runMemory(tags, 2, 0, 1000, {&correlation});
  std::vector<std::int64_t> expected(101, 0);
  for (timestamp_t tau : {10, 25, 15, 40, 30, 15, 40, 30, 15}) {
    ++expected[static_cast<std::size_t>(50 + tau)];
    ++expected[static_cast<std::size_t>(50 - tau)];
  }
  expected[50] = 2;  // the two distinct events at 40 ps, in both orders; no self pairs
  CHECK(correlation.getData() == expected);
  CHECK(correlation.getEventCounts() == std::pair<std::uint64_t, std::uint64_t>{5, 5});
  CHECK(correlation.getData() ==
        correlationReference(tags, 4, CHANNEL_UNUSED, 1, 101, 0, 1000).counts);
}

TEST_CASE("Correlation g2 uses the capture time and both event totals", "[correlation]") {
  const std::vector<Tag> tags = gridTags(13, 1);
  Correlation correlation("c", 1, 2, 50, 21);
  runMemory(tags, 4096, 0, kEnd, {&correlation});
  const auto ref = correlationReference(tags, 1, 2, 50, 21, 0, kEnd);
  REQUIRE(correlation.getCaptureDuration() == kEnd);
  const auto g2 = correlation.getDataNormalized();
  const auto counts = correlation.getData();
  const auto [n1, n2] = correlation.getEventCounts();
  CHECK(n1 == countTimeTags(tags, 1, 0, kEnd));
  CHECK(n2 == countTimeTags(tags, 2, 0, kEnd));
  for (std::size_t i = 0; i < g2.size(); ++i) {
    const double expected = static_cast<double>(kEnd) /
                            (50.0 * static_cast<double>(n1) * static_cast<double>(n2)) *
                            static_cast<double>(counts[i]);
    REQUIRE(g2[i] == Approx(expected).epsilon(1e-12));
  }
  CHECK(sameValues(g2, ref.normalized(), 1e-12));
}

TEST_CASE("A Correlation larger than the caches equals the brute force",
          "[correlation][reference]") {
  // Above CountBatch::kCachedBins counters the pairs are counted in batches.
  const std::int64_t n_bins = static_cast<std::int64_t>(CountBatch::kCachedBins) * 2 + 1;
  const std::vector<Tag> tags = gridTags(13, 1);
  Correlation cross("cross", 1, 2, 1, n_bins);
  Correlation self("self", 3, CHANNEL_UNUSED, 1, n_bins);
  runMemory(tags, GENERATE(97, 4096), 0, kEnd, {&cross, &self});
  requireMatches(cross, correlationReference(tags, 1, 2, 1, n_bins, 0, kEnd));
  requireMatches(self, correlationReference(tags, 3, CHANNEL_UNUSED, 1, n_bins, 0, kEnd));
}

TEST_CASE("A Correlation whose window holds more pairs than its queue equals the brute force",
          "[correlation][reference]") {
  // 10^4 events a channel in 400 ns, all inside the +-200 ns window of every event: one
  // event's pairs outgrow the queue of pairs waiting to be counted (8192), which grows.
  constexpr timestamp_t kDenseEnd = 400'000;
  const std::vector<Tag> tags = randomTags(14, {1, 2}, 0, kDenseEnd, 40.0);
  Correlation cross("cross", 1, 2, 1000, 401);
  Correlation self("self", 2, CHANNEL_UNUSED, 1000, 401);
  runMemory(tags, GENERATE(997, 65536), 0, kDenseEnd, {&cross, &self});
  const auto ref = correlationReference(tags, 1, 2, 1000, 401, 0, kDenseEnd);
  REQUIRE(ref.n2 > 9000);
  requireMatches(cross, ref);
  requireMatches(self, correlationReference(tags, 2, CHANNEL_UNUSED, 1000, 401, 0, kDenseEnd));
}
