// ExactDivider: floor(x / divisor) for 0 <= x < 2^52 by one multiply-high and a shift, exact
// for every such x. A division instruction costs ten or more cycles and a double reciprocal
// needs correcting compares; histograms bin every pair this way.
//
// Why exact: with k = max(64, 52 + ceil(log2 divisor)) and m = ceil(2^k / divisor) =
// (2^k + e) / divisor, 0 <= e < divisor, x * m / 2^k exceeds x / divisor by
// x * e / (divisor * 2^k) < 2^52 / 2^k <= 1 / divisor, while x / divisor lies at least
// 1 / divisor below the next integer.
#pragma once

#include <bit>
#include <cstdint>

namespace tagflow {

__extension__ typedef unsigned __int128 ExactDividerProduct;  // a GCC and Clang extension

class ExactDivider {
 public:
  static constexpr int kInputBits = 52;

  ExactDivider() = default;
  explicit ExactDivider(std::uint64_t divisor) : unit_(divisor == 1) {
    if (unit_) return;
    const int ceil_log2 = 64 - std::countl_zero(divisor - 1);
    const int k = ceil_log2 + kInputBits > 64 ? ceil_log2 + kInputBits : 64;
    const ExactDividerProduct power = ExactDividerProduct{1} << k;
    multiplier_ = static_cast<std::uint64_t>((power + divisor - 1) / divisor);
    shift_ = k - 64;
  }

  std::uint64_t operator()(std::uint64_t x) const {
    if (unit_) return x;
    const auto high = static_cast<std::uint64_t>((ExactDividerProduct{x} * multiplier_) >> 64);
    return high >> shift_;
  }

 private:
  std::uint64_t multiplier_ = 0;
  int shift_ = 0;
  bool unit_ = true;
};

}  // namespace tagflow
