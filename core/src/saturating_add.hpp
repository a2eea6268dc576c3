// saturatingAdd: a + b for stream times, held at the ends of the time axis instead of
// overflowing (plans and range runs add margins to times that may be the axis' ends).
#pragma once

#include <limits>

#include "tagflow/core/tag.hpp"

namespace tagflow {

inline timestamp_t saturatingAdd(timestamp_t a, timestamp_t b) {
  timestamp_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<timestamp_t>::max() : std::numeric_limits<timestamp_t>::min();
}

}  // namespace tagflow
