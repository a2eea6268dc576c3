// SyntheticSource: a deterministic stream for a seed and config, independent of block size;
// blocks obey the contract and the size and duration limits; channel kinds have the
// configured statistics; bad configs are rejected naming the bad value.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "support/drain.hpp"
#include "support/reference.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

SyntheticConfig mixed(std::size_t block_size, timestamp_t max_block_duration_ps) {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 2e6), SyntheticChannel::clock(2, 1e6, 20),
                     SyntheticChannel::partner(3, 1, 500, 30, 0.7),
                     SyntheticChannel::poisson(4, 3e5)};
  config.seed = 12;
  config.block_size = block_size;
  config.max_block_duration_ps = max_block_duration_ps;
  config.duration_ps = 5'000'000'000;  // 5 ms, ~20k tags
  config.start_time_ps = 1'000'000'000;
  return config;
}

std::vector<timestamp_t> timesOf(const std::vector<Tag>& tags, channel_t channel) {
  std::vector<timestamp_t> times;
  for (const Tag& tag : tags) {
    if (tag.channel == channel && tag.type == TagType::TimeTag) times.push_back(tag.time);
  }
  return times;
}

}  // namespace

TEST_CASE("SyntheticSource is deterministic and independent of the block size", "[synthetic]") {
  SyntheticSource reference_source(mixed(16384, 20'000'000'000));
  const DrainedStream reference = drain(reference_source);
  requireWellFormed(reference);
  REQUIRE(reference.tags.size() > 15'000);

  const std::size_t block_size = GENERATE(1, 7, 1000, std::size_t{1} << 20);
  const timestamp_t max_duration = GENERATE(timestamp_t{100'000}, timestamp_t{20'000'000'000});
  SyntheticSource source(mixed(block_size, max_duration));
  const DrainedStream stream = drain(source);
  INFO("block_size " << block_size << ", max_block_duration_ps " << max_duration);
  requireWellFormed(stream);
  CHECK(stream.tags == reference.tags);
  CHECK(stream.begin() == 1'000'000'000);
  CHECK(stream.end() == 6'000'000'000);
  for (const auto& block : stream.blocks) {
    CHECK(block.end - block.begin <= max_duration);
    if (block.tags.size() > block_size) {
      // Only a run of tags sharing one time may exceed the limit.
      CHECK(block.tags.front().time == block.tags.back().time);
    }
  }
  for (const Tag& tag : stream.tags) {
    REQUIRE(tag.time >= 1'000'000'000);
    REQUIRE(tag.time < 6'000'000'000);
  }
}

TEST_CASE("SyntheticSource differs for different seeds", "[synthetic]") {
  auto config = mixed(4096, 20'000'000'000);
  SyntheticSource a(config);
  config.seed = 13;
  SyntheticSource b(config);
  CHECK(drain(a).tags != drain(b).tags);
}

TEST_CASE("Poisson channels have the configured rate and exponential gaps", "[synthetic]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 5e6)};
  config.duration_ps = 10'000'000'000;  // expect 50000 tags
  SyntheticSource source(config);
  const auto times = timesOf(drain(source).tags, 1);
  const double n = static_cast<double>(times.size());
  CHECK(std::abs(n - 50'000) < 5 * std::sqrt(50'000.0));
  double sum = 0, sum2 = 0;
  for (std::size_t i = 1; i < times.size(); ++i) {
    const double gap = static_cast<double>(times[i] - times[i - 1]);
    sum += gap;
    sum2 += gap * gap;
  }
  const double mean = sum / (n - 1);
  const double sd = std::sqrt(sum2 / (n - 1) - mean * mean);
  CHECK(mean == Approx(200'000).epsilon(0.03));
  CHECK(sd / mean == Approx(1.0).epsilon(0.05));  // exponential: sd == mean
}

TEST_CASE("A clock without jitter ticks at k times the period", "[synthetic]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::clock(1, 3e6)};  // period 333333.33 ps
  config.duration_ps = 1'000'000'000;
  config.start_time_ps = 5'000;
  config.block_size = 97;
  SyntheticSource source(config);
  const auto times = timesOf(drain(source).tags, 1);
  REQUIRE(times.size() == 3000);
  for (std::size_t k = 0; k < times.size(); ++k) {
    const double ideal = 5'000 + static_cast<double>(k) * 1e12 / 3e6;
    REQUIRE(std::abs(static_cast<double>(times[k]) - ideal) <= 1.0);
  }
}

TEST_CASE("Clock jitter is Gaussian with the configured sigma, truncated at 6 sigma",
          "[synthetic]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::clock(1, 1e7, 50)};  // period 100000 ps
  config.duration_ps = 2'000'000'000;
  SyntheticSource source(config);
  const DrainedStream stream = drain(source);
  requireWellFormed(stream);
  auto times = timesOf(stream.tags, 1);
  std::sort(times.begin(), times.end());
  REQUIRE(times.size() >= 19'990);
  double sum2 = 0;
  double worst = 0;
  for (const timestamp_t time : times) {
    const double deviation = static_cast<double>(time - (time + 50'000) / 100'000 * 100'000);
    sum2 += deviation * deviation;
    worst = std::max(worst, std::abs(deviation));
  }
  CHECK(std::sqrt(sum2 / static_cast<double>(times.size())) == Approx(50).epsilon(0.05));
  CHECK(worst <= 6 * 50 + 1);
}

TEST_CASE("A partner echoes its parent after the delay with the given probability", "[synthetic]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 2e6), SyntheticChannel::partner(2, 1, 1000),
                     SyntheticChannel::partner(3, 1, -5000, 0, 0.3)};
  config.duration_ps = 5'000'000'000;
  config.block_size = 333;
  SyntheticSource source(config);
  const DrainedStream stream = drain(source);
  requireWellFormed(stream);
  const auto parent = timesOf(stream.tags, 1);
  const auto echo = timesOf(stream.tags, 2);
  const auto rare = timesOf(stream.tags, 3);
  const std::set<timestamp_t> parent_set(parent.begin(), parent.end());
  // Probability 1, no jitter: every parent tag whose echo lands in the stream has one.
  std::vector<timestamp_t> expected_echo;
  for (timestamp_t t : parent) {
    if (t + 1000 < 5'000'000'000) expected_echo.push_back(t + 1000);
  }
  CHECK(echo == expected_echo);
  // A parent after the stream's end may still have its early echo inside the stream.
  for (timestamp_t t : rare)
    REQUIRE((parent_set.count(t + 5000) == 1 || t + 5000 >= 5'000'000'000));
  // Binomial: 0.3 of the parent tags (those whose echo is not before the start).
  const double n = static_cast<double>(parent.size());
  CHECK(std::abs(static_cast<double>(rare.size()) - 0.3 * n) < 5 * std::sqrt(n * 0.3 * 0.7));
}

TEST_CASE("Quiet stretches give empty blocks that still advance time", "[synthetic]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 1e5)};  // 10 us apart on average
  config.duration_ps = 500'000'000;
  config.max_block_duration_ps = 1'000'000;
  SyntheticSource source(config);
  const DrainedStream stream = drain(source);
  requireWellFormed(stream);
  CHECK(stream.emptyBlocks() > stream.blocks.size() / 2);
  CHECK(stream.end() == 500'000'000);
}

TEST_CASE("An endless synthetic stream keeps producing blocks", "[synthetic]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 1e7)};
  config.block_size = 100;
  SyntheticSource source(config);
  const DrainedStream stream = drain(source, 500);
  requireWellFormed(stream);
  CHECK(stream.blocks.size() == 500);
  CHECK(stream.tags.size() == 50'000);
  CHECK_THAT(source.describe(), Contains("seed=1") && Contains("poisson"));
}

TEST_CASE("Invalid synthetic configs are rejected, naming the bad value", "[synthetic]") {
  const auto base = [] {
    SyntheticConfig config;
    config.channels = {SyntheticChannel::poisson(1, 1e6), SyntheticChannel::clock(2, 1e6)};
    config.duration_ps = 1'000'000'000;
    return config;
  };
  const auto rejects = [&](const std::function<void(SyntheticConfig&)>& change,
                           const std::string& text) {
    SyntheticConfig config = base();
    change(config);
    INFO("expecting: " << text);
    REQUIRE_THROWS_AS(SyntheticSource(config), InvalidArgument);
    REQUIRE_THROWS_WITH(config.validate(), Contains(text));
  };
  CHECK_NOTHROW(base().validate());
  rejects([](auto& c) { c.channels.clear(); }, "channels must not be empty");
  rejects([](auto& c) { c.block_size = 0; }, "block_size 0");
  rejects([](auto& c) { c.max_block_duration_ps = -3; }, "max_block_duration_ps -3");
  rejects([](auto& c) { c.duration_ps = 0; }, "duration_ps 0");
  rejects([](auto& c) { c.duration_ps = -2; }, "duration_ps -2");
  rejects([](auto& c) { c.channels[0].rate_hz = -5; }, "rate -5");
  rejects([](auto& c) { c.channels[1].frequency_hz = 0; }, "frequency 0");
  rejects([](auto& c) { c.channels[1].jitter_ps = -1; }, "jitter_ps -1");
  rejects([](auto& c) { c.channels[1].channel = 1; }, "duplicate channel 1");
  rejects([](auto& c) { c.channels[0].channel = CHANNEL_UNUSED; }, "CHANNEL_UNUSED");
  rejects([](auto& c) { c.channels.push_back(SyntheticChannel::partner(3, 9, 0)); },
          "partner_of 9");
  rejects([](auto& c) { c.channels.push_back(SyntheticChannel::partner(3, 1, 0, 0, 1.5)); },
          "probability 1.5");
  rejects([](auto& c) { c.channels.push_back(SyntheticChannel::partner(3, 1, 2'000'000'000'000)); },
          "delay 2000000000000");
  rejects(
      [](auto& c) {
        c.channels.push_back(
            SyntheticChannel::partner(3, 1, std::numeric_limits<timestamp_t>::min()));
      },
      "delay -9223372036854775808 ps is invalid (valid: -1e12..1e12)");
  rejects([](auto& c) { c.overflows = {{500, 400}}; }, "[500, 400)");
  rejects([](auto& c) { c.overflows = {{100, 400}, {300, 500}}; }, "overflow #1 [300, 500)");
  rejects([](auto& c) { c.overflows = {{100, 1'000'000'000}}; }, "not before the stream end");
  rejects(
      [](auto& c) {
        c.start_time_ps = 1000;
        c.overflows = {{500, 600}};
      },
      "begin >= 1000");
}

TEST_CASE("Superposed Poisson channels keep their rates and are independent", "[synthetic]") {
  // The Poisson channels are drawn as one process whose events are given channels in
  // proportion to the rates: each channel must still be a Poisson process of its own rate,
  // independent of the others (with a clock merged in between).
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 1e6), SyntheticChannel::clock(4, 2e6, 20),
                     SyntheticChannel::poisson(2, 3e6), SyntheticChannel::poisson(3, 6e6)};
  config.seed = 21;
  config.duration_ps = 20'000'000'000;  // 20 ms
  SyntheticSource source(config);
  const DrainedStream stream = drain(source);
  requireWellFormed(stream);
  REQUIRE(std::is_sorted(stream.tags.begin(), stream.tags.end(), canonicalTagOrder));

  const std::map<channel_t, double> rates = {{1, 1e6}, {2, 3e6}, {3, 6e6}};
  std::map<channel_t, std::vector<timestamp_t>> times;
  for (const auto& [channel, rate] : rates) times[channel] = timesOf(stream.tags, channel);
  // 40000 edges, the first at the start: jitter puts it before the stream half of the time.
  const std::size_t edges = timesOf(stream.tags, 4).size();
  CHECK((edges == 40'000 || edges == 39'999));
  for (const auto& [channel, rate] : rates) {
    const double expected = rate * 0.02;
    INFO("channel " << channel);
    CHECK(std::abs(static_cast<double>(times[channel].size()) - expected) <
          5 * std::sqrt(expected));
    // Exponential gaps: the mean is 1 / rate and the standard deviation equals it.
    double sum = 0, sum2 = 0;
    const auto& t = times[channel];
    for (std::size_t i = 1; i < t.size(); ++i) {
      const auto gap = static_cast<double>(t[i] - t[i - 1]);
      sum += gap;
      sum2 += gap * gap;
    }
    const double n = static_cast<double>(t.size() - 1);
    const double mean = sum / n;
    CHECK(mean == Approx(1e12 / rate).epsilon(5 / std::sqrt(n)));
    // The sample standard deviation of exponential gaps has a relative error of about
    // sqrt(2) / sqrt(n).
    CHECK(std::sqrt(sum2 / n - mean * mean) / mean == Approx(1.0).epsilon(7.5 / std::sqrt(n)));
  }

  // The channel of the next Poisson event does not depend on this one's: every transition
  // i -> j has the probability rate_j / total.
  std::map<std::pair<channel_t, channel_t>, double> transitions;
  std::map<channel_t, double> from;
  channel_t previous = 0;
  for (const Tag& tag : stream.tags) {
    if (!rates.count(tag.channel)) continue;
    if (previous != 0) {
      transitions[{previous, tag.channel}] += 1;
      from[previous] += 1;
    }
    previous = tag.channel;
  }
  for (const auto& [a, rate_a] : rates) {
    for (const auto& [b, rate_b] : rates) {
      const double p = rate_b / 10e6;
      const double expected = from[a] * p;
      INFO("transition " << a << " -> " << b);
      CHECK(std::abs(transitions[{a, b}] - expected) < 5 * std::sqrt(expected * (1 - p)));
    }
  }

  // The cross-correlation of channels 1 and 2 is flat: channel-2 events within +-50 ns of a
  // channel-1 event, in 1 ns bins, are as many in every bin as for independent channels.
  const auto& ones = times[1];
  const auto& twos = times[2];
  std::vector<double> bins(100, 0.0);
  std::size_t first = 0;
  for (const timestamp_t t : ones) {
    while (first < twos.size() && twos[first] < t - 50'000) ++first;
    for (std::size_t k = first; k < twos.size() && twos[k] < t + 50'000; ++k) {
      bins[static_cast<std::size_t>((twos[k] - t + 50'000) / 1'000)] += 1;
    }
  }
  const double per_bin = static_cast<double>(ones.size()) * 3e6 * 1e-9;
  double total = 0;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    INFO("bin " << i << ": " << bins[i] << " against " << per_bin);
    CHECK(std::abs(bins[i] - per_bin) < 5 * std::sqrt(per_bin));
    total += bins[i];
  }
  CHECK(std::abs(total - 100 * per_bin) < 5 * std::sqrt(100 * per_bin));
}

TEST_CASE("Every kind of channel gives the same stream for every block size, duration and length",
          "[synthetic]") {
  // All kinds at once: superposed Poisson channels, a jittered clock and a noisy one, partners
  // of a Poisson channel (one ahead of it), of a clock and of a partner, overflow intervals.
  const auto config = [](std::size_t block_size, timestamp_t max_block_duration_ps) {
    ClockNoise noise;
    noise.white_fm = 1e-6;
    noise.pm_index = 0.2;
    noise.pm_frequency_hz = 1e5;
    SyntheticConfig c;
    c.channels = {SyntheticChannel::poisson(1, 4e6),
                  SyntheticChannel::poisson(2, 1e6),
                  SyntheticChannel::clock(3, 2e6, 15),
                  SyntheticChannel::clock(4, 5e5, 0, noise),
                  SyntheticChannel::partner(5, 1, 800, 40, 0.4),
                  SyntheticChannel::partner(6, 1, -3'000, 10, 0.9),
                  SyntheticChannel::partner(7, 3, 2'500, 100),
                  SyntheticChannel::partner(8, 5, 50'000, 0, 0.5),
                  SyntheticChannel::poisson(-2, 3e6)};
    c.overflows = {{400'000'000, 600'000'000}, {1'500'000'000, 1'500'000'100}};
    c.seed = 77;
    c.block_size = block_size;
    c.max_block_duration_ps = max_block_duration_ps;
    c.duration_ps = 3'000'000'000;
    c.start_time_ps = -1'000'000'000;
    return c;
  };
  SyntheticSource reference_source(config(16384, 20'000'000'000));
  const DrainedStream reference = drain(reference_source);
  requireWellFormed(reference);
  REQUIRE(std::is_sorted(reference.tags.begin(), reference.tags.end(), canonicalTagOrder));
  REQUIRE(reference.tags.size() > 30'000);
  for (const channel_t channel : {1, 2, 3, 4, 5, 6, 7, 8, -2}) {
    INFO("channel " << channel);
    CHECK(!timesOf(reference.tags, channel).empty());
  }
  // A shorter stream is the beginning of the longer one (the window that holds its end too).
  SyntheticConfig shorter_config = config(16384, 20'000'000'000);
  shorter_config.duration_ps = 1'700'000'123;
  shorter_config.overflows.pop_back();  // it would lie past the shorter end
  SyntheticSource shorter_source(shorter_config);
  const DrainedStream shorter = drain(shorter_source);
  const auto shorter_end =
      std::lower_bound(reference.tags.begin(), reference.tags.end(), 700'000'123,
                       [](const Tag& tag, timestamp_t time) { return tag.time < time; });
  CHECK(shorter.tags == std::vector<Tag>(reference.tags.begin(), shorter_end));
  CHECK(shorter.end() == 700'000'123);

  const std::size_t block_size = GENERATE(1, 7, 16384);
  const timestamp_t max_duration =
      GENERATE(timestamp_t{100'000}, timestamp_t{1'000'000}, timestamp_t{20'000'000'000});
  SyntheticSource source(config(block_size, max_duration));
  const DrainedStream stream = drain(source);
  INFO("block_size " << block_size << ", max_block_duration_ps " << max_duration);
  requireWellFormed(stream);
  CHECK(stream.tags == reference.tags);
  CHECK(stream.begin() == -1'000'000'000);
  CHECK(stream.end() == 2'000'000'000);
  for (const auto& block : stream.blocks) {
    CHECK(block.end - block.begin <= max_duration);
    if (block.tags.size() > block_size) CHECK(block.tags.front().time == block.tags.back().time);
  }
}
