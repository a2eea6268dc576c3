// FrequencyStability and PhaseNoise split into consecutive ranges: each range starts series of
// its own, so the merged ranges equal one pass over the same stream with an Error tag at every
// cut (which restarts the series there), to rounding: the ranges take their phases against
// reference periods of their own, which the second differences and the linear detrend remove
// only up to rounding. Against the unbroken stream the split loses the terms and segments
// across each cut; on white phase noise it still reads the analytic levels.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "split_harness.hpp"
#include "support/synthetic.hpp"
#include "tagflow/measurements/frequency_stability.hpp"
#include "tagflow/measurements/phase_noise.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

// Sums taken against other reference periods and merged in another order: every deviation,
// tau and spectrum point within 1e-12 relative (with the tolerance at 1e-13 only STDD values
// failed). The trace's phases are residuals of about 20 ps from a line through phases that
// drift by up to 10^7 ps against a reference period taken from two samples: their rounding is
// that of the phases, more than 1e-11 of the largest residual (that tolerance failed), which
// 1e-9 holds with room.
constexpr double kRoundingTolerance = 1e-12;
constexpr double kTraceTolerance = 1e-9;

// 40 ms: a 10 MHz clock with white phase and frequency noise, a 2.5 MHz clock with white
// phase noise, Poisson tags between them, an overflow interval.
SyntheticConfig clocksConfig(std::uint64_t seed) {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 2e6),
                     SyntheticChannel::clock(2, 10e6, 20, ClockNoise{.white_fm = 1e-9}),
                     SyntheticChannel::clock(5, 2.5e6, 40)};
  config.overflows = {{13'000'000'000, 13'400'000'000}};
  config.duration_ps = 40'000'000'000;
  config.seed = seed;
  return config;
}

std::vector<std::pair<std::string, MeasurementFactory>> seriesKinds() {
  return {
      {"FrequencyStability, average 1",
       [] {
         return std::make_unique<FrequencyStability>(
             "m", 2, std::vector<std::int64_t>{1, 2, 5, 16, 100, 1000}, 1, 50);
       }},
      {"FrequencyStability, average 7",
       [] {
         return std::make_unique<FrequencyStability>(
             "m", 2, std::vector<std::int64_t>{1, 3, 10, 40}, 7, 20);
       }},
      {"FrequencyStability, no trace",
       [] {
         return std::make_unique<FrequencyStability>("m", 5, std::vector<std::int64_t>{1, 4}, 3, 0);
       }},
      {"PhaseNoise, two clocks",
       [] {
         return std::make_unique<PhaseNoise>("m", std::vector<channel_t>{2, 5}, 16);
       }},
      {"PhaseNoise, 64 per octave",
       [] { return std::make_unique<PhaseNoise>("m", std::vector<channel_t>{2}, 64); }},
  };
}

// The stream with an Error tag at each cut, before the tags of that time.
DrainedStream withErrorsAt(const DrainedStream& stream, const std::vector<timestamp_t>& cuts) {
  DrainedStream gapped = stream;
  for (const timestamp_t cut : cuts) {
    for (DrainedBlock& block : gapped.blocks) {
      if (cut < block.begin || cut >= block.end) continue;
      const auto at = std::lower_bound(block.tags.begin(), block.tags.end(), cut,
                                       [](const Tag& tag, timestamp_t t) { return tag.time < t; });
      block.tags.insert(at, Tag{.type = TagType::Error, .time = cut});
    }
  }
  return gapped;
}

// Relative to `scale`, or to the larger of the two values.
bool close(double expected, double actual, double tolerance, double scale = 0) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) == std::isnan(actual);
  scale = std::max({scale, std::abs(expected), std::abs(actual)});
  return std::abs(expected - actual) <= tolerance * scale;
}

// Integer arrays and facts equal, doubles within `tolerance` relative.
void requireCloseResults(const ResultSet& expected, const ResultSet& actual, double tolerance) {
  REQUIRE(expected.arrays.size() == actual.arrays.size());
  for (std::size_t i = 0; i < expected.arrays.size(); ++i) {
    const ResultArray& want = expected.arrays[i];
    const ResultArray& got = actual.arrays[i];
    INFO("array " << want.name);
    REQUIRE(want.name == got.name);
    REQUIRE(want.shape == got.shape);
    if (const auto* values = std::get_if<std::vector<double>>(&want.data)) {
      const auto& other = std::get<std::vector<double>>(got.data);
      // The trace's phases compare against the largest residual (kTraceTolerance).
      double scale = 0;
      double within = tolerance;
      if (want.name == "trace_phase") {
        for (const double value : *values) scale = std::max(scale, std::abs(value));
        within = kTraceTolerance;
      }
      for (std::size_t j = 0; j < values->size(); ++j) {
        INFO("element " << j << ": " << (*values)[j] << " against " << other[j]);
        CHECK(close((*values)[j], other[j], within, scale));
      }
    } else {
      CHECK(want.data == got.data);
    }
  }
  for (const auto& [key, value] : expected.facts.entries()) {
    if (key == "running") continue;
    INFO("fact " << key);
    if (std::holds_alternative<double>(value)) {
      CHECK(close(std::get<double>(value), actual.facts.getDouble(key), tolerance));
    } else {
      CHECK(formatParameter(actual.facts.at(key)) == formatParameter(value));
    }
  }
}

}  // namespace

