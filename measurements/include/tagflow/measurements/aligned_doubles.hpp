// AlignedDoubles: a fixed number of doubles on a 64-byte boundary, left uninitialised. Eigen's
// vectorised sums over an aligned map add in an order that depends only on the length, so sums
// over arrays like these are equal for equal values wherever the arrays lie.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace tagflow {

inline constexpr std::size_t kDoublesAlignment = 64;

struct AlignedDoublesFree {
  void operator()(double* data) const {
    ::operator delete[](data, std::align_val_t{kDoublesAlignment});
  }
};

using AlignedDoubles = std::unique_ptr<double[], AlignedDoublesFree>;

inline AlignedDoubles makeAlignedDoubles(std::size_t count) {
  return AlignedDoubles(static_cast<double*>(
      ::operator new[](count * sizeof(double), std::align_val_t{kDoublesAlignment})));
}

inline bool isAligned(const double* data) {
  return reinterpret_cast<std::uintptr_t>(data) % kDoublesAlignment == 0;
}

}  // namespace tagflow
