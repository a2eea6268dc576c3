#include "tagflow/measurements/half_band_decimator.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "double_lanes.hpp"

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
}

void HalfBandDecimator::restart() {
  even_count_ = 0;
  odd_count_ = 0;
  next_centre_ = kSide;
}

void HalfBandDecimator::process(std::span<const double> input, std::vector<double>& output) {
  if (input.empty()) return;
  split(input);
  // An output is due once the last odd sample of its window, odd_[centre + kSide - 1], came.
  if (odd_count_ < next_centre_ + kSide) return;
  const std::size_t end = odd_count_ + 1 - kSide;
  filter(end, output);
  // The next output needs even_[end] and odd_[end - kSide] on: drop what lies before.
  const std::size_t drop = end - kSide;
  std::copy(even_.begin() + static_cast<std::ptrdiff_t>(drop),
            even_.begin() + static_cast<std::ptrdiff_t>(even_count_), even_.begin());
  std::copy(odd_.begin() + static_cast<std::ptrdiff_t>(drop),
            odd_.begin() + static_cast<std::ptrdiff_t>(odd_count_), odd_.begin());
  even_count_ -= drop;
  odd_count_ -= drop;
  next_centre_ = kSide;
}

void HalfBandDecimator::split(std::span<const double> input) {
  const std::size_t size = input.size();
  if (even_.size() < even_count_ + size / 2 + 1) even_.resize(2 * (even_count_ + size / 2 + 1));
  if (odd_.size() < odd_count_ + size / 2 + 1) odd_.resize(2 * (odd_count_ + size / 2 + 1));
  std::size_t k = 0;
  if (even_count_ > odd_count_) odd_[odd_count_++] = input[k++];  // the next index is odd
  const std::size_t pairs = (size - k) / 2;
  double* even = even_.data() + even_count_;
  double* odd = odd_.data() + odd_count_;
  for (std::size_t pair = 0; pair < pairs; ++pair) {
    even[pair] = input[k + 2 * pair];
    odd[pair] = input[k + 2 * pair + 1];
  }
  even_count_ += pairs;
  odd_count_ += pairs;
  k += 2 * pairs;
  if (k < size) even_[even_count_++] = input[k];
}

void HalfBandDecimator::filter(std::size_t end, std::vector<double>& output) {
  const std::size_t at = output.size();
  output.resize(at + end - next_centre_);
  double* out = output.data() + at;
  const double* even = even_.data();
  const double* odd = odd_.data();
  // Output i: the centre tap times even[i], plus each tap at odd offset m = 2h + 1 times the
  // pair odd[i + h] + odd[i - h - 1], summed from the centre outwards. The centre product is
  // fused with the first pair's, every later product with the sum so far: as the compiler
  // contracted the scalar loop this replaced, so the outputs stay the same to the last bit.
  const double centre = taps_[kCentre];
  std::size_t i = next_centre_;
  for (; i + 4 <= end; i += 4, out += 4) {
    DoubleLanes sum =
        multiplyAdd(broadcast(centre), loadLanes(even + i),
                    taps_[kCentre + 1] * (loadLanes(odd + i) + loadLanes(odd + i - 1)));
    for (std::size_t h = 1; h < kSide; ++h) {
      sum = multiplyAdd(broadcast(taps_[kCentre + 2 * h + 1]),
                        loadLanes(odd + i + h) + loadLanes(odd + i - h - 1), sum);
    }
    storeLanes(out, sum);
  }
  for (; i < end; ++i, ++out) {
    double sum = multiplyAdd(centre, even[i], taps_[kCentre + 1] * (odd[i] + odd[i - 1]));
    for (std::size_t h = 1; h < kSide; ++h) {
      sum = multiplyAdd(taps_[kCentre + 2 * h + 1], odd[i + h] + odd[i - h - 1], sum);
    }
    *out = sum;
  }
  next_centre_ = end;
}

}  // namespace tagflow
