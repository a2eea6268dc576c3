#include "sources/record_check.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tagflow {

namespace {

// The scalar check of records [begin, end): the tail of a run, and the groups with a special tag.
bool checkEach(std::span<const Tag> records, std::size_t begin, std::size_t end,
               timestamp_t& previous, std::size_t first_index, std::vector<std::size_t>& specials) {
  bool valid = true;
  for (std::size_t i = begin; i < end; ++i) {
    const auto type = static_cast<std::uint8_t>(records[i].type);
    valid &= (type <= kMaxTagType) & (records[i].time >= previous);
    previous = records[i].time;
    if (type != 0) specials.push_back(first_index + i);
  }
  return valid;
}

}  // namespace

bool checkRecords(std::span<const Tag> records, timestamp_t previous, std::size_t first_index,
                  std::vector<std::size_t>& specials) {
  std::size_t i = 0;
  bool valid = true;
#if defined(__AVX2__)
  constexpr std::size_t kGroup = 16;
  // Lanes hold the times in the order t3, t1, t0, t2 (below): lane 0 is the group's last time.
  __m256i earlier_lanes = _mm256_set1_epi64x(previous);
  __m256i out_of_order = _mm256_setzero_si256();
  const __m256i type_bytes = _mm256_set1_epi64x(0xFF);
  for (; i + kGroup <= records.size(); i += kGroup) {
    __m256i types = _mm256_setzero_si256();
    for (std::size_t k = i; k < i + kGroup; k += 4) {
      const auto* at = reinterpret_cast<const __m256i*>(records.data() + k);
      const __m256i first = _mm256_loadu_si256(at);
      const __m256i second = _mm256_loadu_si256(at + 1);
      // Two unpacks give the first eight bytes (type first) and the times in lane order
      // t0, t2, t1, t3; the times each one must not precede are then t(-1), t1, t0, t2.
      types = _mm256_or_si256(types, _mm256_unpacklo_epi64(first, second));
      const __m256i times = _mm256_unpackhi_epi64(first, second);
      const __m256i rotated = _mm256_permute4x64_epi64(times, _MM_SHUFFLE(1, 0, 2, 3));
      const __m256i earlier = _mm256_blend_epi32(rotated, earlier_lanes, 0x03);
      out_of_order = _mm256_or_si256(out_of_order, _mm256_cmpgt_epi64(earlier, times));
      earlier_lanes = rotated;
    }
    if (!_mm256_testz_si256(types, type_bytes)) [[unlikely]] {
      timestamp_t group_previous = i == 0 ? previous : records[i - 1].time;
      valid &= checkEach(records, i, i + kGroup, group_previous, first_index, specials);
    }
  }
  valid &= _mm256_testz_si256(out_of_order, out_of_order) != 0;
  if (i > 0) previous = records[i - 1].time;
#endif
  valid &= checkEach(records, i, records.size(), previous, first_index, specials);
  return valid;
}

}  // namespace tagflow
