// FrequencyStability against brute force on a generated clock with restarts: Error tags, an
// overflow interval and a missing edge split the stream into series; every deviation, tau and
// trace must match the O(N^2) SP 1065 formulas over the same series, for any block size. Also:
// a phase that drifts far from the reference (a clock far off its first period estimate) is
// re-anchored without changing any result.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "clock_reference.hpp"
#include "support/generators.hpp"
#include "support/pairs.hpp"
#include "tagflow/measurements/frequency_stability.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

constexpr timestamp_t kPeriod = 1'000'000;  // 1 MHz
constexpr channel_t kClock = 3;

// A clock with white phase noise and a random walk of its phase, beside a Poisson channel.
std::vector<Tag> noisyClock(std::uint64_t seed, std::size_t edges, double white_ps,
                            double walk_ps) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<Tag> tags;
  double walk = 0;
  for (std::size_t k = 0; k < edges; ++k) {
    walk += walk_ps * normal(random);
    const double time =
        5000.0 + static_cast<double>(k) * kPeriod + walk + white_ps * normal(random);
    tags.push_back(makeTimeTag(kClock, static_cast<timestamp_t>(std::llround(time))));
  }
  const auto others = randomTags(seed + 1, {1}, 0, tags.back().time, 3.0 * kPeriod);
  tags.insert(tags.end(), others.begin(), others.end());
  sortStream(tags);
  return tags;
}

Tag special(TagType type, timestamp_t time) {
  return Tag{type, 0, 0, 0, time};
}

struct Expected {
  std::vector<double> tau, adev, mdev, hdev, stdd;
  std::vector<double> trace_index, trace_phase, trace_frequency, trace_absolute;
};

Expected bruteForce(const std::vector<Tag>& tags, const std::vector<std::int64_t>& steps,
                    std::int64_t average, std::size_t trace_len) {
  const auto series = sampleSeries(tags, kClock, average, kPeriod);
  const Real period = meanPeriod(series, average);
  Expected e;
  for (std::int64_t n : steps) {
    DeviationSums sums;
    for (const auto& samples : series) {
      sums.addSeries(phases(samples, average * period), static_cast<std::size_t>(n));
    }
    const Real tau = n * average * period;
    e.tau.push_back(static_cast<double>(tau * 1e-12L));
    e.adev.push_back(static_cast<double>(sums.adevAt(tau)));
    e.mdev.push_back(static_cast<double>(sums.mdevAt(tau)));
    e.hdev.push_back(static_cast<double>(sums.hdevAt(tau)));
    e.stdd.push_back(static_cast<double>(sums.stdd() * 1e-12L));
  }
  // Traces: the last trace_len samples of the last series, each with its predecessor.
  const auto& last = series.back();
  const std::size_t length = std::min(trace_len, last.size() - 1);
  const std::size_t first = last.size() - length;
  Real intervals = 0;
  for (std::size_t i = first; i < last.size(); ++i) intervals += last[i] - last[i - 1];
  const Real mean_interval = intervals / length;
  // Least-squares line through (i, s_i), written out.
  Real si = 0, ss = 0, sii = 0, sis = 0;
  for (std::size_t i = first; i < last.size(); ++i) {
    si += i;
    ss += last[i];
    sii += static_cast<Real>(i) * i;
    sis += i * last[i];
  }
  const Real slope = (length * sis - si * ss) / (length * sii - si * si);
  const Real intercept = (ss - slope * si) / length;
  for (std::size_t i = first; i < last.size(); ++i) {
    const Real interval = last[i] - last[i - 1];
    e.trace_index.push_back(static_cast<double>(last[i] * 1e-12L));
    e.trace_phase.push_back(static_cast<double>((last[i] - intercept - slope * i) * 1e-12L));
    e.trace_frequency.push_back(static_cast<double>(mean_interval / interval - 1));
    e.trace_absolute.push_back(static_cast<double>(average / (interval * 1e-12L)));
  }
  return e;
}

void requireClose(const std::vector<double>& actual, const std::vector<double>& expected,
                  double relative, const char* what) {
  INFO(what);
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    INFO("index " << i);
    if (std::isnan(expected[i])) {
      CHECK(std::isnan(actual[i]));
    } else {
      CHECK(actual[i] == Approx(expected[i]).epsilon(relative));
    }
  }
}

// Absolute tolerance relative to the largest magnitude (trace values cross zero), and at least
// `floor`.
void requireCloseAbsolute(const std::vector<double>& actual, const std::vector<double>& expected,
                          double relative, const char* what, double floor = 0) {
  INFO(what);
  REQUIRE(actual.size() == expected.size());
  double largest = 0;
  for (double value : expected) largest = std::max(largest, std::abs(value));
  for (std::size_t i = 0; i < actual.size(); ++i) {
    INFO("index " << i);
    CHECK(std::abs(actual[i] - expected[i]) <= std::max(relative * largest, floor));
  }
}

