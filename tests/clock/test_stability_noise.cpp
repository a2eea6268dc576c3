// FrequencyStability on synthetic clocks with one noise type each: the deviations have the
// analytic levels and log-log slopes of that noise (white PM: ADEV = sqrt(3) sigma_x / tau,
// slope -1, MDEV = sqrt(3 / n) sigma_x / tau, slope -1.5, the scaled deviations read sigma_x;
// white FM: ADEV = h / sqrt(tau), slope -0.5; drift: ADEV = d tau / sqrt(2), slope +1;
// random-walk FM: slope +0.5). Tolerances are a few times the statistical error of each
// estimate for the number of samples used (stated per check).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "support/pairs.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/frequency_stability.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

const std::vector<std::int64_t> kOctaves{1, 2, 4, 8, 16, 32, 64};

FrequencyStabilityData measure(const SyntheticChannel& clock, timestamp_t duration_ps,
                               std::vector<std::int64_t> steps, std::int64_t average,
                               std::uint64_t seed = 3) {
  SyntheticConfig config;
  config.channels = {clock, SyntheticChannel::poisson(1, 2e6)};
  config.duration_ps = duration_ps;
  config.seed = seed;
  SyntheticSource source(config);
  FrequencyStability stability("fs", clock.channel, std::move(steps), average, 0);
  runGraph(source, {&stability});
  return stability.getDataObject();
}

// Least-squares slope of log(value) against log(tau).
double logSlope(const std::vector<double>& tau, const std::vector<double>& value) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(tau.size());
  for (std::size_t i = 0; i < tau.size(); ++i) {
    const double x = std::log(tau[i]), y = std::log(value[i]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

}  // namespace

TEST_CASE("White phase noise: ADEV = sqrt(3) sigma_x / tau, MDEV slope -1.5, scaled = sigma_x",
          "[frequency_stability][noise]") {
  // 1 MHz, 100 ps jitter, averages of 4 edges: sigma_x = sqrt(100^2 + 1/12) / 2 ps (the 1/12
  // is the rounding to whole ps). 0.5 s: 125000 samples, so the relative statistical error is
  // about 0.3 % at n = 1 and grows like sqrt(n): tolerances 2 % up to n = 8, 6 % beyond.
  const double sigma_x = std::sqrt(100.0 * 100.0 + 1.0 / 12) / 2 * 1e-12;
  const auto d = measure(SyntheticChannel::clock(3, 1e6, 100), 500'000'000'000, kOctaves, 4);
  for (std::size_t i = 0; i < kOctaves.size(); ++i) {
    const double n = static_cast<double>(kOctaves[i]);
    const double tolerance = n <= 8 ? 0.02 : 0.06;
    INFO("n = " << n);
    CHECK(d.tau[i] == Approx(n * 4e-6).epsilon(1e-9));
    CHECK(d.adev[i] == Approx(std::sqrt(3.0) * sigma_x / d.tau[i]).epsilon(tolerance));
    CHECK(d.mdev[i] == Approx(std::sqrt(3.0 / n) * sigma_x / d.tau[i]).epsilon(tolerance));
    CHECK(d.adev_scaled[i] == Approx(sigma_x).epsilon(tolerance));
    CHECK(d.hdev_scaled[i] == Approx(sigma_x).epsilon(tolerance));
    CHECK(d.tdev[i] == Approx(sigma_x / std::sqrt(n)).epsilon(tolerance));
    CHECK(d.stdd[i] == Approx(std::sqrt(2.0) * sigma_x).epsilon(tolerance));
  }
  CHECK(logSlope(d.tau, d.adev) == Approx(-1.0).margin(0.02));
  CHECK(logSlope(d.tau, d.mdev) == Approx(-1.5).margin(0.02));
}

TEST_CASE("White frequency noise: ADEV = h / sqrt(tau), slope -0.5",
          "[frequency_stability][noise]") {
  // ADEV 1e-8 at 1 s on a 1 MHz clock, every edge a sample: 500000 samples; statistical error
  // about 0.2 % at n = 1, 1.5 % at n = 64 (white PM of the rounding adds 0.1 % at n = 1).
  const double h = 1e-8;
  const auto d = measure(SyntheticChannel::clock(3, 1e6, 0, ClockNoise{.white_fm = h}),
                         500'000'000'000, kOctaves, 1);
  for (std::size_t i = 0; i < kOctaves.size(); ++i) {
    INFO("n = " << kOctaves[i]);
    CHECK(d.adev[i] == Approx(h / std::sqrt(d.tau[i])).epsilon(0.04));
  }
  CHECK(logSlope(d.tau, d.adev) == Approx(-0.5).margin(0.02));
}

TEST_CASE("Linear frequency drift: ADEV = d tau / sqrt(2), slope +1",
          "[frequency_stability][noise]") {
  // Deterministic: the second difference of the quadratic phase is exactly d tau^2; only the
  // ps rounding (0.01 ps after averaging 1000 edges) and the mean period (off by d * 0.5 s)
  // disturb it.
  const double drift = 1e-6;
  const std::vector<std::int64_t> steps{10, 20, 50, 100, 200};
  const auto d = measure(SyntheticChannel::clock(3, 1e6, 0, ClockNoise{.drift_per_s = drift}),
                         1'000'000'000'000, steps, 1000);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    INFO("n = " << steps[i]);
    CHECK(d.adev[i] == Approx(drift * d.tau[i] / std::sqrt(2.0)).epsilon(0.002));
  }
  CHECK(logSlope(d.tau, d.adev) == Approx(1.0).margin(0.002));
}

TEST_CASE("Random-walk frequency noise: ADEV slope +0.5", "[frequency_stability][noise]") {
  // ADEV 1e-7 * sqrt(tau / 1 s); 2 s of 1 MHz in samples of 100 edges (20000 samples). A
  // random walk leaves few independent terms at long tau: about 10 % error at n = 32, so the
  // slope over n = 4..32 is good to about 0.05 and the level to about 15 %.
  const double h = 1e-7;
  const std::vector<std::int64_t> steps{4, 8, 16, 32};
  const auto d = measure(SyntheticChannel::clock(3, 1e6, 0, ClockNoise{.random_walk_fm = h}),
                         2'000'000'000'000, steps, 100);
  CHECK(logSlope(d.tau, d.adev) == Approx(0.5).margin(0.15));
  for (std::size_t i = 0; i < steps.size(); ++i) {
    INFO("n = " << steps[i]);
    CHECK(d.adev[i] == Approx(h * std::sqrt(d.tau[i])).epsilon(0.3));
  }
}