TEST_CASE("Clock measurements over consecutive ranges equal one pass with a gap at every cut",
          "[split][clock]") {
  const std::uint64_t seed = GENERATE(4, 21);
  const int ranges = GENERATE(2, 3, 7);
  const SyntheticConfig config = clocksConfig(seed);
  const DrainedStream stream = drainSynthetic(config);
  std::mt19937_64 random(seed * 100 + static_cast<std::uint64_t>(ranges));
  std::uniform_int_distribution<std::size_t> any_tag(1, stream.tags.size() - 2);
  std::uniform_int_distribution<timestamp_t> any_time(stream.begin() + 1, stream.end() - 1);
  // On a tag, inside the overflow, at its begin and end, anywhere.
  const std::vector<timestamp_t> awkward{stream.tags[any_tag(random)].time, 13'200'000'000,
                                         13'000'000'000, 13'400'000'000};
  std::vector<timestamp_t> cuts;
  for (int i = 0; i + 1 < ranges; ++i) {
    cuts.push_back(i < 4 ? awkward[static_cast<std::size_t>(i)] : any_time(random));
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<timestamp_t> bounds{stream.begin()};
  bounds.insert(bounds.end(), cuts.begin(), cuts.end());
  bounds.push_back(stream.end());
  const DrainedStream gapped = withErrorsAt(stream, cuts);

  for (const auto& [label, make] : seriesKinds()) {
    INFO(label << ", " << ranges << " ranges, seed " << seed);
    const auto whole = make();
    feed(*whole, gapped);
    const auto merged = mergeRanges(make, stream, bounds);
    requireCloseResults(whole->getResults(), merged->getResults(), kRoundingTolerance);
  }
}

TEST_CASE("A split FrequencyStability keeps the trace of the last range and the shifted means",
          "[split][clock]") {
  const SyntheticConfig config = clocksConfig(8);
  const DrainedStream stream = drainSynthetic(config);
  const timestamp_t cut = 30'000'000'000;
  const MeasurementFactory make = [] {
    return std::make_unique<FrequencyStability>("m", 2, std::vector<std::int64_t>{1, 10}, 1, 30);
  };
  const auto first = make();
  first->setShardPlan(ShardPlan{.end = cut});
  feed(*first, stream, stream.begin(), cut);
  const auto second = make();
  second->setShardPlan(ShardPlan{.begin = cut});
  feed(*second, stream, cut);
  const auto later = dynamic_cast<FrequencyStability&>(*second).getDataObject();
  first->mergePartialState(second->getPartialState());
  const auto& merged = dynamic_cast<FrequencyStability&>(*first);
  const FrequencyStabilityData data = merged.getDataObject();
  // The trace is the later range's (its phases are residuals, independent of the reference).
  REQUIRE(data.trace_index.size() == 30);
  CHECK(data.trace_index == later.trace_index);
  for (std::size_t i = 0; i < 30; ++i) {
    CHECK(data.trace_phase[i] == Approx(later.trace_phase[i]).margin(1e-18));
  }
  CHECK(data.trace_index.front() >= 30e-3);
  // STDD is the spread of differences about their mean: with the later range's mean moved to
  // the first range's reference period, it stays at sqrt(2) sigma_x of one range.
  CHECK(data.stdd[0] == Approx(later.stdd[0]).epsilon(0.05));
}

TEST_CASE("Split clock measurements read the analytic white phase noise levels", "[split][clock]") {
  // 10 MHz, 30 ps jitter, every edge a sample, 7 ranges: 4e5 samples lose 6 x 3n terms. ADEV =
  // sqrt(3) sigma_x / tau within 2 % (statistical error 0.3 % at n = 1, 1.6 % at n = 32) and
  // L = (2 pi f0 sigma_t)^2 / f0 within 0.5 dB averaged over the octaves with at least 50
  // segments (as for one pass).
  SyntheticConfig config;
  config.channels = {SyntheticChannel::clock(3, 10e6, 30)};
  config.duration_ps = 40'000'000'000;
  config.seed = 12;
  const DrainedStream stream = drainSynthetic(config);
  std::vector<timestamp_t> bounds;
  for (int r = 0; r <= 7; ++r) {
    bounds.push_back(stream.begin() + (stream.end() - stream.begin()) * r / 7 + (r % 7 ? 333 : 0));
  }
  const std::vector<std::int64_t> steps{1, 2, 4, 8, 16, 32};
  const auto stability = mergeRanges(
      [&] { return std::make_unique<FrequencyStability>("m", 3, steps, 1, 0); }, stream, bounds);
  const FrequencyStabilityData data = dynamic_cast<FrequencyStability&>(*stability).getDataObject();
  const double sigma_x = std::sqrt(30.0 * 30.0 + 1.0 / 12) * 1e-12;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    INFO("n = " << steps[i]);
    CHECK(data.tau[i] == Approx(static_cast<double>(steps[i]) * 1e-7).epsilon(1e-7));
    CHECK(data.adev[i] == Approx(std::sqrt(3.0) * sigma_x / data.tau[i]).epsilon(0.02));
  }

  const auto noise =
      mergeRanges([] { return std::make_unique<PhaseNoise>("m", std::vector<channel_t>{3}, 32); },
                  stream, bounds);
  const PhaseNoiseSpectrum spectrum = dynamic_cast<PhaseNoise&>(*noise).getDataObject().front();
  CHECK(spectrum.frequency == Approx(10e6).epsilon(1e-7));
  const double phase = 2 * std::numbers::pi * 10e6 * sigma_x;
  const double level_db = 10 * std::log10(phase * phase / 10e6);
  double sum = 0;
  int points = 0;
  for (std::size_t i = 0; i < spectrum.offset.size(); ++i) {
    if (spectrum.segments[i] < 50) continue;
    sum += std::pow(10.0, spectrum.phase_noise[i] / 10);
    ++points;
  }
  REQUIRE(points > 100);
  CHECK(10 * std::log10(sum / points) == Approx(level_db).margin(0.5));
}
