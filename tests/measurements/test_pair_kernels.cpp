// The building blocks of the histograms' pair loops against plain references: the channel
// split (vector path with every tail length, negative channels, channels that differ only in
// their upper bits), the window advances (std::lower_bound / upper_bound), the exact divider
// (true division, at and around every multiple) and the log-bin look-up (a search of the
// edges, in the one-compare and the walking case).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "tagflow/measurements/exact_divider.hpp"
#include "tagflow/measurements/log_bin_lookup.hpp"
#include "tagflow/measurements/time_window.hpp"
#include "tagflow/measurements/twin_counts.hpp"

using namespace tagflow;

TEST_CASE("splitChannels keeps the times of two channels in order", "[pair_kernels]") {
  std::mt19937_64 random(7);
  const std::vector<channel_t> channels{1, -1, 2, 0x10001, 3};
  for (std::size_t size = 0; size < 40; ++size) {
    std::vector<Tag> tags;
    for (std::size_t i = 0; i < size; ++i) {
      tags.push_back(makeTimeTag(channels[random() % channels.size()],
                                 static_cast<timestamp_t>(i * 10 + random() % 5)));
    }
    for (const bool two : {false, true}) {
      TimeWindow a, b;
      a.push(-5);  // something already held stays first
      splitChannels(tags, 1, a, -1, two ? &b : nullptr);
      std::vector<timestamp_t> want_a{-5}, want_b;
      for (const Tag& tag : tags) {
        if (tag.channel == 1) want_a.push_back(tag.time);
        if (tag.channel == -1) want_b.push_back(tag.time);
      }
      const auto held_a = a.times();
      CHECK(std::vector<timestamp_t>(held_a.begin(), held_a.end()) == want_a);
      const auto held_b = b.times();
      CHECK(std::vector<timestamp_t>(held_b.begin(), held_b.end()) ==
            (two ? want_b : std::vector<timestamp_t>{}));
    }
  }
}

TEST_CASE("the window advances agree with binary searches", "[pair_kernels]") {
  std::mt19937_64 random(11);
  for (int round = 0; round < 300; ++round) {
    TimeWindow window;
    const std::size_t size = random() % 40;
    timestamp_t time = -100;
    for (std::size_t i = 0; i < size; ++i)
      window.push(time += static_cast<timestamp_t>(random() % 4));
    window.seal();
    const auto times = window.times();
    for (int probe = 0; probe < 20; ++probe) {
      const std::size_t from = size == 0 ? 0 : random() % (size + 1);
      const timestamp_t bound = -110 + static_cast<timestamp_t>(random() % 200);
      const auto lower = static_cast<std::size_t>(
          std::lower_bound(times.begin() + static_cast<std::ptrdiff_t>(from), times.end(), bound) -
          times.begin());
      const auto upper = static_cast<std::size_t>(
          std::upper_bound(times.begin() + static_cast<std::ptrdiff_t>(from), times.end(), bound) -
          times.begin());
      CHECK(advanceBelow(times, from, bound) == lower);
      CHECK(advanceNotAbove(times, from, bound) == upper);
    }
    CHECK(advanceNotAbove(times, 0, std::numeric_limits<timestamp_t>::max()) == size);
  }
}

TEST_CASE("TimeWindow::dropBefore forgets exactly the times before a bound", "[pair_kernels]") {
  std::mt19937_64 random(5);
  for (int round = 0; round < 300; ++round) {
    // Equal times in runs, windows from empty to a block's size, dropped again and again by
    // bounds that move on a little or a lot (every step and search length of the gallop).
    const std::size_t size = round < 200 ? random() % 40 : random() % 5000;
    std::vector<timestamp_t> reference;
    TimeWindow window;
    timestamp_t time = -100;
    for (std::size_t i = 0; i < size; ++i) {
      time += static_cast<timestamp_t>(random() % 4);
      reference.push_back(time);
      window.push(time);
    }
    timestamp_t bound = -120;
    for (int probe = 0; probe < 12 && !reference.empty(); ++probe) {
      bound += static_cast<timestamp_t>(random() % (probe % 3 == 0 ? 5 : 2 * size + 1));
      window.dropBefore(bound);
      std::erase_if(reference, [bound](timestamp_t t) { return t < bound; });
      INFO("round " << round << ", window of " << size << ", bound " << bound);
      REQUIRE(std::vector<timestamp_t>(window.times().begin(), window.times().end()) == reference);
    }
  }
}