void requireMatches(const FrequencyStability& stability, const Expected& e) {
  const FrequencyStabilityData d = stability.getDataObject();
  requireClose(d.tau, e.tau, 1e-12, "tau");
  requireClose(d.adev, e.adev, 1e-9, "adev");
  requireClose(d.mdev, e.mdev, 1e-9, "mdev");
  requireClose(d.hdev, e.hdev, 1e-9, "hdev");
  requireClose(d.stdd, e.stdd, 1e-9, "stdd");
  std::vector<double> adev_scaled, tdev, hdev_scaled;
  for (std::size_t i = 0; i < e.tau.size(); ++i) {
    adev_scaled.push_back(e.tau[i] / std::sqrt(3.0) * e.adev[i]);
    tdev.push_back(e.tau[i] / std::sqrt(3.0) * e.mdev[i]);
    hdev_scaled.push_back(e.tau[i] / std::sqrt(10.0 / 3) * e.hdev[i]);
  }
  requireClose(d.adev_scaled, adev_scaled, 1e-9, "adev_scaled");
  requireClose(d.tdev, tdev, 1e-9, "tdev");
  requireClose(d.hdev_scaled, hdev_scaled, 1e-9, "hdev_scaled");
  requireClose(d.trace_index, e.trace_index, 1e-15, "trace_index");
  // Phases accumulate rounding of about 1e-7 ps (means of several edges are not whole ps, and
  // the reference's residuals cancel large values): with a few ps of residual phase that is
  // more than 1e-9 of the largest, so 1e-6 ps is the floor.
  requireCloseAbsolute(d.trace_phase, e.trace_phase, 1e-9, "trace_phase", 1e-18);
  requireCloseAbsolute(d.trace_frequency, e.trace_frequency, 1e-7, "trace_frequency");
  requireClose(d.trace_frequency_absolute, e.trace_absolute, 1e-12, "trace_frequency_absolute");
}

}  // namespace

