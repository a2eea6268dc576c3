// Brute-force references for the clock measurements, written from the formulas of NIST SP 1065
// and docs/measurements.md with plain loops in long double (no library code): the NIST
// 1000-point test data, the O(N^2) deviations of a phase series, the series a stream splits
// into, and a Welch spectrum with a direct DFT.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow::test {

using Real = long double;

// NIST SP 1065 section 12.3 (Riley): n_{i+1} = 16807 n_i mod 2147483647, n_0 = 1234567890;
// the 1000 fractional frequency values are n_i / 2147483647, i = 0..999.
inline std::vector<std::int64_t> nistGeneratorValues() {
  std::vector<std::int64_t> values{1234567890};
  while (values.size() < 1000) values.push_back(16807 * values.back() % 2147483647);
  return values;
}

inline std::vector<Real> nistFrequencyData() {
  std::vector<Real> y;
  for (std::int64_t n : nistGeneratorValues()) y.push_back(static_cast<Real>(n) / 2147483647.0L);
  return y;
}

// Phase of frequency data at tau0 = 1: x_0 = 0, x_{i+1} = x_i + y_i (1001 points).
inline std::vector<Real> integrate(const std::vector<Real>& y) {
  std::vector<Real> x{0};
  for (Real value : y) x.push_back(x.back() + value);
  return x;
}

// Sums of one deviation family over several phase series (gaps between them), for step n.
struct DeviationSums {
  Real adev = 0, mdev = 0, hdev = 0;
  std::uint64_t adev_terms = 0, mdev_terms = 0, hdev_terms = 0;
  std::vector<Real> differences;  // x_{i+n} - x_i

  void addSeries(const std::vector<Real>& x, std::size_t n) {
    const std::size_t count = x.size();
    for (std::size_t i = 0; i + 2 * n < count; ++i) {
      const Real e = x[i + 2 * n] - 2 * x[i + n] + x[i];
      adev += e * e;
      ++adev_terms;
    }
    for (std::size_t j = 0; j + 3 * n <= count; ++j) {
      Real inner = 0;
      for (std::size_t i = j; i < j + n; ++i) inner += x[i + 2 * n] - 2 * x[i + n] + x[i];
      mdev += (inner / n) * (inner / n);
      ++mdev_terms;
    }
    for (std::size_t i = 0; i + 3 * n < count; ++i) {
      const Real e = x[i + 3 * n] - 3 * x[i + 2 * n] + 3 * x[i + n] - x[i];
      hdev += e * e;
      ++hdev_terms;
    }
    for (std::size_t i = 0; i + n < count; ++i) differences.push_back(x[i + n] - x[i]);
  }

  static Real nan() { return std::numeric_limits<Real>::quiet_NaN(); }
  // Deviations for tau in the unit of x.
  Real adevAt(Real tau) const {
    return adev_terms ? std::sqrt(adev / (2 * adev_terms)) / tau : nan();
  }
  Real mdevAt(Real tau) const {
    return mdev_terms ? std::sqrt(mdev / (2 * mdev_terms)) / tau : nan();
  }
  Real hdevAt(Real tau) const {
    return hdev_terms ? std::sqrt(hdev / (6 * hdev_terms)) / tau : nan();
  }
  // Bessel-corrected standard deviation of the differences, unit of x.
  Real stdd() const {
    if (differences.size() < 2) return nan();
    Real mean = 0;
    for (Real d : differences) mean += d;
    mean /= differences.size();
    Real squares = 0;
    for (Real d : differences) squares += (d - mean) * (d - mean);
    return std::sqrt(squares / (differences.size() - 1));
  }
};

// Non-overlapping Allan deviation of phase data at tau0 = 1 (SP 1065 eq. 7 on every n-th point).
inline Real nonOverlappingAdev(const std::vector<Real>& x, std::size_t n) {
  Real sum = 0;
  std::size_t terms = 0;
  for (std::size_t i = 0; i + 2 * n < x.size(); i += n) {
    const Real e = x[i + 2 * n] - 2 * x[i + n] + x[i];
    sum += e * e;
    ++terms;
  }
  return std::sqrt(sum / (2 * terms)) / n;
}

