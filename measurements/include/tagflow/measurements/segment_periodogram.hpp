// SegmentPeriodogram: the periodogram of one Welch segment of `length` samples: remove the
// least-squares line, apply a periodic Hann window, real FFT (an FFTW plan made once, at
// construction), and add |X_b|^2 for a range of bins to an accumulator. With sum(w^2) =
// windowPower() = 3 length / 8, the one-sided PSD of a stream sampled at f_s is
//   S(f_b) = 2 * mean(|X_b|^2) / (f_s * windowPower()),  f_b = b * f_s / length.
// One object serves every segment of a measurement; it is used by one thread at a time.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

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
  struct AlignedFree {
    void operator()(double* data) const;
  };
  using AlignedArray = std::unique_ptr<double[], AlignedFree>;
  static AlignedArray alignedArray(std::size_t length);

  std::size_t length_;
  double window_power_ = 0;
  AlignedArray segment_;
  AlignedArray window_;
  AlignedArray centred_index_;  // i - (length - 1) / 2
  double index_square_sum_ = 0;
  AlignedArray input_;
  AlignedArray output_;  // length / 2 + 1 complex values
  fftw_plan_s* plan_ = nullptr;
};

}  // namespace tagflow
