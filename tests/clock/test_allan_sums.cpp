// AllanSums gives the same sums, bit for bit, however the samples are split between calls to
// add(): all at once, one at a time, or in uneven pieces. The steps are updated side by side in
// vector lanes (steps in any order, repeated, and one lane group only partly used), in runs of
// four samples once every step takes all its terms, and the history of samples moves to its
// front when full; none of this may show in the sums. The stream has three series (the last
// shorter than the longest step reaches back) and a linear shift in mid-series.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tagflow/measurements/allan_sums.hpp"

using namespace tagflow;

namespace {

const std::vector<std::int64_t> kSteps{7, 1, 1, 300, 2, 64, 3, 5, 500};
constexpr std::size_t kSamples = 25'000;
constexpr std::size_t kFirstRestart = 5'000;
constexpr std::size_t kShift = 14'321;
constexpr std::size_t kSecondRestart = 24'000;  // leaves 1000 samples: less than 3 * 500

std::vector<double> phases() {
  std::mt19937_64 random(9);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> samples;
  double walk = 0;
  for (std::size_t i = 0; i < kSamples; ++i) {
    walk += 0.3 * normal(random);
    samples.push_back(1e4 + walk + 2.0 * normal(random));
  }
  return samples;
}

// Adds the samples in pieces of at most `longest` (random lengths unless `longest` is 1),
// restarting and shifting the series at the same samples whatever the pieces.
std::vector<AllanSums::Deviations> deviations(const std::vector<double>& samples,
                                              std::size_t longest) {
  AllanSums sums(kSteps);
  std::mt19937_64 random(longest);
  std::size_t next = 0;
  while (next < samples.size()) {
    if (next == kFirstRestart || next == kSecondRestart) sums.restart();
    if (next == kShift) sums.removeLinear(12.5, -0.25);
    std::size_t end = next + 1 + random() % longest;
    for (std::size_t event : {kFirstRestart, kShift, kSecondRestart}) {
      if (event > next) end = std::min(end, event);
    }
    end = std::min(end, samples.size());
    sums.add(std::span<const double>(samples).subspan(next, end - next));
    next = end;
  }
  std::vector<AllanSums::Deviations> result;
  for (std::size_t step = 0; step < kSteps.size(); ++step)
    result.push_back(sums.deviations(step, 1));
  return result;
}

bool identical(const AllanSums::Deviations& a, const AllanSums::Deviations& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

TEST_CASE("AllanSums does not depend on how the samples are split between calls",
          "[frequency_stability][allan_sums]") {
  const std::vector<double> samples = phases();
  const auto whole = deviations(samples, samples.size());
  for (std::size_t longest : {1, 3, 4, 5, 41, 2500}) {
    INFO("pieces of at most " << longest);
    const auto pieces = deviations(samples, longest);
    for (std::size_t step = 0; step < kSteps.size(); ++step) {
      INFO("step " << kSteps[step]);
      CHECK(identical(pieces[step], whole[step]));
    }
  }
  // The repeated step gives the repeated sums; every step has terms.
  CHECK(identical(whole[1], whole[2]));
  for (const AllanSums::Deviations& d : whole) CHECK(std::isfinite(d.mdev));
}
