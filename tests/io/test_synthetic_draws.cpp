// The synthetic source's random draws (io/src/sources/random_draws.hpp): streams are
// reproducible and distinct; the ziggurat exponential and the truncated normal follow their
// distributions (Kolmogorov-Smirnov on a million draws at the 0.1 % critical value), tails and
// the 6 sigma truncation included.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

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
