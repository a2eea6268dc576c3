// PhaseNoise on synthetic clocks with known phase noise, checking the convention
// L(f) = S_phi(f) / 2 with S_phi one-sided: white phase noise of sigma_t on a clock f0 reads
// L = (2 pi f0 sigma_t)^2 / f0 at every offset and integrates back to sigma_t; a sinusoidal
// phase modulation of index beta shows a spur of total power (beta / 2)^2 at its frequency,
// also inside a decimated octave. A missing edge restarts the series without disturbing the
// level, an extra edge early or late in a period is left out as an Error would cut the series
// there; an overflow restarts it and the Welch segments of both series add up.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "support/pairs.hpp"
#include "support/reference.hpp"
#include "support/synthetic.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/phase_noise.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

constexpr double kCarrier = 10e6;
constexpr timestamp_t kDuration = 20'000'000'000;  // 20 ms: 200000 edges

SyntheticConfig clockConfig(double jitter_ps, ClockNoise noise = {}) {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 5e6),
                     SyntheticChannel::clock(3, kCarrier, jitter_ps, noise)};
  config.duration_ps = kDuration;
  config.seed = 9;
  return config;
}

PhaseNoiseSpectrum measure(const SyntheticConfig& config, std::int64_t samples_per_octave) {
  SyntheticSource source(config);
  PhaseNoise noise("pn", {3}, samples_per_octave);
  runGraph(source, {&noise});
  return noise.getDataObject().front();
}

double whiteLevel(double sigma_ps) {  // L in 1/Hz
  const double phase = 2 * std::numbers::pi * kCarrier * sigma_ps * 1e-12;
  return phase * phase / kCarrier;
}

// Mean of the linear L over each octave (points sharing a segment count come from one stage;
// stage 0 spans 1.5 octaves) with at least `min_segments` segments, in dB.
std::vector<double> octaveMeansDb(const PhaseNoiseSpectrum& s, std::uint64_t min_segments) {
  std::vector<double> means;
  std::size_t i = 0;
  while (i < s.offset.size()) {
    std::size_t j = i;
    double sum = 0;
    while (j < s.offset.size() && s.segments[j] == s.segments[i]) {
      sum += std::pow(10.0, s.phase_noise[j] / 10);
      ++j;
    }
    if (s.segments[i] >= min_segments) {
      means.push_back(10 * std::log10(sum / static_cast<double>(j - i)));
    }
    i = j;
  }
  return means;
}

// Power (dBc) summed over the points within `bins` point widths of `frequency`.
double spurPowerDb(const PhaseNoiseSpectrum& s, double frequency, double bins) {
  double power = 0;
  for (std::size_t i = 0; i < s.offset.size(); ++i) {
    if (std::abs(s.offset[i] - frequency) <= bins * s.bin_width[i]) {
      power += std::pow(10.0, s.phase_noise[i] / 10) * s.bin_width[i];
    }
  }
  return 10 * std::log10(power);
}

}  // namespace

TEST_CASE("White phase noise gives L = (2 pi f0 sigma)^2 / f0 and integrates to sigma",
          "[phase_noise][physics]") {
  // 20 ps jitter plus the 1/12 ps^2 of rounding to whole ps.
  const double sigma_ps = std::sqrt(20.0 * 20.0 + 1.0 / 12);
  const PhaseNoiseSpectrum s = measure(clockConfig(20), 16);
  // The carrier is (last edge - first edge) / periods: it scatters by sqrt(2) sigma / duration
  // (1.4e-9 here), and the stream's ends keep only one side of the end edges' jitter, a bias
  // below sigma / duration. Five standard deviations and the bias.
  const double duration = static_cast<double>(kDuration);
  CHECK(s.frequency ==
        Approx(kCarrier).epsilon(5 * std::sqrt(2.0) * sigma_ps / duration + sigma_ps / duration));
  REQUIRE(s.offset.size() > 100);
  CHECK(s.offset.back() < kCarrier / 2);
  CHECK(s.offset.back() > kCarrier / 2 * 0.98);
  CHECK(std::is_sorted(s.offset.begin(), s.offset.end()));
  // An octave of 16 points from >= 30 segments has a statistical spread of about 0.2 dB.
  const double expected_db = 10 * std::log10(whiteLevel(sigma_ps));
  const auto means = octaveMeansDb(s, 30);
  REQUIRE(means.size() >= 5);
  for (double mean : means) CHECK(mean == Approx(expected_db).margin(1.0));
  // Full band: everything above the lowest octave, which is 0.1 % of f0 / 2 here.
  CHECK(s.integratedJitter() == Approx(sigma_ps * 1e-12).epsilon(0.05));
  // A band holds its share of the white variance.
  CHECK(s.integratedJitter(kCarrier / 16, kCarrier / 4) ==
        Approx(sigma_ps * 1e-12 * std::sqrt((1.0 / 4 - 1.0 / 16) / 0.5)).epsilon(0.05));
  CHECK(s.integratedJitter(kCarrier, 2 * kCarrier) == 0.0);
}

