// The synthetic source's random draws (io/src/sources/random_draws.hpp): streams are
// reproducible and distinct; the ziggurat exponential and the truncated normal follow their
// distributions (Kolmogorov-Smirnov on a million draws at the 0.1 % critical value), tails and
// the 6 sigma truncation included; the exponential's wedge test decides as exp itself does;
// the bulk draws (bulk_draws.hpp) give what drawing element by element gives.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <vector>

#include "sources/bulk_draws.hpp"
#include "sources/random_draws.hpp"

using namespace tagflow::synthetic;

namespace {

// The Kolmogorov-Smirnov statistic of `values` against the continuous CDF `cdf`.
double ksStatistic(std::vector<double> values, const std::function<double(double)>& cdf) {
  std::sort(values.begin(), values.end());
  const auto n = static_cast<double>(values.size());
  double statistic = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double f = cdf(values[i]);
    statistic =
        std::max({statistic, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  return statistic;
}

// The statistic a sample of `n` from the distribution exceeds with probability 0.1 %:
// sqrt(-ln(0.001 / 2) / 2) / sqrt(n).
double ksCritical(std::size_t n) {
  return 1.9495 / std::sqrt(static_cast<double>(n));
}

// xoshiro256++ one word at a time, as in its authors' reference code.
class ScalarXoshiro {
 public:
  explicit ScalarXoshiro(SplitMix64& seeder) {
    for (auto& word : s_) word = seeder.next();
  }
  explicit ScalarXoshiro(std::array<std::uint64_t, 4> state) : s_(state) {}
  std::uint64_t next() {
    const std::uint64_t result = std::rotl(s_[0] + s_[3], 23) + s_[0];
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }

 private:
  std::array<std::uint64_t, 4> s_;
};

double normalCdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

}  // namespace

TEST_CASE("Random streams are reproducible and distinct", "[synthetic]") {
  const auto words = [](std::uint64_t seed, int skip_streams) {
    SplitMix64 seeder(seed);
    for (int i = 0; i < skip_streams; ++i) RandomStream skipped(seeder);
    RandomStream stream(seeder);
    RandomStream::Reader draws(stream);
    std::vector<std::uint64_t> out;
    for (int i = 0; i < 1000; ++i) out.push_back(draws.bits());
    return out;
  };
  CHECK(words(5, 0) == words(5, 0));
  CHECK(words(5, 0) != words(6, 0));
  CHECK(words(5, 0) != words(5, 1));

  // A reader hands its place back: two readers in turn continue one sequence.
  SplitMix64 seeder(5);
  RandomStream stream(seeder);
  std::vector<std::uint64_t> in_turns;
  for (int reader = 0; reader < 4; ++reader) {
    RandomStream::Reader draws(stream);
    for (int i = 0; i < 250; ++i) in_turns.push_back(draws.bits());
  }
  CHECK(in_turns == words(5, 0));

  // Every bit is about half ones.
  for (int bit = 0; bit < 64; ++bit) {
    int ones = 0;
    for (const std::uint64_t word : words(7, 0)) ones += static_cast<int>((word >> bit) & 1);
    CHECK(std::abs(ones - 500) < 5 * std::sqrt(250.0));
  }
}

TEST_CASE("A random stream's words are eight interleaved xoshiro256++ sequences", "[synthetic]") {
  // The reference generator itself, from the state {1, 2, 3, 4} worked out by hand.
  ScalarXoshiro by_hand({1, 2, 3, 4});
  CHECK(by_hand.next() == 41943041);  // rotl(1 + 4, 23) + 1
  CHECK(by_hand.next() == 58720359);  // rotl(7 + rotl(6, 45), 23) + 7

  // Lane l takes the seeder's words 4l to 4l + 3, and word i of the stream is word i / 8 of
  // lane i % 8.
  SplitMix64 seeder(11);
  std::vector<ScalarXoshiro> lanes;
  for (int lane = 0; lane < 8; ++lane) lanes.emplace_back(seeder);
  SplitMix64 same_seeder(11);
  RandomStream stream(same_seeder);
  RandomStream::Reader draws(stream);
  for (int i = 0; i < 5000; ++i) {
    const std::uint64_t expected = lanes[static_cast<std::size_t>(i % 8)].next();
    REQUIRE(draws.bits() == expected);
  }
}

TEST_CASE("The ziggurat exponential follows the exponential distribution", "[synthetic]") {
  SplitMix64 seeder(11);
  RandomStream stream(seeder);
  RandomStream::Reader draws(stream);
  const std::size_t n = 1'000'000;
  std::vector<double> values(n);
  for (double& value : values) value = draws.exponential();
  CHECK(*std::min_element(values.begin(), values.end()) >= 0);
  const double d = ksStatistic(values, [](double x) { return 1 - std::exp(-x); });
  INFO("KS statistic " << d);
  CHECK(d < ksCritical(n));

  // The tail beyond the ziggurat's base strip (r = 7.697) is drawn apart: x - r is again
  // exponential.
  const double r = exponentialZiggurat().r;
  std::vector<double> tail;
  for (std::size_t i = 0; i < 20'000'000; ++i) {
    const double x = draws.exponential();
    if (x > r) tail.push_back(x - r);
  }
  const double expected = 20e6 * std::exp(-r);
  CHECK(std::abs(static_cast<double>(tail.size()) - expected) < 5 * std::sqrt(expected));
  const double tail_d = ksStatistic(tail, [](double x) { return 1 - std::exp(-x); });
  INFO("tail KS statistic " << tail_d << " over " << tail.size());
  CHECK(tail_d < ksCritical(tail.size()));
}

TEST_CASE("The exponential wedge test decides as the exponential itself does", "[synthetic]") {
  // Every layer's wedge: points spread over it, and heights a few units in the last place
  // either side of exp(-x), where the tangent and chord must leave the decision to exp.
  const ZigguratTables& z = exponentialZiggurat();
  ScalarXoshiro words(std::array<std::uint64_t, 4>{1, 2, 3, 4});
  const auto uniform = [&] { return static_cast<double>(words.next() >> 11) * 0x1.0p-53; };
  std::size_t checked = 0, mismatches = 0;
  for (std::size_t layer = 1; layer < 256; ++layer) {
    const double left = layer == 1 ? 0.0 : z.width[layer - 1] * 0x1.0p53;
    const double right = z.width[layer] * 0x1.0p53;
    for (int i = 0; i < 4000; ++i) {
      const double x = left + uniform() * (right - left);
      double height = z.density[layer] + uniform() * (z.density[layer - 1] - z.density[layer]);
      if (i % 2 == 1) {
        height = std::exp(-x);
        for (int ulps = i % 7; ulps > 0; --ulps) {
          height = std::nextafter(height, i % 4 == 1 ? 0.0 : 2.0);
        }
      }
      mismatches += underExponential(z, layer, x, height) != (height < std::exp(-x));
      ++checked;
    }
  }
  INFO(mismatches << " of " << checked << " decisions differ");
  CHECK(mismatches == 0);
}

TEST_CASE("The truncated normal follows the normal distribution within 6 sigma", "[synthetic]") {
  SplitMix64 seeder(12);
  RandomStream stream(seeder);
  RandomStream::Reader draws(stream);
  // The normal distribution conditioned on |x| <= 6.
  const double inside = normalCdf(kNormalTruncation) - normalCdf(-kNormalTruncation);
  const auto cdf = [inside](double x) {
    return (normalCdf(x) - normalCdf(-kNormalTruncation)) / inside;
  };
  const std::size_t n = 1'000'000;
  std::vector<double> values(n);
  for (double& value : values) value = draws.truncatedNormal();
  const double d = ksStatistic(values, cdf);
  INFO("KS statistic " << d);
  CHECK(d < ksCritical(n));

  // The tails beyond r = 3.654, drawn apart, up to the truncation and symmetric.
  const double r = normalZiggurat().r;
  std::vector<double> tail;
  std::size_t negative = 0;
  double largest = 0;
  for (std::size_t i = 0; i < 20'000'000; ++i) {
    const double x = draws.truncatedNormal();
    largest = std::max(largest, std::abs(x));
    if (std::abs(x) > r) {
      tail.push_back(std::abs(x));
      negative += x < 0;
    }
  }
  CHECK(largest <= kNormalTruncation);
  const double beyond = normalCdf(kNormalTruncation) - normalCdf(r);
  const double expected = 20e6 * 2 * beyond / inside;
  CHECK(std::abs(static_cast<double>(tail.size()) - expected) < 5 * std::sqrt(expected));
  const double half = static_cast<double>(tail.size()) / 2;
  CHECK(std::abs(static_cast<double>(negative) - half) < 5 * std::sqrt(half / 2));
  const double tail_d =
      ksStatistic(tail, [&](double x) { return (normalCdf(x) - normalCdf(r)) / beyond; });
  INFO("tail KS statistic " << tail_d << " over " << tail.size());
  CHECK(tail_d < ksCritical(tail.size()));
}

TEST_CASE("Bulk draws give what drawing element by element gives", "[synthetic]") {
  // 100 000 elements span hundreds of batches and about 1 500 draws off the fast path.
  const std::size_t n = 100'000;
  std::vector<tagflow::timestamp_t> times(n);
  for (std::size_t i = 0; i < n; ++i) times[i] = static_cast<tagflow::timestamp_t>(i) * 7919;
  const double sigma = GENERATE(0.0, 0.4, 50.0);
  const tagflow::timestamp_t offset = GENERATE(0, -1000);

  SplitMix64 bulk_seeder(5), single_seeder(5);
  RandomStream bulk_stream(bulk_seeder), single_stream(single_seeder);
  RandomStream::Reader bulk(bulk_stream), single(single_stream);
  // A word or two first, so that the runs start inside a batch.
  bulk.bits();
  single.bits();

  std::vector<tagflow::timestamp_t> jittered = times;
  addRoundedNormals(bulk, sigma, offset, jittered);
  std::size_t jitter_mismatches = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double jitter = sigma > 0 ? sigma * single.truncatedNormal() : 0.0;
    jitter_mismatches += jittered[i] != times[i] + offset + roundToPs(jitter);
  }
  CHECK(jitter_mismatches == 0);

  const std::uint64_t below = 0x5555'5555'5555'5555;
  std::vector<tagflow::timestamp_t> kept(n);
  kept.resize(keepWithWordBelow(bulk, below, times, kept.data()));
  std::vector<tagflow::timestamp_t> expected;
  for (const tagflow::timestamp_t time : times) {
    if (single.bits() < below) expected.push_back(time);
  }
  CHECK(kept == expected);
  // Both streams end at the same word.
  CHECK(bulk.bits() == single.bits());
}
