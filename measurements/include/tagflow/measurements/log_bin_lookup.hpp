// LogBinLookup: the bin of a time difference tau among fixed, increasing whole-ps edges, at a
// cost that does not depend on the number of bins. The leading bits of tau (its top bit and
// the `sub_bits` bits below it) form a key; tables give, per key, the bin of the key's
// smallest tau and the next edge above it. When the tables are fine enough that no key range
// holds two inner edges, one compare finishes a look-up; otherwise a short walk over the
// edges does. Callers guarantee edges.front() <= tau < edges.back().
//
// Pairs are counted in two flat loops over a whole array: writeWords() writes each pair's
// word, countWords() counts the words. In the usual case (one compare, taus below 2^52) a
// word is the bits of the double of tau less those of 1.0: its high bits are the key, its low
// bits are added to the key's one table entry, which holds the bin and carries into it where
// they reach the key's next edge, so that a pair costs one table read, an add and two shifts.
// Otherwise a word is tau itself.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tagflow/core/tag.hpp"
#include "tagflow/measurements/time_window.hpp"
#include "tagflow/measurements/twin_counts.hpp"

namespace tagflow {

class LogBinLookup {
 public:
  LogBinLookup() = default;
  explicit LogBinLookup(const std::vector<timestamp_t>& edges);

  std::size_t binOf(timestamp_t tau) const;
  // out[j] = the word of tau = from - times[j] for j < count, written as
  // writeMappedDifferences() writes (time_window.hpp: whole runs, with its room and slack).
  void writeWords(timestamp_t from, const timestamp_t* times, std::size_t count,
                  timestamp_t* out) const {
    if (packed_.empty()) return writeDifferences(from, times, count, out);
    writeMappedDifferences(from, times, count, out, DoubleWord{});
  }
  // ++counts[binOf(tau)] for the tau of every word; with the packed table, through `twin`
  // (of as many bins).
  void countWords(std::span<const timestamp_t> words, std::uint64_t* counts,
                  TwinCounts<std::uint64_t>& twin) const;

 private:
  // The bits of the double of tau (exact below 2^52) less those of 1.0: the exponent and
  // leading mantissa bits give the key without a data-dependent shift direction.
  static constexpr std::uint64_t kOneBits = std::uint64_t{1023} << 52;
  static std::uint64_t wordOf(timestamp_t tau) {
    return std::bit_cast<std::uint64_t>(static_cast<double>(tau)) - kOneBits;
  }
  struct DoubleWord {
#if defined(__AVX2__)
    // AVX2 has no int64 -> double conversion; below 2^52 the double of tau is exactly tau's
    // bits in 2^52's mantissa, minus 2^52.
    static __m256i lanes(__m256i taus) {
      const __m256d values = _mm256_sub_pd(
          _mm256_castsi256_pd(_mm256_or_si256(taus, _mm256_set1_epi64x(0x4330000000000000LL))),
          _mm256_set1_pd(0x1.0p52));
      return _mm256_sub_epi64(_mm256_castpd_si256(values),
                              _mm256_set1_epi64x(static_cast<long long>(kOneBits)));
    }
#endif
    static timestamp_t one(timestamp_t tau) {
      return static_cast<timestamp_t>(wordOf(tau));
    }
  };

  std::uint32_t keyOf(timestamp_t tau) const;
  bool buildOneEdgeTables(const std::vector<timestamp_t>& edges, int sub_bits);
  bool packTables();
  // The bin of a word from the packed table: the word, added to its key's entry, carries
  // into the bin where its low bits reach the key's next edge.
  static std::size_t packedBin(const std::uint64_t* entries, std::uint64_t word, int low_bits) {
    return static_cast<std::size_t>((entries[word >> low_bits] + word) >> (low_bits + 1));
  }
  template <int kLowBits>
  void countPacked(std::span<const timestamp_t> words, std::uint64_t* counts,
                   TwinCounts<std::uint64_t>& twin) const;

  std::vector<timestamp_t> edges_;
  std::vector<std::uint32_t> first_bin_;  // per key: the bin of the key's smallest tau
  std::vector<timestamp_t> next_edge_;    // per key: the edge after that bin's left edge
  // Per key, in place of the two tables where words are doubles' bits: the bin, shifted
  // above a word's low bits and one more, plus what the low bits of a tau at the next edge
  // need to carry into the bin, less the key's bits of a word.
  std::vector<std::uint64_t> packed_;
  int sub_bits_ = 0;
  int low_bits_ = 0;         // a word's bits below its key; 0: no packed table
  bool one_edge_ = false;    // no key range holds two inner edges: one compare suffices
  bool via_double_ = false;  // taus below 2^52: the key comes from a double's bits
};

}  // namespace tagflow
