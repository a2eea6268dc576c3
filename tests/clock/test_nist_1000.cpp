// FrequencyStability on the 1000-point test data set of NIST SP 1065 (section 12.3): its
// frequency values, integrated to phase, become the timestamp offsets of an ideal clock, and
// the deviations must reproduce the published values (overlapping ADEV, MDEV, overlapping
// HDEV, TDEV at tau = 1, 10, 100, and the standard deviation at tau = 1) and an O(N^2)
// brute-force evaluation of the SP 1065 formulas at every step.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "clock_reference.hpp"
#include "support/pairs.hpp"
#include "tagflow/measurements/frequency_stability.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

// Clock period and the time one unit of the data's phase stands for: a 1 kHz clock whose
// phase wanders by 1e5 ps per unit, so 1 ps rounding is negligible (1e-10 of the variance).
constexpr timestamp_t kPeriodPs = 1'000'000'000;
constexpr Real kPsPerUnit = 1e5;

std::vector<Tag> nistClock(const std::vector<Real>& phase) {
  std::vector<Tag> tags;
  for (std::size_t i = 0; i < phase.size(); ++i) {
    const Real time = static_cast<Real>(i) * kPeriodPs + phase[i] * kPsPerUnit;
    tags.push_back(makeTimeTag(3, static_cast<timestamp_t>(std::llround(time))));
  }
  return tags;
}

struct Published {
  std::size_t n;
  double oadev, mdev, ohdev, tdev;
};

// SP 1065 table for the 1000-point set (Riley's test suite), tau0 = 1.
const Published kPublished[] = {
    {1, 2.922319e-01, 2.922319e-01, 2.943883e-01, 1.687202e-01},
    {10, 9.159953e-02, 6.172376e-02, 9.581083e-02, 3.563623e-01},
    {100, 3.241343e-02, 2.170921e-02, 3.237638e-02, 1.253382e+00},
};

}  // namespace

TEST_CASE("The NIST 1000-point generator gives the published first values", "[nist]") {
  const auto n = nistGeneratorValues();
  REQUIRE(n.size() == 1000);
  CHECK(n[1] == 395529916);
  CHECK(n[2] == 1209410747);
  CHECK(n[3] == 633705974);
  // The published non-overlapping ADEV checks the data as generated (not our estimator).
  const auto x = integrate(nistFrequencyData());
  CHECK(static_cast<double>(nonOverlappingAdev(x, 1)) == Approx(2.922319e-01).epsilon(2e-6));
  CHECK(static_cast<double>(nonOverlappingAdev(x, 10)) == Approx(9.965736e-02).epsilon(2e-6));
  CHECK(static_cast<double>(nonOverlappingAdev(x, 100)) == Approx(3.897804e-02).epsilon(2e-6));
}

TEST_CASE("FrequencyStability reproduces the published NIST SP 1065 1000-point deviations",
          "[frequency_stability][nist]") {
  const auto x = integrate(nistFrequencyData());
  const auto tags = nistClock(x);
  const std::vector<std::int64_t> steps{1, 10, 100};
  FrequencyStability stability("nist", 3, steps, 1, 10);
  runMemory(tags, GENERATE(1, 7, 1000), 0, tags.back().time + 1, {&stability});
  const FrequencyStabilityData data = stability.getDataObject();
  REQUIRE(stability.getSampleCount() == 1001);

  // One unit of phase is kPsPerUnit; the clock's measured period T makes the engine's
  // fractional deviations (kPsPerUnit / T) times those of the data at tau0 = 1.
  const double period_ps = stability.getMeanPeriod();
  CHECK(period_ps == Approx(kPeriodPs + kPsPerUnit * x.back() / 1000).epsilon(1e-12));
  const double scale = period_ps / kPsPerUnit;
  const double unit_s = kPsPerUnit * 1e-12;
  for (std::size_t i = 0; i < 3; ++i) {
    const Published& p = kPublished[i];
    INFO("tau = " << p.n);
    CHECK(data.tau[i] == Approx(p.n * period_ps * 1e-12).epsilon(1e-12));
    // All seven published digits, far tighter than the four asked for.
    CHECK(data.adev[i] * scale == Approx(p.oadev).epsilon(2e-6));
    CHECK(data.mdev[i] * scale == Approx(p.mdev).epsilon(2e-6));
    CHECK(data.hdev[i] * scale == Approx(p.ohdev).epsilon(2e-6));
    CHECK(data.tdev[i] / unit_s == Approx(p.tdev).epsilon(2e-6));
  }
  // Standard deviation of the 1000 frequency values (sample, not population).
  CHECK(data.stdd[0] / unit_s == Approx(2.884664e-01).epsilon(2e-6));
}

TEST_CASE("FrequencyStability matches the O(N^2) SP 1065 formulas on the NIST data at every step",
          "[frequency_stability][nist]") {
  const auto tags = nistClock(integrate(nistFrequencyData()));
  const std::vector<std::int64_t> steps{1, 2, 3, 5, 7, 16, 33, 100, 250, 333, 334, 400, 500, 501};
  FrequencyStability stability("nist", 3, steps, 1, 0);
  runMemory(tags, 64, 0, tags.back().time + 1, {&stability});
  const FrequencyStabilityData data = stability.getDataObject();
  // The reference reads the same (rounded) timestamps, in ps.
  const auto series = sampleSeries(tags, 3, 1, kPeriodPs);
  REQUIRE(series.size() == 1);
  const Real period = meanPeriod(series, 1);
  const auto x = phases(series[0], period);
  CHECK(stability.getMeanPeriod() == Approx(static_cast<double>(period)).epsilon(1e-14));
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::size_t n = static_cast<std::size_t>(steps[i]);
    INFO("n = " << n);
    DeviationSums sums;
    sums.addSeries(x, n);
    const Real tau = n * period;
    const auto same = [](double value, Real reference) {
      if (std::isnan(reference)) return std::isnan(value);
      return value == Approx(static_cast<double>(reference)).epsilon(1e-10);
    };
    CHECK(same(data.adev[i], sums.adevAt(tau)));
    CHECK(same(data.mdev[i], sums.mdevAt(tau)));
    CHECK(same(data.hdev[i], sums.hdevAt(tau)));
    CHECK(same(data.stdd[i], sums.stdd() * 1e-12L));
  }
  // 1001 points: 3 * 333 fit, 3 * 334 do not; 2 * 500 fit, 2 * 501 do not.
  CHECK(std::isfinite(data.mdev[9]));
  CHECK(std::isnan(data.mdev[10]));
  CHECK(std::isnan(data.hdev[10]));
  CHECK(std::isfinite(data.adev[12]));
  CHECK(std::isnan(data.adev[13]));
}
