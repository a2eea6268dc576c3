// AllanSums: the sums behind the overlapping Allan, modified Allan and Hadamard deviations and
// the standard deviation of n-sample phase differences, for a list of steps n, updated one
// phase sample x at a time (NIST SP 1065 forms, N phase samples, tau = n * tau0):
//   ADEV^2 = sum_{i=1}^{N-2n} (x_{i+2n} - 2x_{i+n} + x_i)^2 / (2 (N-2n) tau^2)
//   MDEV^2 = sum_{j=1}^{N-3n+1} (1/n sum_{i=j}^{j+n-1} (x_{i+2n} - 2x_{i+n} + x_i))^2
//            / (2 (N-3n+1) tau^2)
//   HDEV^2 = sum_{i=1}^{N-3n} (x_{i+3n} - 3x_{i+2n} + 3x_{i+n} - x_i)^2 / (6 (N-3n) tau^2)
//   STDD   = standard deviation (Bessel-corrected) of x_{i+n} - x_i, in the unit of x.
// Memory: the last 3 max(n) + 1 samples, held in a history of twice that; the cost per sample
// is a few operations per step, done for kLanes steps at once (the steps side by side, each
// with its own order of operations: a step's sums depend neither on the steps beside it nor on
// how the samples are split between calls to add()). A series may be restarted (a gap in the
// data): the sums carry on, and no difference spans the gap. The sums depend on differences
// only, so a phase series may be shifted by any linear function of the sample index
// (removeLinear) without changing them. Term counts are exact up to 2^53 samples. The totals
// of a step carry to another AllanSums (merge): the sums of another part of the data, whose
// series are its own, add as if that part followed a restart.
#pragma once

#include <cstddef>
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
  ~AllanSums();

  // Adds the samples in order, each the next of the current series.
  void add(std::span<const double> samples);
  // The next sample begins a new series.
  void restart();
  void clear();
  // Subtracts offset + slope * (j - k) from every stored sample j of the current series, k the
  // newest one; the phase the caller feeds next must follow the same shift.
  void removeLinear(double offset, double slope);

  // The totals of one step. difference_*: count, mean and sum of squared deviations of
  // x_{i+n} - x_i (Welford), which merge by the pairwise rule of Chan, Golub and LeVeque.
  struct StepTotals {
    double adev_sum = 0;
    double mdev_sum = 0;
    double hdev_sum = 0;
    std::int64_t adev_terms = 0;
    std::int64_t mdev_terms = 0;
    std::int64_t hdev_terms = 0;
    double difference_terms = 0;
    double difference_mean = 0;
    double difference_m2 = 0;
  };
  StepTotals totals(std::size_t step_index) const;
  // Adds the totals of another part of the data to step `step_index`; its mean difference must
  // be taken against the same reference as this one's. Call between series (after restart()).
  void merge(std::size_t step_index, const StepTotals& other);

  // NaN where the data hold no term yet (a step too long for the series seen so far).
  Deviations deviations(std::size_t step_index, double tau) const;
  std::size_t stepCount() const { return step_count_; }
  std::uint64_t seriesLength() const { return series_length_; }

 private:
  static constexpr std::size_t kLanes = 4;
  // kLanes steps side by side, one vector register per quantity (defined with the arithmetic).
  struct StepGroup;

  // Each adds the sample at history_[position] (k-th of its series; kLanes of them for a quad)
  // to every step. Young: some step may still lack some of its terms (k < 3 max(n)).
  template <bool kYoung>
  void addSample(std::size_t position, std::uint64_t k);
  void addMatureQuad(std::size_t position, std::uint64_t k);
  bool mature(std::uint64_t k) const { return k >= mature_from_; }
  void compactHistory();
  void resetResums();

  std::size_t step_count_;
  std::vector<StepGroup> groups_;
  std::uint64_t mature_from_ = 0;
  // The samples a term reaches back over, the newest included: 3 max(n) + 1.
  std::size_t reach_;
  // The samples in order, the newest at newest_; when full, the last reach_ - 1 move to the
  // front. Sample k - d is history_[newest_ - d] for every d < reach_, and the samples of a few
  // consecutive k lie side by side.
  std::vector<double> history_;
  std::size_t newest_;
  std::uint64_t series_length_ = 0;
};

}  // namespace tagflow
