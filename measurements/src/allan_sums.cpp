#include "tagflow/measurements/allan_sums.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "double_lanes.hpp"

namespace tagflow {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr std::size_t kVectorLanes = sizeof(DoubleLanes) / sizeof(double);

// Per lane, the sample distance[lane] before `newest`.
DoubleLanes back(const double* newest, const LaneMask& distance) {
  return DoubleLanes{newest[-distance[0]], newest[-distance[1]], newest[-distance[2]],
                     newest[-distance[3]]};
}

// back() for the four consecutive samples first[0..3], one vector each. With AVX: four
// contiguous loads, one per lane, turned into four vectors of lanes; without, the compiler would
// do those shuffles through memory, and gathering element by element is faster.
std::array<DoubleLanes, kVectorLanes> backQuad(const double* first, const LaneMask& distance) {
#if defined(__AVX__)
  std::array<DoubleLanes, kVectorLanes> rows;
  for (std::size_t lane = 0; lane < kVectorLanes; ++lane) {
    rows[lane] = loadLanes(first - distance[lane]);
  }
  const DoubleLanes low01 = __builtin_shufflevector(rows[0], rows[1], 0, 4, 2, 6);
  const DoubleLanes high01 = __builtin_shufflevector(rows[0], rows[1], 1, 5, 3, 7);
  const DoubleLanes low23 = __builtin_shufflevector(rows[2], rows[3], 0, 4, 2, 6);
  const DoubleLanes high23 = __builtin_shufflevector(rows[2], rows[3], 1, 5, 3, 7);
  return {__builtin_shufflevector(low01, low23, 0, 1, 4, 5),
          __builtin_shufflevector(high01, high23, 0, 1, 4, 5),
          __builtin_shufflevector(low01, low23, 2, 3, 6, 7),
          __builtin_shufflevector(high01, high23, 2, 3, 6, 7)};
#else
  return {back(first, distance), back(first + 1, distance), back(first + 2, distance),
          back(first + 3, distance)};
#endif
}

// Welford's running mean and sum of squared deviations of x_{i+n} - x_i, for four steps.
struct DifferenceSums {
  DoubleLanes terms{};
  DoubleLanes mean{};
  DoubleLanes m2{};
};

// The running sums over second and third differences, for four steps.
struct HigherSums {
  DoubleLanes adev_sum{};
  DoubleLanes mdev_window{};  // sum of the last n second differences
  DoubleLanes mdev_sum{};
  DoubleLanes hdev_sum{};
};

// Which terms each lane takes at series index k: differences from k >= n, second differences
// from k >= 2n, third ones from k >= 3n, MDEV terms from k + 1 >= 3n. A mature series takes
// them all, and then no mask is looked at.
struct Takes {
  LaneMask difference{};
  LaneMask second{};
  LaneMask third{};
  LaneMask mdev{};
};

template <bool kYoung>
DoubleLanes update(const LaneMask& takes, const DoubleLanes& updated, const DoubleLanes& old) {
  if constexpr (kYoung) {
    return takes ? updated : old;
  } else {
    return updated;
  }
}

// The arithmetic of one sample, per lane that of the scalar code this replaced, with its
// products fused (multiplyAdd) or not exactly as GCC compiled that code for FMA targets: every
// sum is the same to the last bit (this file is compiled with -ffp-contract=off).
template <bool kYoung>
void addDifference(DifferenceSums& s, const LaneMask& takes, const DoubleLanes& x,
                   const DoubleLanes& x1) {
  const DoubleLanes difference = x - x1;
  const DoubleLanes terms = update<kYoung>(takes, s.terms + 1.0, s.terms);
  const DoubleLanes delta = difference - s.mean;
  const DoubleLanes mean = update<kYoung>(takes, s.mean + delta / terms, s.mean);
  s.m2 = update<kYoung>(takes, s.m2 + delta * (difference - mean), s.m2);
  s.terms = terms;
  s.mean = mean;
}

// Every term but the MDEV one, which takes the window after a possible resum.
template <bool kYoung>
void addSecondAndThird(HigherSums& s, const Takes& takes, const DoubleLanes& x,
                       const DoubleLanes& x1, const DoubleLanes& x2, const DoubleLanes& x3) {
  const DoubleLanes second = multiplyAdd(broadcast(-2.0), x1, x) + x2;
  s.adev_sum = update<kYoung>(takes.second, s.adev_sum + second * second, s.adev_sum);
  s.mdev_window = update<kYoung>(takes.second, s.mdev_window + second, s.mdev_window);
  s.mdev_window = update<kYoung>(
      takes.third, s.mdev_window - (multiplyAdd(broadcast(-2.0), x2, x1) + x3), s.mdev_window);
  const DoubleLanes third =
      multiplyAdd(broadcast(3.0), x2, multiplyAdd(broadcast(-3.0), x1, x)) - x3;
  s.hdev_sum = update<kYoung>(takes.third, multiplyAdd(third, third, s.hdev_sum), s.hdev_sum);
}

template <bool kYoung>
void addMdevTerm(HigherSums& s, const LaneMask& takes, const DoubleLanes& n) {
  const DoubleLanes mean = s.mdev_window / n;
  s.mdev_sum = update<kYoung>(takes, multiplyAdd(mean, mean, s.mdev_sum), s.mdev_sum);
}

}  // namespace