TEST_CASE("FrequencyStability matches brute force across Errors, an overflow and a missing edge",
          "[frequency_stability][brute_force]") {
  auto tags = noisyClock(11, 30'000, 300, 40);
  const timestamp_t end = tags.back().time + 1;
  // A missing edge at 20 ms, Errors at 5.3 ms and 11.1 ms, an overflow from 14 to 15.5 ms.
  tags.erase(std::find_if(tags.begin(), tags.end(), [](const Tag& tag) {
    return tag.channel == kClock && tag.time > 20'000'000'000;
  }));
  tags.push_back(special(TagType::Error, 5'300'000'123));
  tags.push_back(special(TagType::Error, 11'100'000'456));
  sortStream(tags);
  tags = withOverflow(tags, 14'000'000'000, 15'500'000'000);

  const std::vector<std::int64_t> steps{1, 2, 3, 8, 20, 50, 300, 500, 800};
  const std::int64_t average = 7;
  const Expected expected = bruteForce(tags, steps, average, 100);
  REQUIRE(sampleSeries(tags, kClock, average, kPeriod).size() == 5);

  const std::size_t block_size = GENERATE(1, 13, 4096, 16384);
  INFO("block size " << block_size);
  FrequencyStability stability("fs", kClock, steps, average, 100);
  runMemory(tags, block_size, 0, end, {&stability});
  requireMatches(stability, expected);
  CHECK(stability.getOverflowCount() == 1);
  const ResultSet results = stability.getResults();
  CHECK(results.facts.getInt("restarts_on_slip") == 1);
  // The longest series (20..30 ms) has 1428 samples: 2 * 800 do not fit, 3 * 500 neither.
  CHECK(std::isnan(stability.getADEV()[8]));
  CHECK(std::isnan(stability.getMDEV()[7]));
  CHECK(std::isfinite(stability.getADEV()[7]));
}

TEST_CASE("FrequencyStability leaves an extra edge out of every series", "[frequency_stability]") {
  // Glitches early in a period (as the first sample of a new series, a third of a period off,
  // one raised ADEV(1) fifteenfold) and late in one (they pass the interval check, and the
  // real edge after them fails it), one a whole series away from the next.
  const timestamp_t glitch_after = GENERATE(kPeriod / 3, kPeriod * 3 / 5, kPeriod * 99 / 100);
  const std::int64_t average = GENERATE(1, 3);
  INFO("glitches " << glitch_after << " ps after an edge, average " << average);
  auto tags = noisyClock(23, 20'000, 20, 0);
  std::vector<Tag> glitches;
  for (const std::size_t edge : {3000, 9001, 9003, 15000}) {
    std::size_t seen = 0;
    for (const Tag& tag : tags) {
      if (tag.channel == kClock && seen++ == edge) {
        glitches.push_back(makeTimeTag(kClock, tag.time + glitch_after));
      }
    }
  }
  tags.insert(tags.end(), glitches.begin(), glitches.end());
  sortStream(tags);
  const std::vector<std::int64_t> steps{1, 2, 10, 100};
  const Expected expected = bruteForce(tags, steps, average, 100);
  // Two edges between the glitches at 9001 and 9003 make no sample of 3.
  REQUIRE(sampleSeries(tags, kClock, average, kPeriod).size() == (average == 1 ? 5u : 4u));

  const std::size_t block_size = GENERATE(1, 7, 4096);
  INFO("block size " << block_size);
  FrequencyStability stability("fs", kClock, steps, average, 100);
  runMemory(tags, block_size, 0, tags.back().time + 1, {&stability});
  requireMatches(stability, expected);
  CHECK(stability.getResults().facts.getInt("restarts_on_slip") == 4);
  // White phase noise of 20 ps on 1 us: ADEV(1 us) = sqrt(3) * 20 ps / 1 us.
  if (average == 1) CHECK(stability.getADEV()[0] == Approx(std::sqrt(3.0) * 20e-6).epsilon(0.05));
}

TEST_CASE("FrequencyStability checks a series' first edges", "[frequency_stability]") {
  // Glitches and a missing edge among the first edges of the stream, before any period is
  // known: each must restart the series as it would anywhere later (a glitch taken as a sample
  // a third of a period off dominated every deviation), whatever the block size.
  const std::int64_t average = GENERATE(1, 3);
  auto tags = noisyClock(29, 20'000, 20, 0);
  std::vector<Tag> clock;
  for (const Tag& tag : tags) {
    if (tag.channel == kClock) clock.push_back(tag);
  }
  std::vector<Tag> changed;
  for (const Tag& tag : tags) {
    if (tag.channel != kClock) changed.push_back(tag);
  }
  for (std::size_t edge = 0; edge < clock.size(); ++edge) {
    if (edge == 9 || edge == 400) continue;  // missing edges
    changed.push_back(clock[edge]);
    // A glitch early in the period after the second edge, late in the one after the fifth and
    // early in the one after the 700th.
    if (edge == 1 || edge == 700)
      changed.push_back(makeTimeTag(kClock, clock[edge].time + kPeriod / 3));
    if (edge == 5) changed.push_back(makeTimeTag(kClock, clock[edge].time + kPeriod * 99 / 100));
  }
  sortStream(changed);
  const std::vector<std::int64_t> steps{1, 2, 10, 100};
  const Expected expected = bruteForce(changed, steps, average, 100);
  const auto series = sampleSeries(changed, kClock, average, kPeriod);
  // The first series, two edges, makes no sample of 3.
  REQUIRE(series.size() == (average == 1 ? 6u : 5u));

  const std::size_t block_size = GENERATE(1, 7, 4096);
  INFO("average " << average << ", block size " << block_size);
  FrequencyStability stability("fs", kClock, steps, average, 100);
  runMemory(changed, block_size, 0, changed.back().time + 1, {&stability});
  requireMatches(stability, expected);
  CHECK(stability.getResults().facts.getInt("restarts_on_slip") == 5);
}

TEST_CASE("FrequencyStability checks the edges of a capture shorter than its probe",
          "[frequency_stability]") {
  // Twelve edges with a glitch after the fourth: the capture ends before the probe of the first
  // edges is complete, and its edges are checked against the median of the intervals there are.
  auto tags = noisyClock(31, 12, 20, 0);
  std::vector<Tag> clock;
  for (const Tag& tag : tags) {
    if (tag.channel == kClock) clock.push_back(tag);
  }
  tags.push_back(makeTimeTag(kClock, clock[3].time + kPeriod / 3));
  sortStream(tags);
  const auto series = sampleSeries(tags, kClock, 1, kPeriod);
  REQUIRE(series.size() == 2);
  const std::size_t block_size = GENERATE(1, 5, 4096);
  INFO("block size " << block_size);
  FrequencyStability stability("fs", kClock, {1, 2}, 1, 100);
  runMemory(tags, block_size, 0, tags.back().time + 1, {&stability});
  const ResultSet results = stability.getResults();
  CHECK(results.facts.getInt("restarts_on_slip") == 1);
  CHECK(results.facts.getInt("samples") ==
        static_cast<std::int64_t>(series[0].size() + series[1].size()));
  // Deviations from the 7-edge series alone: the glitch would have put a third of a period
  // into ADEV(1).
  const Real period = meanPeriod(series, 1);
  DeviationSums sums;
  sums.addSeries(phases(series[0], period), 1);
  sums.addSeries(phases(series[1], period), 1);
  CHECK(stability.getADEV()[0] == Approx(static_cast<double>(sums.adevAt(period))).epsilon(1e-9));
}

TEST_CASE("FrequencyStability takes a fresh period after a start full of glitches",
          "[frequency_stability]") {
  // A check period taken from a short or glitch-ridden first series must not stay: there every
  // later edge of the clean clock failed the check, and every output stayed NaN. One glitch
  // half a period after the first edge, then an Error; or four glitches half a period after
  // each of the first four edges, so that most of the first intervals are half a period.
  const bool error_after_glitch = GENERATE(true, false);
  const std::int64_t average = GENERATE(1, 50);
  auto tags = noisyClock(37, 20'000, 20, 0);
  std::vector<timestamp_t> edges;
  for (const Tag& tag : tags) {
    if (tag.channel == kClock) edges.push_back(tag.time);
  }
  for (std::size_t edge = 0; edge < (error_after_glitch ? 1u : 4u); ++edge) {
    tags.push_back(makeTimeTag(kClock, edges[edge] + kPeriod / 2));
  }
  if (error_after_glitch) tags.push_back(special(TagType::Error, edges[0] + kPeriod * 3 / 4));
  sortStream(tags);

  const std::size_t block_size = GENERATE(1, 4096);
  INFO((error_after_glitch ? "glitch and Error" : "four glitches")
       << ", average " << average << ", block size " << block_size);
  FrequencyStability stability("fs", kClock, {1, 2, 4}, average, 100);
  runMemory(tags, block_size, 0, tags.back().time + 1, {&stability});
  const ResultSet results = stability.getResults();
  CHECK(results.facts.getInt("restarts_on_slip") <= 1);
  CHECK(results.facts.getInt("samples") >= static_cast<std::int64_t>(19'990 / average));
  CHECK(results.facts.getDouble("mean_period_ps") == Approx(kPeriod).epsilon(1e-3));
  // White phase noise of 20 ps on 1 us: ADEV(1 us) = sqrt(3) * 20 ps / 1 us.
  if (average == 1) CHECK(stability.getADEV()[0] == Approx(std::sqrt(3.0) * 20e-6).epsilon(0.05));
  CHECK(std::isfinite(stability.getADEV()[2]));
}

TEST_CASE("FrequencyStability keeps every sum when a drifting phase is re-anchored",
          "[frequency_stability][brute_force]") {
  // The first interval is 30 % short, so the first reference period is far off and the phase
  // runs away by 3e5 ps per sample: it passes the re-anchoring threshold (2^32 ps) after about
  // 14000 samples. The missing-edge check has its period from the median of the first
  // intervals: it sees no slip.
  auto tags = noisyClock(5, 40'000, 50, 0);
  for (Tag& tag : tags) {
    if (tag.channel == kClock && tag.time < 10'000) tag.time += 300'000;
  }
  sortStream(tags);
  const std::vector<std::int64_t> steps{1, 4, 16, 64};
  // The brute force makes its series with a period that never flags the short first interval.
  const auto series = sampleSeries(tags, kClock, 1, 1.2L * kPeriod);
  REQUIRE(series.size() == 1);
  FrequencyStability stability("fs", kClock, steps, 1, 50);
  runMemory(tags, 1000, 0, tags.back().time + 1, {&stability});
  const FrequencyStabilityData d = stability.getDataObject();
  const Real period = meanPeriod(series, 1);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    DeviationSums sums;
    sums.addSeries(phases(series[0], period), static_cast<std::size_t>(steps[i]));
    const Real tau = steps[i] * period;
    INFO("n = " << steps[i]);
    CHECK(d.adev[i] == Approx(static_cast<double>(sums.adevAt(tau))).epsilon(1e-9));
    CHECK(d.mdev[i] == Approx(static_cast<double>(sums.mdevAt(tau))).epsilon(1e-9));
    CHECK(d.hdev[i] == Approx(static_cast<double>(sums.hdevAt(tau))).epsilon(1e-9));
    CHECK(d.stdd[i] == Approx(static_cast<double>(sums.stdd() * 1e-12L)).epsilon(1e-9));
  }
  CHECK(stability.getResults().facts.getInt("restarts_on_slip") == 0);
}