TEST_CASE("A sinusoidal phase modulation shows a spur of 20 log10(beta / 2) dBc",
          "[phase_noise][physics]") {
  // 2.3 MHz lies in the undecimated octaves, 27 kHz in stage 6 (19.5..39 kHz), whose samples
  // passed six decimation filters. The spur spreads over the Hann window's main lobe (two bins
  // either side); summing four either side collects all but 1e-4 of it.
  const double beta = 0.01;
  const double modulation = GENERATE(2.3e6, 27e3);
  INFO("f_m = " << modulation);
  const PhaseNoiseSpectrum s =
      measure(clockConfig(2, ClockNoise{.pm_index = beta, .pm_frequency_hz = modulation}), 16);
  CHECK(spurPowerDb(s, modulation, 4) == Approx(20 * std::log10(beta / 2)).margin(1.0));
  CHECK(spurPowerDb(s, modulation, 4) == Approx(20 * std::log10(beta / 2)).margin(0.1));
  // Away from the spur the floor is the white level of 2 ps.
  CHECK(10 * std::log10(whiteLevel(2.0)) - spurPowerDb(s, modulation, 4) < -60);
}

TEST_CASE("A missing edge restarts the phase series and leaves the level alone",
          "[phase_noise][physics]") {
  const double sigma_ps = std::sqrt(20.0 * 20.0 + 1.0 / 12);
  auto tags = drainSynthetic(clockConfig(20)).tags;
  const auto missing = std::find_if(tags.begin(), tags.end(), [](const Tag& tag) {
    return tag.channel == 3 && tag.time > kDuration / 2;
  });
  tags.erase(missing);
  PhaseNoise noise("pn", {3}, 16);
  runMemory(tags, 16384, 0, kDuration, {&noise});
  CHECK(noise.getResults().array("restarts_on_slip").data ==
        ArrayData(std::vector<std::int64_t>{1}));
  const PhaseNoiseSpectrum s = noise.getDataObject().front();
  for (double mean : octaveMeansDb(s, 30)) {
    CHECK(mean == Approx(10 * std::log10(whiteLevel(sigma_ps))).margin(1.0));
  }
}