struct AllanSums::StepGroup {
  static_assert(kLanes == kVectorLanes);

  LaneMask n{};
  LaneMask twice_n{};
  LaneMask thrice_n{};
  DoubleLanes n_real{};
  DifferenceSums differences;
  HigherSums higher;
  LaneMask adev_terms{};
  LaneMask mdev_terms{};
  LaneMask hdev_terms{};
  // The running window collects rounding errors; it is resummed exactly at every multiple of
  // 4n in the series (n terms every 4n samples: a quarter of a term per sample). The next such
  // index per lane, and the earliest of them.
  std::array<std::uint64_t, kLanes> next_resum{};
  std::uint64_t group_next_resum = 0;

  Takes takesAt(std::uint64_t k) const {
    const LaneMask index = LaneMask{} + static_cast<std::int64_t>(k);
    return Takes{index >= n, index >= twice_n, index >= thrice_n, index + 1 >= thrice_n};
  }

  // The window with the lanes due at k resummed (a lane is due only at k >= 4n, where it
  // already takes MDEV terms).
  DoubleLanes resummed(const double* newest, std::uint64_t k, DoubleLanes window) {
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      if (next_resum[lane] != k) continue;
      const std::int64_t step = n[lane];
      double sum = 0;
      for (std::int64_t d = 0; d < step; ++d) {
        sum += multiplyAdd(-2.0, newest[-(d + step)], newest[-d]) + newest[-(d + 2 * step)];
      }
      window[lane] = sum;
      next_resum[lane] += static_cast<std::uint64_t>(4 * step);
    }
    group_next_resum = *std::min_element(next_resum.begin(), next_resum.end());
    return window;
  }

  template <bool kYoung>
  void addHigher(const double* newest, std::uint64_t k, const Takes& takes, const DoubleLanes& x1,
                 const DoubleLanes& x2, const DoubleLanes& x3, HigherSums& s) {
    addSecondAndThird<kYoung>(s, takes, broadcast(*newest), x1, x2, x3);
    if (k == group_next_resum) [[unlikely]] {
      s.mdev_window = resummed(newest, k, s.mdev_window);
    }
    addMdevTerm<kYoung>(s, takes.mdev, n_real);
  }
};

