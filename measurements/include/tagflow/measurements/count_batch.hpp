// CountBatch: increments of a histogram too large for the caches, collected and applied a few
// hundred at a time. Each counter's cache line is requested when its increment is collected,
// so that the misses of a whole batch overlap (with each other and with the work that finds
// the next pairs) instead of each pair waiting for its own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace tagflow {

class CountBatch {
 public:
  // Histograms above this many counters (8 bytes each: 512 KiB, an L2's size) use a batch.
  static constexpr std::size_t kCachedBins = std::size_t{1} << 16;

  void add(std::size_t bin, std::int64_t* counts) {
    __builtin_prefetch(&counts[bin], 1);
    bins_[size_++] = bin;
    if (size_ == bins_.size()) countInto(counts);
  }

  void countInto(std::int64_t* counts) {
    for (std::size_t i = 0; i < size_; ++i) ++counts[bins_[i]];
    size_ = 0;
  }

 private:
  std::array<std::size_t, 256> bins_;
  std::size_t size_ = 0;
};

}  // namespace tagflow
