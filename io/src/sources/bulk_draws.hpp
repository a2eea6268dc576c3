// Draws of one word per element over a whole run of times, as the synthetic source's clocks
// and partners make them: the same words, in the same order, and the same values as drawing
// element by element through RandomStream::Reader. The loops on their fast path call nothing,
// so that their values stay in registers (a call per element, even one never taken, makes
// the compiler keep them in memory).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "sources/random_draws.hpp"
#include "tagflow/core/tag.hpp"

namespace tagflow::synthetic {

// Inlined, unlike std::llround (a library call on the generator's hot path).
inline timestamp_t roundToPs(double value) {
  return static_cast<timestamp_t>(std::floor(value + 0.5));
}

// Adds `offset` and sigma * (a truncated normal variate), rounded to whole picoseconds, to
// every time, a word per time; at sigma 0 only the offset, without a draw.
void addRoundedNormals(RandomStream::Reader& draws, double sigma, timestamp_t offset,
                       std::span<timestamp_t> times);

// Copies to `kept` the times whose word (one per time, in order) lies below `below`; returns
// how many. `kept` has room for every time.
std::size_t keepWithWordBelow(RandomStream::Reader& draws, std::uint64_t below,
                              std::span<const timestamp_t> times, timestamp_t* kept);

}  // namespace tagflow::synthetic