// The phase sample series a FrequencyStability measurement builds from a stream (rules in
// docs/measurements.md): a series starts at the capture start, after an OverflowEnd and at an
// Error, ends at an OverflowBegin, and restarts at an edge whose interval to the previous edge
// differs from `period` by more than half of it (an edge less than half a period after the
// previous one is left out, and the next edge begins the new series); groups of `average`
// edges of a series give one sample (their mean time); a partial group at a series end is
// dropped.
inline std::vector<std::vector<Real>> sampleSeries(const std::vector<Tag>& tags, channel_t channel,
                                                   std::int64_t average, Real period) {
  std::vector<std::vector<Real>> series(1);
  std::vector<timestamp_t> group;
  bool active = true;
  bool has_previous = false;
  timestamp_t previous = 0;
  bool has_before = false;  // the series' edge before `previous`
  timestamp_t before = 0;
  const auto restart = [&] {
    if (!series.back().empty()) series.emplace_back();
    group.clear();
    has_previous = false;
    has_before = false;
  };
  for (const Tag& tag : tags) {
    switch (tag.type) {
      case TagType::OverflowBegin:
        restart();
        active = false;
        continue;
      case TagType::OverflowEnd:
        restart();
        active = true;
        continue;
      case TagType::Error:
        restart();
        continue;
      case TagType::MissedEvents:
        continue;
      case TagType::TimeTag:
        break;
    }
    if (!active || tag.channel != channel) continue;
    if (has_previous && std::abs(static_cast<Real>(tag.time - previous) - period) > period / 2) {
      const bool extra = static_cast<Real>(tag.time - previous) < period / 2;
      // Of two edges less than half a period apart, the extra one is the one without which the
      // other lies nearer one period after the edge before them.
      const bool previous_extra = extra && has_before &&
                                  std::abs(static_cast<Real>(tag.time - before) - period) <
                                      std::abs(static_cast<Real>(previous - before) - period);
      if (previous_extra && group.empty()) series.back().pop_back();  // the sample it completed
      restart();
      if (extra && !previous_extra) continue;
    }
    has_before = has_previous;
    before = previous;
    has_previous = true;
    previous = tag.time;
    group.push_back(tag.time);
    if (static_cast<std::int64_t>(group.size()) == average) {
      Real sum = 0;
      for (timestamp_t time : group) sum += static_cast<Real>(time);
      series.back().push_back(sum / average);
      group.clear();
    }
  }
  if (series.back().empty()) series.pop_back();
  return series;
}

// Mean period: summed spans of the series over the edge periods they cover.
inline Real meanPeriod(const std::vector<std::vector<Real>>& series, std::int64_t average) {
  Real span = 0, periods = 0;
  for (const auto& samples : series) {
    if (samples.size() < 2) continue;
    span += samples.back() - samples.front();
    periods += static_cast<Real>(samples.size() - 1) * average;
  }
  return span / periods;
}

// Phase of each sample against a line through the first one (any line: deviations use
// differences only).
inline std::vector<Real> phases(const std::vector<Real>& samples, Real sample_period) {
  std::vector<Real> x;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    x.push_back(samples[i] - samples.front() - static_cast<Real>(i) * sample_period);
  }
  return x;
}

// Mean over the Welch segments of a stream of the one-sided PSD at bins [first, last], at a
// sample rate of 1: linear detrend, periodic Hann window, direct DFT, 50 % overlap.
inline std::vector<Real> welchReference(const std::vector<Real>& samples, std::size_t length,
                                        std::size_t first, std::size_t last) {
  std::vector<Real> psd(last - first + 1, 0);
  std::size_t segments = 0;
  Real window_power = 0;
  for (std::size_t i = 0; i < length; ++i) {
    const Real w = 0.5L - 0.5L * std::cos(2 * std::numbers::pi_v<Real> * i / length);
    window_power += w * w;
  }
  for (std::size_t start = 0; start + length <= samples.size(); start += length / 2) {
    Real sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < length; ++i) {
      sx += i;
      sy += samples[start + i];
      sxx += static_cast<Real>(i) * i;
      sxy += i * samples[start + i];
    }
    const Real slope = (length * sxy - sx * sy) / (length * sxx - sx * sx);
    const Real intercept = (sy - slope * sx) / length;
    for (std::size_t b = first; b <= last; ++b) {
      Real re = 0, im = 0;
      for (std::size_t i = 0; i < length; ++i) {
        const Real w = 0.5L - 0.5L * std::cos(2 * std::numbers::pi_v<Real> * i / length);
        const Real value = (samples[start + i] - intercept - slope * i) * w;
        const Real angle = 2 * std::numbers::pi_v<Real> * b * i / length;
        re += value * std::cos(angle);
        im -= value * std::sin(angle);
      }
      psd[b - first] += re * re + im * im;
    }
    ++segments;
  }
  for (Real& value : psd) value = 2 * value / segments / window_power;
  return psd;
}

}  // namespace tagflow::test
