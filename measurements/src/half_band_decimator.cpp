#include "tagflow/measurements/half_band_decimator.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace tagflow {

HalfBandDecimator::HalfBandDecimator() {
  // h[m] = sinc(m / 2) / 2 * Blackman window, m = -11..11: every even m but 0 is zero.
  constexpr int kHalf = static_cast<int>(kTaps / 2);
  double sum = 0;
  for (int m = -kHalf; m <= kHalf; ++m) {
    const double ideal = m == 0 ? 0.5 : std::sin(std::numbers::pi * m / 2) / (std::numbers::pi * m);
    const double x = static_cast<double>(m + kHalf) / (2.0 * kHalf);
    const double window =
        0.42 - 0.5 * std::cos(2 * std::numbers::pi * x) + 0.08 * std::cos(4 * std::numbers::pi * x);
    const double tap = (m != 0 && m % 2 == 0) ? 0.0 : ideal * window;
    taps_[static_cast<std::size_t>(m + kHalf)] = tap;
    sum += tap;
  }
  for (double& tap : taps_) tap /= sum;
  work_.reserve(1024);
}

void HalfBandDecimator::restart() {
  history_ = 0;
  odd_ = false;
}

void HalfBandDecimator::process(std::span<const double> input, std::vector<double>& output) {
  if (input.empty()) return;
  work_.resize(history_ + input.size());
  std::copy(input.begin(), input.end(), work_.begin() + static_cast<std::ptrdiff_t>(history_));
  constexpr std::size_t kCentre = kTaps / 2;
  // An output is due at every input with an odd index (counted from the restart) whose window
  // lies entirely in the samples since the restart, which work_ holds from index 0.
  std::size_t first = odd_ ? history_ : history_ + 1;
  while (first < kTaps - 1) first += 2;
  const double centre = taps_[kCentre];
  for (std::size_t end = first; end < work_.size(); end += 2) {
    const double* window = work_.data() + end + 1 - kTaps;
    double sum = centre * window[kCentre];
    for (std::size_t m = 1; m <= kCentre; m += 2) {
      sum += taps_[kCentre + m] * (window[kCentre + m] + window[kCentre - m]);
    }
    output.push_back(sum);
  }
  if (input.size() % 2 == 1) odd_ = !odd_;
  // Keep the last kTaps - 1 samples for the next call.
  history_ = std::min(kTaps - 1, work_.size());
  std::copy(work_.end() - static_cast<std::ptrdiff_t>(history_), work_.end(), work_.begin());
  work_.resize(history_);
}

}  // namespace tagflow