AllanSums::AllanSums(std::span<const std::int64_t> steps) : step_count_(steps.size()) {
  std::int64_t longest = 1;
  for (std::int64_t n : steps) longest = std::max(longest, n);
  groups_.resize((steps.size() + kLanes - 1) / kLanes);
  for (std::size_t i = 0; i < groups_.size() * kLanes; ++i) {
    const std::int64_t n = steps[std::min(i, steps.size() - 1)];  // spare lanes repeat the last
    StepGroup& group = groups_[i / kLanes];
    const std::size_t lane = i % kLanes;
    group.n[lane] = n;
    group.twice_n[lane] = 2 * n;
    group.thrice_n[lane] = 3 * n;
    group.n_real[lane] = static_cast<double>(n);
  }
  mature_from_ = static_cast<std::uint64_t>(3 * longest);
  reach_ = static_cast<std::size_t>(3 * longest + 1);
  history_.assign(2 * reach_, 0.0);
  newest_ = reach_ - 2;  // the first sample lands at reach_ - 1 and reaches back to 0
  resetResums();
}

AllanSums::~AllanSums() = default;

void AllanSums::resetResums() {
  for (StepGroup& group : groups_) {
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      group.next_resum[lane] = static_cast<std::uint64_t>(4 * group.n[lane]);
    }
    group.group_next_resum = *std::min_element(group.next_resum.begin(), group.next_resum.end());
  }
}

void AllanSums::compactHistory() {
  const std::size_t kept = reach_ - 1;
  std::copy(history_.begin() + static_cast<std::ptrdiff_t>(newest_ + 1 - kept),
            history_.begin() + static_cast<std::ptrdiff_t>(newest_ + 1), history_.begin());
  newest_ = kept - 1;
}

template <bool kYoung>
void AllanSums::addSample(std::size_t position, std::uint64_t k) {
  const double* newest = history_.data() + position;
  for (StepGroup& group : groups_) {
    Takes takes;
    if constexpr (kYoung) takes = group.takesAt(k);
    const DoubleLanes x1 = back(newest, group.n);
    DifferenceSums differences = group.differences;
    addDifference<kYoung>(differences, takes.difference, broadcast(*newest), x1);
    group.differences = differences;
    HigherSums higher = group.higher;
    group.addHigher<kYoung>(newest, k, takes, x1, back(newest, group.twice_n),
                            back(newest, group.thrice_n), higher);
    group.higher = higher;
    if constexpr (kYoung) {
      // A true mask lane is -1: subtracting it counts the term.
      group.adev_terms -= takes.second;
      group.hdev_terms -= takes.third;
      group.mdev_terms -= takes.mdev;
    }
  }
}

// Four samples of one group at a time, its sums in registers.
void AllanSums::addMatureQuad(std::size_t position, std::uint64_t k) {
  const double* first = history_.data() + position;
  for (StepGroup& group : groups_) {
    const auto x1 = backQuad(first, group.n);
    const auto x2 = backQuad(first, group.twice_n);
    const auto x3 = backQuad(first, group.thrice_n);
    DifferenceSums differences = group.differences;
    HigherSums higher = group.higher;
#pragma GCC unroll 4
    for (std::size_t j = 0; j < kLanes; ++j) {
      addDifference<false>(differences, LaneMask{}, broadcast(first[j]), x1[j]);
      group.addHigher<false>(first + j, k + j, Takes{}, x1[j], x2[j], x3[j], higher);
    }
    group.differences = differences;
    group.higher = higher;
  }
}

void AllanSums::add(std::span<const double> samples) {
  std::uint64_t mature_samples = 0;
  std::size_t next = 0;
  while (next < samples.size()) {
    if (newest_ + 1 == history_.size()) compactHistory();
    const std::size_t count = std::min(samples.size() - next, history_.size() - 1 - newest_);
    const std::size_t first = newest_ + 1;
    std::copy_n(samples.begin() + static_cast<std::ptrdiff_t>(next), count,
                history_.begin() + static_cast<std::ptrdiff_t>(first));
    std::size_t i = 0;
    for (; i < count && !mature(series_length_ + i); ++i) {
      addSample<true>(first + i, series_length_ + i);
    }
    mature_samples += count - i;
    for (; i + kLanes <= count; i += kLanes) addMatureQuad(first + i, series_length_ + i);
    for (; i < count; ++i) addSample<false>(first + i, series_length_ + i);
    newest_ += count;
    series_length_ += count;
    next += count;
  }
  // A mature sample adds one term to every sum of every step: counted here, once per call.
  const auto terms = static_cast<std::int64_t>(mature_samples);
  for (StepGroup& group : groups_) {
    group.adev_terms += terms;
    group.mdev_terms += terms;
    group.hdev_terms += terms;
  }
}

