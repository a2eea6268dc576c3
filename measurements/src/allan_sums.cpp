#include "tagflow/measurements/allan_sums.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tagflow {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

AllanSums::AllanSums(std::span<const std::int64_t> steps) {
  std::int64_t longest = 1;
  for (std::int64_t n : steps) {
    Step step;
    step.n = n;
    steps_.push_back(step);
    longest = std::max(longest, n);
  }
  ring_.assign(static_cast<std::size_t>(3 * longest + 1), 0.0);
}

double AllanSums::secondDifferenceEndingAt(std::uint64_t distance, std::int64_t n) const {
  const auto step = static_cast<std::uint64_t>(n);
  return back(distance) - 2 * back(distance + step) + back(distance + 2 * step);
}

void AllanSums::addToStep(Step& step, double x) {
  const auto n = static_cast<std::uint64_t>(step.n);
  const std::uint64_t k = series_length_ - 1;  // index of x in the series
  if (k < n) return;
  const double x1 = back(n);
  const double difference = x - x1;
  ++step.difference_terms;
  const double delta = difference - step.difference_mean;
  step.difference_mean += delta / static_cast<double>(step.difference_terms);
  step.difference_m2 += delta * (difference - step.difference_mean);
  if (k < 2 * n) return;

  const double x2 = back(2 * n);
  const double second = x - 2 * x1 + x2;
  step.adev_sum += second * second;
  ++step.adev_terms;
  step.mdev_window += second;
  if (k >= 3 * n) {
    const double x3 = back(3 * n);
    step.mdev_window -= x1 - 2 * x2 + x3;
    const double third = x - 3 * x1 + 3 * x2 - x3;
    step.hdev_sum += third * third;
    ++step.hdev_terms;
  }
  if (k + 1 < 3 * n) return;
  // The running window collects rounding errors; resum it exactly every 4n samples (n terms
  // each time: a cost of a quarter of a term per sample).
  if (k % (4 * n) == 0) {
    double window = 0;
    for (std::uint64_t d = 0; d < n; ++d) window += secondDifferenceEndingAt(d, step.n);
    step.mdev_window = window;
  }
  const double mean = step.mdev_window / static_cast<double>(n);
  step.mdev_sum += mean * mean;
  ++step.mdev_terms;
}

void AllanSums::add(double x) {
  newest_ = newest_ + 1 == ring_.size() ? 0 : newest_ + 1;
  ring_[newest_] = x;
  ++series_length_;
  for (Step& step : steps_) addToStep(step, x);
}

void AllanSums::restart() {
  series_length_ = 0;
  for (Step& step : steps_) step.mdev_window = 0;
}

void AllanSums::clear() {
  for (Step& step : steps_) {
    Step fresh;
    fresh.n = step.n;
    step = fresh;
  }
  series_length_ = 0;
}

void AllanSums::removeLinear(double offset, double slope) {
  const std::uint64_t stored = std::min<std::uint64_t>(series_length_, ring_.size());
  for (std::uint64_t distance = 0; distance < stored; ++distance) {
    const std::size_t size = ring_.size();
    const std::size_t at = newest_ >= distance ? newest_ - distance : newest_ + size - distance;
    ring_[at] -= offset - slope * static_cast<double>(distance);
  }
  // x_{i+n} - x_i loses slope * n; its spread is unchanged.
  for (Step& step : steps_) step.difference_mean -= slope * static_cast<double>(step.n);
}

AllanSums::Deviations AllanSums::deviations(std::size_t step_index, double tau) const {
  const Step& step = steps_[step_index];
  const auto root = [&](double sum, std::uint64_t terms, double factor) {
    return terms == 0 ? kNaN : std::sqrt(sum / (factor * static_cast<double>(terms))) / tau;
  };
  Deviations result{};
  result.adev = root(step.adev_sum, step.adev_terms, 2);
  result.mdev = root(step.mdev_sum, step.mdev_terms, 2);
  result.hdev = root(step.hdev_sum, step.hdev_terms, 6);
  result.stdd =
      step.difference_terms < 2
          ? kNaN
          : std::sqrt(step.difference_m2 / static_cast<double>(step.difference_terms - 1));
  return result;
}

}  // namespace tagflow