TEST_CASE("An extra edge is left out, as an Error would cut the series", "[phase_noise][physics]") {
  const double sigma_ps = std::sqrt(20.0 * 20.0 + 1.0 / 12);
  const auto clean = drainSynthetic(clockConfig(20)).tags;
  const auto edge = std::find_if(clean.begin(), clean.end(), [](const Tag& tag) {
    return tag.channel == 3 && tag.time > kDuration / 2;
  });
  // A glitch early or late in a period (then it passes the interval check, and the real edge
  // after it fails it); against it, the same stream cut by an Error.
  const timestamp_t after_edge = GENERATE(33'333, 60'000, 99'000);
  INFO("glitch " << after_edge << " ps after an edge");
  const timestamp_t glitch = edge->time + after_edge;
  const auto at =
      std::upper_bound(clean.begin(), clean.end(), glitch,
                       [](timestamp_t time, const Tag& tag) { return time < tag.time; });
  auto glitched = clean;
  glitched.insert(glitched.begin() + (at - clean.begin()), makeTimeTag(3, glitch));
  auto cut = clean;
  cut.insert(cut.begin() + (at - clean.begin()), Tag{TagType::Error, 0, 0, 0, glitch});

  PhaseNoise with_glitch("pn", {3}, 16);
  runMemory(glitched, GENERATE(7, 16384), 0, kDuration, {&with_glitch});
  PhaseNoise with_error("pn", {3}, 16);
  runMemory(cut, 16384, 0, kDuration, {&with_error});
  CHECK(with_glitch.getResults().array("restarts_on_slip").data ==
        ArrayData(std::vector<std::int64_t>{1}));
  const PhaseNoiseSpectrum s = with_glitch.getDataObject().front();
  const PhaseNoiseSpectrum reference = with_error.getDataObject().front();
  CHECK(s.segments == reference.segments);
  CHECK(sameBits(s.phase_noise, reference.phase_noise));
  for (double mean : octaveMeansDb(s, 30)) {
    CHECK(mean == Approx(10 * std::log10(whiteLevel(sigma_ps))).margin(1.0));
  }
}

TEST_CASE("An overflow restarts the series and the segments of both series add up",
          "[phase_noise][overflow]") {
  SyntheticConfig config = clockConfig(20);
  config.overflows = {{8'000'000'000, 8'500'000'000}};
  const auto tags = drainSynthetic(config).tags;
  PhaseNoise noise("pn", {3}, 16);
  runMemory(tags, GENERATE(100, 16384), 0, kDuration, {&noise});
  std::uint64_t before = 0, after = 0;
  for (const Tag& tag : tags) {
    if (tag.type != TagType::TimeTag || tag.channel != 3) continue;
    (tag.time < 8'000'000'000 ? before : after) += 1;
  }
  // Stage 0 segments of 128 samples, every 64: (n - 128) / 64 + 1 per series.
  const auto segments = [](std::uint64_t n) { return (n - 128) / 64 + 1; };
  const PhaseNoiseSpectrum s = noise.getDataObject().front();
  CHECK(s.segments.back() == segments(before) + segments(after));
  CHECK(s.averaged_sequences == s.segments.back());
  CHECK(noise.getResults().array("averaged_sequences").data ==
        ArrayData(std::vector<std::uint64_t>{s.averaged_sequences}));
  CHECK(noise.getOverflowCount() == 1);
}

TEST_CASE("Several clocks share one pass and give the spectra they give alone",
          "[phase_noise][channels]") {
  SyntheticConfig config = clockConfig(20);
  config.channels.push_back(SyntheticChannel::clock(5, 3e6, 50));
  const auto tags = drainSynthetic(config).tags;
  PhaseNoise both("both", {5, 3}, 16);
  PhaseNoise alone_3("three", {3}, 16);
  PhaseNoise alone_5("five", {5}, 16);
  const std::size_t block_size = GENERATE(7, 1000, 16384);
  runMemory(tags, block_size, 0, kDuration, {&both, &alone_3, &alone_5});
  const auto shared = both.getDataObject();
  const auto three = alone_3.getDataObject().front();
  const auto five = alone_5.getDataObject().front();
  CHECK(shared[0].offset == five.offset);
  CHECK(shared[0].phase_noise == five.phase_noise);
  CHECK(shared[1].offset == three.offset);
  CHECK(shared[1].phase_noise == three.phase_noise);
  CHECK(shared[1].segments == three.segments);
  CHECK(shared[0].frequency == Approx(3e6).epsilon(1e-8));
  const ResultSet results = both.getResults();
  CHECK(results.array("phase_noise").shape[0] == 2);
  CHECK(results.array("offset").shape[1] == std::max(three.offset.size(), five.offset.size()));
  CHECK(results.array("segments").shape == results.array("offset").shape);
  CHECK(results.array("averaged_sequences").shape == std::vector<std::size_t>{2});
}

TEST_CASE("PhaseNoise results do not depend on the block size", "[phase_noise][channels]") {
  const auto tags = drainSynthetic(clockConfig(20)).tags;
  PhaseNoise reference("reference", {3}, 16);
  runMemory(tags, 16384, 0, kDuration, {&reference});
  PhaseNoise noise("pn", {3}, 16);
  runMemory(tags, GENERATE(1, 333), 0, kDuration, {&noise});
  CHECK(noise.getDataObject().front().phase_noise == reference.getDataObject().front().phase_noise);
}
