// LogBinLookup: the bin of a time difference tau among fixed, increasing whole-ps edges, at a
// cost that does not depend on the number of bins. The leading bits of tau (its top bit and
// the `sub_bits` bits below it) form a key; tables give, per key, the bin of the key's
// smallest tau and the next edge above it. When the tables are fine enough that no key range
// holds two inner edges, one compare finishes a look-up; otherwise a short walk over the
// edges does. Callers guarantee edges.front() <= tau < edges.back().
//
// withKernel() hands the caller's loop a small inline function object for the case at hand,
// so that the loop over pairs is compiled once per case without a branch per pair.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow {

class LogBinLookup {
 public:
  LogBinLookup() = default;
  explicit LogBinLookup(const std::vector<timestamp_t>& edges);

  std::size_t binOf(timestamp_t tau) const;

  // One compare after the look-up; taus below 2^52, whose key comes from a double's bits
  // (exponent and leading mantissa bits: no data-dependent shift direction).
  struct OneEdgeKernel {
    const std::uint32_t* first_bin;
    const timestamp_t* next_edge;
    int shift;
    std::uint64_t key_offset;

    std::uint32_t operator()(timestamp_t tau) const {
      const auto key = static_cast<std::uint32_t>(
          (std::bit_cast<std::uint64_t>(static_cast<double>(tau)) >> shift) - key_offset);
      return first_bin[key] + static_cast<std::uint32_t>(next_edge[key] <= tau);
    }
  };
  struct GeneralKernel {
    const LogBinLookup* lookup;
    std::uint32_t operator()(timestamp_t tau) const {
      return static_cast<std::uint32_t>(lookup->binOf(tau));
    }
  };

  template <class F>
  void withKernel(F&& f) const {
    if (one_edge_ && via_double_) {
      f(OneEdgeKernel{first_bin_.data(), next_edge_.data(), 52 - sub_bits_,
                      std::uint64_t{1023} << sub_bits_});
    } else {
      f(GeneralKernel{this});
    }
  }

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
