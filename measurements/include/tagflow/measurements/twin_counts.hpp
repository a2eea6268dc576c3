// TwinCounts: counts a batch of values into a histogram that fits the caches, every other
// value into a twin of it that is added in at the end of the batch. Consecutive time
// differences of one event's run often fall into one bin, and an increment of the bin the
// previous one just stored must wait for that store; alternating histograms give each
// increment twice the time. The fold costs a few operations per bin, so batches with fewer
// values than bins count into the histogram alone (and a histogram that never sees a batch
// as large never allocates its twin). The histogram ends as a plain count would leave it: the
// order of the increments is all that changes.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow {

template <class Count>
class TwinCounts {
 public:
  explicit TwinCounts(std::size_t bins = 0) : bins_(bins) {}

  // ++counts[bin_of(value)] for every value; counts has the bins given at construction.
  // bin_of is taken by value so that its fields stay in registers across the stores.
  template <class BinOf>
  void count(std::span<const timestamp_t> values, Count* counts, const BinOf bin_of) {
    const std::size_t bins = bins_;
    std::size_t i = 0;
    if (values.size() >= bins) {
      if (twin_.size() != bins) twin_.assign(bins, 0);
      Count* const twin = twin_.data();
      for (; i + 2 <= values.size(); i += 2) {
        ++counts[bin_of(values[i])];
        ++twin[bin_of(values[i + 1])];
      }
      for (std::size_t bin = 0; bin < bins; ++bin) {
        counts[bin] += twin[bin];
        twin[bin] = 0;
      }
    }
    for (; i < values.size(); ++i) ++counts[bin_of(values[i])];
  }

 private:
  std::size_t bins_;
  std::vector<Count> twin_;  // all zero between batches
};

}  // namespace tagflow
