// SegmentPeriodogram: the periodogram of one Welch segment of `length` samples: remove the
// least-squares line, apply a periodic Hann window, real FFT (an FFTW plan made once, at
// construction), and add |X_b|^2 for a range of bins to an accumulator. With sum(w^2) =
// windowPower() = 3 length / 8, the one-sided PSD of a stream sampled at f_s is
//   S(f_b) = 2 * mean(|X_b|^2) / (f_s * windowPower()),  f_b = b * f_s / length.
// One object serves every segment of a measurement; it is used by one thread at a time. A
// segment on a 64-byte boundary is read where it lies; any other is first copied to one.
#pragma once

#include <cstddef>
#include <span>

#include "tagflow/measurements/aligned_doubles.hpp"

struct fftw_plan_s;

namespace tagflow {

class SegmentPeriodogram {
 public:
  // length >= 16 and a multiple of 8.
  explicit SegmentPeriodogram(std::size_t length);
  ~SegmentPeriodogram();
  SegmentPeriodogram(const SegmentPeriodogram&) = delete;
  SegmentPeriodogram& operator=(const SegmentPeriodogram&) = delete;

  // segment.size() == length(); adds |X_b|^2 to power[b - first_bin] for every b covered.
  void accumulate(std::span<const double> segment, std::size_t first_bin, std::span<double> power);

  std::size_t length() const { return length_; }
  double windowPower() const { return window_power_; }

 private:
  // Arrays on a 64-byte boundary: vectorised sums over them then add in the same order whatever
  // buffer the caller passes, so equal input gives equal output, bit for bit.
  std::size_t length_;
  double window_power_ = 0;
  AlignedDoubles segment_;  // a copy of a segment that is not aligned
  AlignedDoubles window_;
  AlignedDoubles centred_index_;  // i - (length - 1) / 2
  double index_square_sum_ = 0;
  AlignedDoubles input_;
  AlignedDoubles output_;  // length / 2 + 1 complex values
  fftw_plan_s* plan_ = nullptr;
};

}  // namespace tagflow