TEST_CASE("writeDifferences writes every difference asked for, up to the window's end",
          "[pair_kernels]") {
  TimeWindow window;
  std::mt19937_64 random(8);
  timestamp_t time = 0;
  for (int i = 0; i < 100; ++i) window.push(time += 1 + static_cast<timestamp_t>(random() % 5000));
  const auto times = window.times();
  const timestamp_t from = time + 12345;
  std::vector<timestamp_t> out(200);
  // Every count from 0 past kWholeDifferences, each run ending at the window's end (where the
  // whole-run stores read into the slack) and one starting at its front.
  for (std::size_t count = 0; count <= kWholeDifferences + 8; ++count) {
    for (const std::size_t first : {times.size() - count, std::size_t{0}}) {
      INFO("count " << count << " from " << first);
      writeDifferences(from, times.data() + first, count, out.data());
      std::size_t wrong = 0;
      for (std::size_t j = 0; j < count; ++j) wrong += out[j] != from - times[first + j];
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("ExactDivider equals integer division below 2^52", "[pair_kernels]") {
  std::mt19937_64 random(3);
  const std::uint64_t limit = std::uint64_t{1} << ExactDivider::kInputBits;
  std::vector<std::uint64_t> divisors;
  for (std::uint64_t d = 1; d <= 300; ++d) divisors.push_back(d);
  for (int i = 0; i < 300; ++i) divisors.push_back(random() % limit + 1);
  for (int shift = 0; shift < 52; ++shift) {
    divisors.push_back(std::uint64_t{1} << shift);
    divisors.push_back((std::uint64_t{1} << shift) + 1);
    divisors.push_back((std::uint64_t{1} << (shift + 1)) - 1);
  }
  for (const std::uint64_t d : divisors) {
    const ExactDivider divide(d);
    std::uint64_t wrong = 0;
    for (int i = 0; i < 2000; ++i) {
      const std::uint64_t multiple = (random() % (limit / d)) * d;
      for (const std::uint64_t x : {random() % limit, multiple, multiple + d - 1, limit - 1}) {
        if (x < limit && divide(x) != x / d) ++wrong;
      }
      if (multiple > 0 && divide(multiple - 1) != (multiple - 1) / d) ++wrong;
    }
    INFO("divisor " << d);
    CHECK(wrong == 0);
  }
}

TEST_CASE("LogBinLookup finds the bin an edge search finds", "[pair_kernels]") {
  std::mt19937_64 random(5);
  struct Case {
    double exp_start, exp_stop;
    int bins;
  };
  // 1000 and 100000 bins over six decades, and 100000 over one decade at 1 ns (whole-ps edges
  // merge to 9000), take one compare; 100000 bins over three decades walk over up to two edges a
  // key, 200000 over one decade at 1 us over up to eleven. Up to 10^4 s the taus pass 2^52 ps
  // and the keys come from the integers.
  for (const Case c :
       {Case{-12, -6, 1000}, Case{-12, -3, 37}, Case{-12, -6, 100000}, Case{-9, -6, 100000},
        Case{-9, -8, 100000}, Case{-6, -5, 200000}, Case{-10, 0, 5000}, Case{-12, 4, 1000}}) {
    std::vector<timestamp_t> edges;
    for (int i = 0; i <= c.bins; ++i) {
      const double exponent = c.exp_start + (c.exp_stop - c.exp_start) * i / c.bins;
      edges.push_back(std::llround(std::pow(10.0, exponent + 12)));
    }
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    const LogBinLookup lookup(edges);
    const auto search = [&](timestamp_t tau) {
      return static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), tau) -
                                      edges.begin() - 1);
    };
    std::vector<timestamp_t> taus;
    for (const timestamp_t edge : edges) {
      for (const timestamp_t near : {edge - 1, edge, edge + 1}) {
        if (near >= edges.front() && near < edges.back()) taus.push_back(near);
      }
    }
    for (int i = 0; i < 20000; ++i) {
      const double exponent =
          std::log10(static_cast<double>(edges.front())) +
          std::uniform_real_distribution<double>(0, 1)(random) *
              std::log10(static_cast<double>(edges.back()) / static_cast<double>(edges.front()));
      const auto tau = static_cast<timestamp_t>(std::pow(10.0, exponent));
      if (tau >= edges.front() && tau < edges.back()) taus.push_back(tau);
    }
    std::size_t wrong = 0;
    for (const timestamp_t tau : taus) wrong += lookup.binOf(tau) != search(tau);
    INFO("bins " << c.bins << " from 1e" << c.exp_start);
    CHECK(wrong == 0);
    // The words written in runs of every length up to 40 (whole vectors up to
    // kWholeDifferences, one at a time beyond), then counted as arrays of several lengths.
    const timestamp_t from = edges.back();
    std::vector<timestamp_t> times(taus.size() + kWholeDifferences);
    for (std::size_t j = 0; j < taus.size(); ++j) times[j] = from - taus[j];
    std::vector<timestamp_t> words(taus.size() + kWholeDifferences);
    std::size_t written = 0;
    for (std::size_t run = 1; written < taus.size(); run = run % 40 + 1) {
      const std::size_t count = std::min(run, taus.size() - written);
      lookup.writeWords(from, times.data() + written, count, words.data() + written);
      written += count;
    }
    std::vector<std::uint64_t> expected(edges.size() - 1), counted(edges.size() - 1);
    TwinCounts<std::uint64_t> twin(expected.size());
    for (std::size_t length : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8},
                               std::size_t{9}, std::size_t{15}, taus.size()}) {
      INFO("length " << length);
      std::fill(expected.begin(), expected.end(), 0);
      std::fill(counted.begin(), counted.end(), 0);
      for (std::size_t j = 0; j < length; ++j) ++expected[search(taus[j])];
      lookup.countWords({words.data(), length}, counted.data(), twin);
      CHECK(counted == expected);
    }
    // The twin histogram is left empty: a second count doubles every bin.
    lookup.countWords({words.data(), taus.size()}, counted.data(), twin);
    for (std::uint64_t& count : expected) count *= 2;
    CHECK(counted == expected);
  }
}

