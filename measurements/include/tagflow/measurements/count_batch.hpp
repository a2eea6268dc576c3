// CountBatch: increments of a histogram too large for the caches, collected and then applied
// with each counter's cache line requested a few increments ahead, so that the misses of many
// increments overlap instead of each pair waiting for its own.
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
    bins_[size_++] = bin;
    if (size_ == bins_.size()) countInto(counts);
  }

  void countInto(std::int64_t* counts) {
    constexpr std::size_t kAhead = 16;
    std::size_t i = 0;
    for (; i + kAhead < size_; ++i) {
      __builtin_prefetch(&counts[bins_[i + kAhead]], 1);
      ++counts[bins_[i]];
    }
    for (; i < size_; ++i) ++counts[bins_[i]];
    size_ = 0;
  }

 private:
  std::array<std::size_t, 1024> bins_;
  std::size_t size_ = 0;
};

}  // namespace tagflow