void AllanSums::restart() {
  series_length_ = 0;
  for (StepGroup& group : groups_) group.higher.mdev_window = DoubleLanes{};
  resetResums();
}

void AllanSums::clear() {
  for (StepGroup& group : groups_) {
    StepGroup fresh;
    fresh.n = group.n;
    fresh.twice_n = group.twice_n;
    fresh.thrice_n = group.thrice_n;
    fresh.n_real = group.n_real;
    group = fresh;
  }
  series_length_ = 0;
  resetResums();
}

void AllanSums::removeLinear(double offset, double slope) {
  const std::uint64_t stored = std::min<std::uint64_t>(series_length_, reach_);
  for (std::uint64_t distance = 0; distance < stored; ++distance) {
    history_[newest_ - distance] -= multiplyAdd(-slope, static_cast<double>(distance), offset);
  }
  // x_{i+n} - x_i loses slope * n; its spread is unchanged.
  for (StepGroup& group : groups_) {
    DoubleLanes& mean = group.differences.mean;
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      mean[lane] = multiplyAdd(-slope, group.n_real[lane], mean[lane]);
    }
  }
}

AllanSums::StepTotals AllanSums::totals(std::size_t step_index) const {
  const StepGroup& group = groups_[step_index / kLanes];
  const std::size_t lane = step_index % kLanes;
  return StepTotals{
      group.higher.adev_sum[lane],   group.higher.mdev_sum[lane],  group.higher.hdev_sum[lane],
      group.adev_terms[lane],        group.mdev_terms[lane],       group.hdev_terms[lane],
      group.differences.terms[lane], group.differences.mean[lane], group.differences.m2[lane]};
}

void AllanSums::merge(std::size_t step_index, const StepTotals& other) {
  StepGroup& group = groups_[step_index / kLanes];
  const std::size_t lane = step_index % kLanes;
  group.higher.adev_sum[lane] += other.adev_sum;
  group.higher.mdev_sum[lane] += other.mdev_sum;
  group.higher.hdev_sum[lane] += other.hdev_sum;
  group.adev_terms[lane] += other.adev_terms;
  group.mdev_terms[lane] += other.mdev_terms;
  group.hdev_terms[lane] += other.hdev_terms;
  if (other.difference_terms == 0) return;
  DifferenceSums& sums = group.differences;
  const double own = sums.terms[lane];
  const double terms = own + other.difference_terms;
  const double delta = other.difference_mean - sums.mean[lane];
  sums.mean[lane] += delta * (other.difference_terms / terms);
  sums.m2[lane] += other.difference_m2 + delta * delta * (own * other.difference_terms / terms);
  sums.terms[lane] = terms;
}

AllanSums::Deviations AllanSums::deviations(std::size_t step_index, double tau) const {
  const StepGroup& group = groups_[step_index / kLanes];
  const DifferenceSums& differences = group.differences;
  const HigherSums& higher = group.higher;
  const std::size_t lane = step_index % kLanes;
  const auto root = [&](double sum, std::int64_t terms, double factor) {
    return terms == 0 ? kNaN : std::sqrt(sum / (factor * static_cast<double>(terms))) / tau;
  };
  Deviations result{};
  result.adev = root(higher.adev_sum[lane], group.adev_terms[lane], 2);
  result.mdev = root(higher.mdev_sum[lane], group.mdev_terms[lane], 2);
  result.hdev = root(higher.hdev_sum[lane], group.hdev_terms[lane], 6);
  const double difference_terms = differences.terms[lane];
  result.stdd =
      difference_terms < 2 ? kNaN : std::sqrt(differences.m2[lane] / (difference_terms - 1));
  return result;
}

}  // namespace tagflow
