// AllanSums: the sums behind the overlapping Allan, modified Allan and Hadamard deviations and
// the standard deviation of n-sample phase differences, for a list of steps n, updated one
// phase sample x at a time (NIST SP 1065 forms, N phase samples, tau = n * tau0):
//   ADEV^2 = sum_{i=1}^{N-2n} (x_{i+2n} - 2x_{i+n} + x_i)^2 / (2 (N-2n) tau^2)
//   MDEV^2 = sum_{j=1}^{N-3n+1} (1/n sum_{i=j}^{j+n-1} (x_{i+2n} - 2x_{i+n} + x_i))^2
//            / (2 (N-3n+1) tau^2)
//   HDEV^2 = sum_{i=1}^{N-3n} (x_{i+3n} - 3x_{i+2n} + 3x_{i+n} - x_i)^2 / (6 (N-3n) tau^2)
//   STDD   = standard deviation (Bessel-corrected) of x_{i+n} - x_i, in the unit of x.
// Memory: a ring of the last 3 max(n) + 1 samples; the cost per sample is a few operations per
// step. A series may be restarted (a gap in the data): the sums carry on, and no difference
// spans the gap. The sums depend on differences only, so a phase series may be shifted by any
// linear function of the sample index (removeLinear) without changing them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tagflow {

class AllanSums {
 public:
  struct Deviations {
    double adev;  // dimensionless when x and tau share a unit
    double mdev;
    double hdev;
    double stdd;  // unit of x
  };

  // Steps must be > 0 (the caller checks them and names the bad value).
  explicit AllanSums(std::span<const std::int64_t> steps);

  void add(double x);
  // The next sample begins a new series.
  void restart();
  void clear();
  // Subtracts offset + slope * (j - k) from every stored sample j of the current series, k the
  // newest one; the phase the caller feeds next must follow the same shift.
  void removeLinear(double offset, double slope);

  // NaN where the data hold no term yet (a step too long for the series seen so far).
  Deviations deviations(std::size_t step_index, double tau) const;
  std::size_t stepCount() const { return steps_.size(); }
  std::uint64_t seriesLength() const { return series_length_; }

 private:
  struct Step {
    std::int64_t n = 0;
    double mdev_window = 0;  // sum of the last n second differences
    double adev_sum = 0;
    double mdev_sum = 0;
    double hdev_sum = 0;
    std::uint64_t adev_terms = 0;
    std::uint64_t mdev_terms = 0;
    std::uint64_t hdev_terms = 0;
    // Welford's running mean and sum of squared deviations of x_{i+n} - x_i.
    std::uint64_t difference_terms = 0;
    double difference_mean = 0;
    double difference_m2 = 0;
  };

  double back(std::uint64_t distance) const {
    const std::size_t size = ring_.size();
    const std::size_t offset = static_cast<std::size_t>(distance);
    return ring_[newest_ >= offset ? newest_ - offset : newest_ + size - offset];
  }
  double secondDifferenceEndingAt(std::uint64_t distance, std::int64_t n) const;
  void addToStep(Step& step, double x);

  std::vector<Step> steps_;
  std::vector<double> ring_;
  std::size_t newest_ = 0;
  std::uint64_t series_length_ = 0;
};

}  // namespace tagflow
