// Correlation bin layout (docs/measurements.md, Correlation): bin i holds tau in
// [lo + i*binwidth, lo + (i+1)*binwidth) with lo = -floor(n_bins*binwidth/2), getIndex() is the
// left edge plus floor(binwidth/2), and tau = t(channel_1) - t(channel_2) is positive when the
// channel_1 event comes later. Hand-made integer times put taus exactly on bin edges.
#include <catch2/catch.hpp>

#include <cstdint>
#include <variant>
#include <vector>

#include "support/generators.hpp"
#include "support/pairs.hpp"
#include "tagflow/measurements/correlation.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

// One channel_2 event at 1000 and one channel_1 event at 1000 + tau per tau: one pair each.
std::vector<Tag> pairsAt(const std::vector<timestamp_t>& taus) {
  std::vector<Tag> tags{makeTimeTag(2, 1000)};
  for (timestamp_t tau : taus) tags.push_back(makeTimeTag(1, 1000 + tau));
  sortStream(tags);
  return tags;
}

}  // namespace

TEST_CASE("Correlation index holds the bin centres for odd and even n_bins", "[correlation]") {
  struct Case {
    timestamp_t binwidth;
    std::int64_t n_bins;
    std::vector<std::int64_t> index;
  };
  const Case c = GENERATE(values<Case>({
      // The reference manual's figure: 21 bins of 10 ps, -100 .. +100, bin 10 at 0.
      {10, 21, {-100, -90, -80, -70, -60, -50, -40, -30, -20, -10, 0,
                10,   20,  30,  40,  50,  60,  70,  80,  90,  100}},
      {5, 3, {-5, 0, 5}},         // odd window 15: lo = -7, bins {-7..-3} {-2..2} {3..7}
      {10, 4, {-15, -5, 5, 15}},  // even n_bins: 0 is the left edge of bin 2
      {5, 4, {-8, -3, 2, 7}},     // lo = -10, centre = left edge + 2
      {7, 1, {0}},                // lo = -3
      {1, 2, {-1, 0}},            // lo = -1
      {3, 5, {-6, -3, 0, 3, 6}},  // lo = -7
  }));
  INFO("binwidth " << c.binwidth << ", n_bins " << c.n_bins);
  Correlation correlation("c", 1, 2, c.binwidth, c.n_bins);
  CHECK(correlation.getIndex() == c.index);
  const ResultSet results = correlation.getResults();
  CHECK(std::get<std::vector<std::int64_t>>(results.array("index").data) == c.index);
  CHECK(correlation.getData() == std::vector<std::int64_t>(c.index.size(), 0));
}

TEST_CASE("Correlation index follows lo + i*binwidth + floor(binwidth/2)", "[correlation]") {
  const timestamp_t binwidth = GENERATE(1, 2, 9, 10, 1000, 333'333);
  const std::int64_t n_bins = GENERATE(1, 2, 7, 8, 1000, 1001);
  INFO("binwidth " << binwidth << ", n_bins " << n_bins);
  Correlation correlation("c", 1, 2, binwidth, n_bins);
  const auto index = correlation.getIndex();
  REQUIRE(index.size() == static_cast<std::size_t>(n_bins));
  const timestamp_t lo = -((binwidth * n_bins) / 2);
  for (std::int64_t i = 0; i < n_bins; ++i) {
    REQUIRE(index[static_cast<std::size_t>(i)] == lo + i * binwidth + binwidth / 2);
  }
  // Odd n_bins: the middle bin is centred on zero. Even n_bins: zero is the left edge of bin
  // n_bins/2, so the index there is floor(binwidth/2).
  if (n_bins % 2 == 1) {
    CHECK(index[static_cast<std::size_t>(n_bins / 2)] == 0);
  } else {
    CHECK(index[static_cast<std::size_t>(n_bins / 2)] == binwidth / 2);
  }
}

TEST_CASE("Correlation puts tau on a bin edge into the bin on its right", "[correlation]") {
  struct Case {
    timestamp_t binwidth;
    std::int64_t n_bins;
    std::vector<timestamp_t> taus;  // first and last of each bin, and one past each end
    std::vector<std::int64_t> counts;
  };
  const Case c = GENERATE(values<Case>({
      // even n_bins, lo = -20: bins [-20,-10) [-10,0) [0,10) [10,20)
      {10, 4, {-21, -20, -11, -10, -1, 0, 9, 10, 19, 20}, {2, 2, 2, 2}},
      // odd n_bins, odd window, lo = -7: bins [-7,-2) [-2,3) [3,8)
      {5, 3, {-8, -7, -3, -2, 2, 3, 7, 8}, {2, 2, 2}},
      // odd n_bins, even window, lo = -15: bins [-15,-5) [-5,5) [5,15)
      {10, 3, {-16, -15, -6, -5, 4, 5, 14, 15}, {2, 2, 2}},
      // binwidth 49: tau - lo = k * 49 times the reciprocal 1/49 rounds below k in doubles
      {49, 4, {-99, -98, -50, -49, -1, 0, 48, 49, 97, 98}, {2, 2, 2, 2}},
      // binwidth 1: one tau per bin, lo = -2
      {1, 4, {-3, -2, -1, 0, 1, 2}, {1, 1, 1, 1}},
  }));
  INFO("binwidth " << c.binwidth << ", n_bins " << c.n_bins);
  const std::vector<Tag> tags = pairsAt(c.taus);
  Correlation correlation("c", 1, 2, c.binwidth, c.n_bins);
  runMemory(tags, 1000, 0, 5000, {&correlation});
  CHECK(correlation.getData() == c.counts);
  CHECK(correlation.getData() ==
        correlationReference(tags, 1, 2, c.binwidth, c.n_bins, 0, 5000).counts);
}

TEST_CASE("Correlation counts a later channel_1 event at positive tau", "[correlation]") {
  // channel_2 at 1000, channel_1 30 ps later: tau = +30, bin [30, 40) of lo = -50.
  const std::vector<Tag> tags{makeTimeTag(2, 1000), makeTimeTag(1, 1030)};
  Correlation later("later", 1, 2, 10, 10);
  // The same events with the roles swapped: tau = -30, bin [-30, -20).
  Correlation earlier("earlier", 2, 1, 10, 10);
  runMemory(tags, 1000, 0, 2000, {&later, &earlier});
  CHECK(later.getData() == std::vector<std::int64_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 0});
  CHECK(later.getIndex()[8] == 35);
  CHECK(earlier.getData() == std::vector<std::int64_t>{0, 0, 1, 0, 0, 0, 0, 0, 0, 0});
  CHECK(earlier.getIndex()[2] == -25);
}
