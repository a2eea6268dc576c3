#include "tagflow/measurements/segment_periodogram.hpp"

#include <fftw3.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <mutex>
#include <numbers>

namespace tagflow {

namespace {

// FFTW's planner is not thread-safe; executing a plan is.
std::mutex& plannerMutex() {
  static std::mutex mutex;
  return mutex;
}

using ConstArray = Eigen::Map<const Eigen::ArrayXd, Eigen::Aligned64>;

}  // namespace

SegmentPeriodogram::SegmentPeriodogram(std::size_t length)
    : length_(length),
      segment_(makeAlignedDoubles(length)),
      window_(makeAlignedDoubles(length)),
      centred_index_(makeAlignedDoubles(length)),
      input_(makeAlignedDoubles(length)),
      output_(makeAlignedDoubles(2 * (length / 2 + 1))) {
  for (std::size_t i = 0; i < length; ++i) {
    window_[i] = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * static_cast<double>(i) /
                                      static_cast<double>(length));
    window_power_ += window_[i] * window_[i];
    centred_index_[i] = static_cast<double>(i) - 0.5 * static_cast<double>(length - 1);
    index_square_sum_ += centred_index_[i] * centred_index_[i];
  }
  // FFTW_ESTIMATE and arrays aligned alike every time: the same plan, so results repeat
  // exactly.
  std::lock_guard lock(plannerMutex());
  plan_ = fftw_plan_dft_r2c_1d(static_cast<int>(length), input_.get(),
                               reinterpret_cast<fftw_complex*>(output_.get()), FFTW_ESTIMATE);
}

SegmentPeriodogram::~SegmentPeriodogram() {
  std::lock_guard lock(plannerMutex());
  fftw_destroy_plan(plan_);
}

void SegmentPeriodogram::accumulate(std::span<const double> segment, std::size_t first_bin,
                                    std::span<double> power) {
  const auto n = static_cast<Eigen::Index>(length_);
  const double* aligned = segment.data();
  if (!isAligned(aligned)) {
    std::copy(segment.begin(), segment.end(), segment_.get());
    aligned = segment_.get();
  }
  const ConstArray values(aligned, n);
  const ConstArray index(centred_index_.get(), n);
  const ConstArray window(window_.get(), n);
  const double mean = values.mean();
  const double slope = (values * index).sum() / index_square_sum_;
  Eigen::Map<Eigen::ArrayXd, Eigen::Aligned64>(input_.get(), n) =
      (values - mean - slope * index) * window;
  fftw_execute(plan_);
  for (std::size_t i = 0; i < power.size(); ++i) {
    const double re = output_[2 * (first_bin + i)];
    const double im = output_[2 * (first_bin + i) + 1];
    power[i] += re * re + im * im;
  }
}

}  // namespace tagflow
