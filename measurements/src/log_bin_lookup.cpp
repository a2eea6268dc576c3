#include "tagflow/measurements/log_bin_lookup.hpp"

#include <algorithm>
#include <bit>

#include "tagflow/measurements/time_window.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tagflow {

namespace {

// Finer keys cost table memory: (top bit of the span + 1) << sub_bits keys, 8 bytes each when
// packed, 12 otherwise. The finest, 13 bits, tell bins 1.2e-4 apart in one compare (100000
// bins over six decades are 1.4e-4 apart; at 11 bits their look-ups walked, at a third of the
// speed) and cost at most 63 << 13 keys, 6.2 MB, where the span reaches the limit of a time.
constexpr int kCoarsestSubBits = 6;
constexpr int kFinestSubBits = 13;
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
  if (one_edge_ && via_double_ && packTables()) {
    first_bin_ = {};
    next_edge_ = {};
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

bool LogBinLookup::packTables() {
  const int low_bits = 52 - sub_bits_;
  const int bin_shift = low_bits + 1;
  // The bin goes above the edge's low bits and one more bit, where the compare carries.
  if ((edges_.size() - 1) >> (63 - bin_shift) != 0) return false;
  const std::uint64_t low_mask = (std::uint64_t{1} << low_bits) - 1;
  packed_.resize(first_bin_.size());
  for (std::size_t key = 0; key < packed_.size(); ++key) {
    const std::uint64_t edge_word = wordOf(next_edge_[key]);
    // The next edge lies above the key's smallest tau: in the key's range or past it (then
    // no low bits reach it: 2^low_bits).
    const std::uint64_t edge_low =
        (edge_word >> low_bits) == key ? edge_word & low_mask : low_mask + 1;
    // A tau's low bits added to 2^bin_shift - edge_low carry into the bin exactly when they
    // are not below the edge's. The key's own bits are taken off, so that the whole word can
    // be added without masking its low bits out (the sum wraps back to the same value).
    packed_[key] = (std::uint64_t{first_bin_[key]} << bin_shift) +
                   ((std::uint64_t{1} << bin_shift) - edge_low) - (std::uint64_t{key} << low_bits);
  }
  low_bits_ = low_bits;
  return true;
}

std::uint32_t LogBinLookup::keyOf(timestamp_t tau) const {
  if (via_double_) return static_cast<std::uint32_t>(wordOf(tau) >> (52 - sub_bits_));
  return integerKey(static_cast<std::uint64_t>(tau), sub_bits_);
}

std::size_t LogBinLookup::binOf(timestamp_t tau) const {
  if (!packed_.empty()) return packedBin(packed_.data(), wordOf(tau), low_bits_);
  const std::uint32_t key = keyOf(tau);
  std::size_t bin = first_bin_[key];
  if (one_edge_) return bin + static_cast<std::size_t>(next_edge_[key] <= tau);
  while (edges_[bin + 1] <= tau) ++bin;
  return bin;
}

template <int kLowBits>
void LogBinLookup::countPacked(std::span<const timestamp_t> words, std::uint64_t* counts,
                               TwinCounts<std::uint64_t>& twin) const {
  // A local: the loop stores counts, which the compiler cannot tell from the table.
  const std::uint64_t* const entries = packed_.data();
  twin.count(words, counts, [entries](timestamp_t word) {
    return packedBin(entries, static_cast<std::uint64_t>(word), kLowBits);
  });
}

void LogBinLookup::countWords(std::span<const timestamp_t> words, std::uint64_t* counts,
                              TwinCounts<std::uint64_t>& twin) const {
  static_assert(kCoarsestSubBits == 6 && kFinestSubBits == 13, "one case per key width");
  // The shifts by constants (as fast as the look-up itself would be without them).
  switch (low_bits_) {
    case 46:
      return countPacked<46>(words, counts, twin);
    case 45:
      return countPacked<45>(words, counts, twin);
    case 44:
      return countPacked<44>(words, counts, twin);
    case 43:
      return countPacked<43>(words, counts, twin);
    case 42:
      return countPacked<42>(words, counts, twin);
    case 41:
      return countPacked<41>(words, counts, twin);
    case 40:
      return countPacked<40>(words, counts, twin);
    case 39:
      return countPacked<39>(words, counts, twin);
    default:  // no packed table
      for (const timestamp_t tau : words) ++counts[binOf(tau)];
  }
}

}  // namespace tagflow
