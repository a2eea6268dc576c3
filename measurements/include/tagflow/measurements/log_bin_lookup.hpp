// LogBinLookup: the bin of a time difference tau among fixed, increasing whole-ps edges, at a
// cost that does not depend on the number of bins. The leading bits of tau (its top bit and
// the `sub_bits` bits below it) form a key; tables give, per key, the bin of the key's
// smallest tau and the next edge above it. When the tables are fine enough that no key range
// holds two inner edges, one compare finishes a look-up; otherwise a short walk over the
// edges does. Callers guarantee edges.front() <= tau < edges.back().
//
// countInto() counts a whole array of taus in one flat loop: with AVX2 the keys of eight taus
// are computed at once and only the table reads and increments stay scalar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow {

class LogBinLookup {
 public:
  LogBinLookup() = default;
  explicit LogBinLookup(const std::vector<timestamp_t>& edges);

  std::size_t binOf(timestamp_t tau) const;
  // ++counts[binOf(tau)] for every tau.
  void countInto(std::span<const timestamp_t> taus, std::uint64_t* counts) const;

 private:
  std::uint32_t keyOf(timestamp_t tau) const;
  bool buildOneEdgeTables(const std::vector<timestamp_t>& edges, int sub_bits);

  std::vector<timestamp_t> edges_;
  std::vector<std::uint32_t> first_bin_;  // per key: the bin of the key's smallest tau
  std::vector<timestamp_t> next_edge_;    // per key: the edge after that bin's left edge
  int sub_bits_ = 0;
  bool one_edge_ = false;    // no key range holds two inner edges: one compare suffices
  bool via_double_ = false;  // taus below 2^52: the key comes from a double's bits
};

}  // namespace tagflow