TEST_CASE("TwinCounts counts every value into its bin, batch after batch", "[pair_kernels]") {
  std::mt19937_64 random(11);
  for (const std::size_t bins :
       {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{1000}}) {
    TwinCounts<std::int64_t> twin(bins);
    std::vector<std::int64_t> counted(bins), expected(bins);
    // Values in runs of equal bins (as a sorted run of differences gives) and at random.
    std::vector<timestamp_t> values;
    for (std::size_t i = 0; values.size() < 5000; ++i) {
      const auto value = static_cast<timestamp_t>(random() % (10 * bins));
      values.insert(values.end(), 1 + i % 4, value);
    }
    const auto bin_of = [bins](timestamp_t value) {
      return static_cast<std::size_t>(value) / 10 % bins;
    };
    // Batches below, at and above the number of bins, odd and even.
    std::size_t at = 0;
    for (const std::size_t length : {bins - 1, bins, bins + 1, std::size_t{0}, 2 * bins + 3,
                                     std::size_t{1}, values.size() / 2}) {
      INFO("bins " << bins << ", batch of " << length << " from " << at);
      const std::size_t take = std::min(length, values.size() - at);
      twin.count({values.data() + at, take}, counted.data(), bin_of);
      for (std::size_t j = at; j < at + take; ++j) ++expected[bin_of(values[j])];
      at += take;
      CHECK(counted == expected);
    }
  }
}
