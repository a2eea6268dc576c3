#include "tagflow/measurements/log_bin_lookup.hpp"

#include <algorithm>
#include <bit>

namespace tagflow {

namespace {

// Finer keys cost table memory: 12 bytes per key, (top bit of the span + 1) << sub_bits keys.
constexpr int kCoarsestSubBits = 6;
constexpr int kFinestSubBits = 11;
// Below this a double holds tau exactly.
constexpr timestamp_t kDoubleKeyLimit = timestamp_t{1} << 52;

// The key of tau >= 1: the position of its top bit, then the `sub_bits` bits below it.
std::uint32_t integerKey(std::uint64_t tau, int sub_bits) {
  const int top = 63 - std::countl_zero(tau);
  const std::uint64_t bits = top >= sub_bits ? tau >> (top - sub_bits) : tau << (sub_bits - top);
  return (static_cast<std::uint32_t>(top) << sub_bits) |
         static_cast<std::uint32_t>(bits & ((1u << sub_bits) - 1));
}

// The smallest tau with this key.
std::uint64_t keyLowerBound(std::uint32_t key, int sub_bits) {
  const int top = static_cast<int>(key >> sub_bits);
  const std::uint64_t bits = (std::uint64_t{1} << sub_bits) | (key & ((1u << sub_bits) - 1));
  return top >= sub_bits ? bits << (top - sub_bits) : bits >> (sub_bits - top);
}

}  // namespace

LogBinLookup::LogBinLookup(const std::vector<timestamp_t>& edges)
    : edges_(edges), via_double_(edges.back() <= kDoubleKeyLimit) {
  for (int sub_bits = kCoarsestSubBits; sub_bits <= kFinestSubBits && !one_edge_; ++sub_bits) {
    one_edge_ = buildOneEdgeTables(edges, sub_bits);
  }
}

bool LogBinLookup::buildOneEdgeTables(const std::vector<timestamp_t>& edges, int sub_bits) {
  sub_bits_ = sub_bits;
  const std::size_t bins = edges.size() - 1;
  const std::uint32_t keys = integerKey(static_cast<std::uint64_t>(edges.back() - 1), sub_bits) + 1;
  first_bin_.assign(keys, 0);
  next_edge_.assign(keys, 0);
  bool one_edge = true;
  std::size_t bin = 0;
  for (std::uint32_t key = 0; key < keys; ++key) {
    const auto lower = static_cast<timestamp_t>(keyLowerBound(key, sub_bits));
    const auto upper = static_cast<timestamp_t>(keyLowerBound(key + 1, sub_bits));
    while (bin + 1 < bins && edges[bin + 1] <= lower) ++bin;
    first_bin_[key] = static_cast<std::uint32_t>(bin);
    next_edge_[key] = edges[bin + 1];
    // The last edge is no boundary: every tau lies below it.
    if (bin + 2 < bins && edges[bin + 2] < upper) one_edge = false;
  }
  return one_edge;
}

std::uint32_t LogBinLookup::keyOf(timestamp_t tau) const {
  if (via_double_) {
    // The exponent and leading mantissa bits: no data-dependent shift direction.
    const auto bits = std::bit_cast<std::uint64_t>(static_cast<double>(tau));
    return static_cast<std::uint32_t>((bits >> (52 - sub_bits_)) -
                                      (std::uint64_t{1023} << sub_bits_));
  }
  return integerKey(static_cast<std::uint64_t>(tau), sub_bits_);
}

std::size_t LogBinLookup::binOf(timestamp_t tau) const {
  const std::uint32_t key = keyOf(tau);
  std::size_t bin = first_bin_[key];
  if (one_edge_) return bin + static_cast<std::size_t>(next_edge_[key] <= tau);
  while (edges_[bin + 1] <= tau) ++bin;
  return bin;
}

}  // namespace tagflow
