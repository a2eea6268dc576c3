// The synthetic clock noise models, measured directly on the edge times with plain loops:
// white FM gives independent period errors of sigma = h sqrt(f0) periods, random-walk FM
// period steps of h sqrt(3 / f0) periods, a drift the phase -d t^2 / 2, a phase modulation a
// sinusoid of beta / (2 pi f0); bad coefficients are rejected by name; the config keys reach
// the source.
#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>
#include <vector>

#include "support/synthetic.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

std::vector<double> edgeTimes(const SyntheticChannel& clock, timestamp_t duration_ps) {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 1e5), clock};
  config.duration_ps = duration_ps;
  config.seed = 21;
  std::vector<double> times;
  for (const Tag& tag : drainSynthetic(config).tags) {
    if (tag.channel == clock.channel) times.push_back(static_cast<double>(tag.time));
  }
  return times;
}

double variance(const std::vector<double>& values) {
  double mean = 0, squares = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  for (double v : values) squares += (v - mean) * (v - mean);
  return squares / static_cast<double>(values.size() - 1);
}

}  // namespace

TEST_CASE("Synthetic white FM: independent period errors of h sqrt(f0) periods",
          "[synthetic][clock]") {
  // 1 MHz, h = 1e-8: sigma = 1e-5 periods = 10 ps per period; rounding both edges to whole ps
  // adds 2/12 ps^2. 100000 periods: 0.45 % statistical error on the variance.
  const auto t =
      edgeTimes(SyntheticChannel::clock(3, 1e6, 0, ClockNoise{.white_fm = 1e-8}), 100'000'000'000);
  std::vector<double> periods, steps;
  for (std::size_t i = 1; i < t.size(); ++i) periods.push_back(t[i] - t[i - 1]);
  CHECK(variance(periods) == Approx(100.0 + 2.0 / 12).epsilon(0.02));
  // Independent: consecutive period errors do not correlate (lag-1 of white FM is zero).
  double lag = 0, mean = 0;
  for (double p : periods) mean += p;
  mean /= static_cast<double>(periods.size());
  for (std::size_t i = 1; i < periods.size(); ++i) {
    lag += (periods[i] - mean) * (periods[i - 1] - mean);
  }
  lag /= static_cast<double>(periods.size() - 1) * variance(periods);
  CHECK(std::abs(lag) < 0.02);
}

TEST_CASE("Synthetic random-walk FM: period steps of h sqrt(3 / f0) periods",
          "[synthetic][clock]") {
  // 1 kHz, h = 1e-6: steps of 1e-6 sqrt(3e-3) periods = 54.8 ps; rounding adds 6/12 ps^2 to
  // the second difference of the edges. 20000 periods: 1 % statistical error.
  const auto t = edgeTimes(SyntheticChannel::clock(3, 1e3, 0, ClockNoise{.random_walk_fm = 1e-6}),
                           20'000'000'000'000);
  std::vector<double> steps;
  for (std::size_t i = 2; i < t.size(); ++i) steps.push_back(t[i] - 2 * t[i - 1] + t[i - 2]);
  const double step = 1e9 * 1e-6 * std::sqrt(3e-3);
  CHECK(variance(steps) == Approx(step * step + 0.5).epsilon(0.04));
}

TEST_CASE("Synthetic drift and phase modulation move the edges as specified",
          "[synthetic][clock]") {
  SECTION("drift: x(t) = -d t^2 / 2") {
    const double drift = 1e-6;  // per second
    const auto t = edgeTimes(SyntheticChannel::clock(3, 1e6, 0, ClockNoise{.drift_per_s = drift}),
                             1'000'000'000'000);
    // x = t_k - k T against -d (k T)^2 / 2: up to 500000 ps early at 1 s (rounding: 0.5 ps).
    for (std::size_t k : {std::size_t{1000}, std::size_t{250'000}, t.size() - 1}) {
      const double seconds = static_cast<double>(k) * 1e-6;
      INFO("edge " << k);
      CHECK(t[k] - 1e6 * static_cast<double>(k) ==
            Approx(-0.5 * drift * seconds * seconds * 1e12).margin(1.0));
    }
  }
  SECTION("modulation: x(t) = -beta / (2 pi f0) sin(2 pi f_m t)") {
    const double beta = 0.05, fm = 1234.0;
    const auto t = edgeTimes(
        SyntheticChannel::clock(3, 1e6, 0, ClockNoise{.pm_index = beta, .pm_frequency_hz = fm}),
        100'000'000'000);
    double sine = 0, cosine = 0;
    for (std::size_t k = 0; k < t.size(); ++k) {
      const double x = t[k] - 1e6 * static_cast<double>(k);
      const double angle = 2 * std::numbers::pi * fm * static_cast<double>(k) * 1e-6;
      sine += x * std::sin(angle);
      cosine += x * std::cos(angle);
    }
    const double n = static_cast<double>(t.size());
    const double amplitude = beta / (2 * std::numbers::pi * 1e6) * 1e12;  // ps
    CHECK(2 * sine / n == Approx(-amplitude).epsilon(2e-3));
    CHECK(std::abs(2 * cosine / n) < 1e-3 * amplitude);
  }
}

TEST_CASE("Bad clock noise coefficients are rejected naming the value", "[synthetic][clock]") {
  const auto rejects = [](SyntheticChannel channel, const std::string& text) {
    SyntheticConfig config;
    config.channels = {channel};
    INFO(text);
    CHECK_THROWS_AS(config.validate(), InvalidArgument);
    CHECK_THROWS_WITH(config.validate(), Contains(text));
  };
  rejects(SyntheticChannel::clock(3, 1e6, 0, ClockNoise{.white_fm = 1e-4}), "white_fm 0.0001");
  rejects(SyntheticChannel::clock(3, 1e6, 0, ClockNoise{.white_fm = -1}), "white_fm -1");
  rejects(SyntheticChannel::clock(3, 1e6, 0, ClockNoise{.random_walk_fm = 1e-5}),
          "random_walk_fm 0.00001");
  rejects(SyntheticChannel::clock(3, 1e6, 0, ClockNoise{.drift_per_s = -2e-6}), "drift -0.000002");
  rejects(SyntheticChannel::clock(3, 1e6, 0, ClockNoise{.pm_index = 0.1}), "pm_frequency 0");
  rejects(SyntheticChannel::clock(3, 1e6, 0, ClockNoise{.pm_index = 0.1, .pm_frequency_hz = 6e5}),
          "pm_frequency 600000");
  rejects(SyntheticChannel::clock(3, 1e6, 0, ClockNoise{.pm_index = 500, .pm_frequency_hz = 1e3}),
          "pm_index * pm_frequency 500000");
  SyntheticChannel poisson = SyntheticChannel::poisson(1, 1e6);
  poisson.noise.drift_per_s = 1e-9;
  rejects(poisson, "only valid for kind clock");
}

TEST_CASE("The clock noise keys of a synthetic source reach the channel", "[synthetic][clock]") {
  SourceSpec spec;
  spec.kind = "synthetic";
  spec.tables["channel"] = {Parameters{{"channel", std::int64_t{3}},
                                       {"kind", std::string("clock")},
                                       {"frequency", 10e6},
                                       {"white_fm", 1e-9},
                                       {"random_walk_fm", 1e-10},
                                       {"drift", 1e-9},
                                       {"pm_index", 0.01},
                                       {"pm_frequency", 1e5}}};
  const SyntheticConfig config = syntheticConfigFrom(spec);
  const ClockNoise& noise = config.channels.at(0).noise;
  CHECK(noise.white_fm == 1e-9);
  CHECK(noise.random_walk_fm == 1e-10);
  CHECK(noise.drift_per_s == 1e-9);
  CHECK(noise.pm_index == 0.01);
  CHECK(noise.pm_frequency_hz == 1e5);
  CHECK_THAT(SyntheticSource(config).describe(), Contains("pm 0.01 rad at 100000 Hz"));
  spec.tables["channel"][0].set("wander", 1.0);
  CHECK_THROWS_WITH(syntheticConfigFrom(spec), Contains("wander"));
}
