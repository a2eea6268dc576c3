#include "tagflow/io/tagfile/codec.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <string>

#include <immintrin.h>

#include "tagflow/core/error.hpp"
#include "tagflow/io/tagfile/format.hpp"

namespace tagflow::tagfile {

static_assert(std::endian::native == std::endian::little, "the planes are little-endian");

namespace {

// Every 8th delta is enough to choose a width: a block holds thousands.
constexpr std::size_t kSampleStride = 8;
// The delta plane ends with this many spare zero bytes, so that every delta can be read with
// one unaligned 8-byte load.
constexpr std::size_t kDeltaPlaneSpare = 8;

unsigned bitWidth(std::uint64_t value) {
  return static_cast<unsigned>(std::bit_width(value));
}

// The narrowest power-of-two code width that numbers `channels` channels; 0 for one or none.
unsigned codeBitsFor(std::size_t channels) {
  if (channels <= 1) return 0;
  return std::bit_ceil(bitWidth(channels - 1));
}

std::size_t codePlaneBytes(std::size_t count, unsigned code_bits) {
  return (count * code_bits + 7) / 8;
}

// The first tag's delta (from the block's begin) is stored on its own; the plane holds the
// deltas between consecutive tags.
std::size_t deltaPlaneBytes(std::size_t count, unsigned delta_bytes) {
  return (count == 0 ? 0 : count - 1) * delta_bytes + kDeltaPlaneSpare;
}

// An exception costs an index gap and the high bits, both varints: about this many bits.
std::uint64_t exceptionBits(unsigned extra_bits) {
  return 16 + 8 * ((extra_bits + 6) / 7);
}

// The delta width in bytes that makes the smallest plane plus exceptions, estimated on a
// sample: `histogram[k]` sampled deltas are k bits wide (an upper bound on the width after
// the smallest delta is subtracted, which never widens a delta); at `range_bytes` and above
// no delta needs an exception, which is what wins when the deltas cluster far from zero.
unsigned chooseDeltaBytes(const std::array<std::uint64_t, 65>& histogram, std::uint64_t samples,
                          unsigned range_bytes) {
  unsigned best = 8;
  std::uint64_t best_cost = ~std::uint64_t{0};
  for (unsigned bytes = 0; bytes <= 8; ++bytes) {
    std::uint64_t cost = samples * 8 * bytes;
    if (bytes < range_bytes) {
      for (unsigned k = 8 * bytes + 1; k <= 64; ++k) {
        cost += histogram[k] * exceptionBits(k - 8 * bytes);
      }
    }
    if (cost < best_cost) {
      best_cost = cost;
      best = bytes;
    }
  }
  return best;
}

// Writes the low `Bytes` bytes of each delta minus `min_delta` and notes the indices of the
// deltas that do not fit, as tag indices (delta i belongs to tag i + 1). Checked eight at a
// time: a group holds one only now and then. Returns how many did not fit.
template <unsigned Bytes>
std::size_t packDeltas(const std::uint64_t* deltas, std::size_t count, std::uint64_t min_delta,
                       std::uint8_t* plane, std::uint32_t* exceptions) {
  std::size_t exception_count = 0;
  const auto group = [&](std::size_t from, std::size_t size) {
    std::uint64_t wide = 0;
    for (std::size_t i = from; i < from + size; ++i) {
      const std::uint64_t value = deltas[i] - min_delta;
      wide |= value;
      // A whole 8-byte store: the next one overwrites the bytes beyond this delta.
      if constexpr (Bytes > 0) std::memcpy(plane + i * Bytes, &value, 8);
    }
    if constexpr (Bytes < 8) {
      if ((wide >> (8 * Bytes)) != 0) [[unlikely]] {
        for (std::size_t i = from; i < from + size; ++i) {
          if (((deltas[i] - min_delta) >> (8 * Bytes)) != 0) {
            exceptions[exception_count++] = static_cast<std::uint32_t>(i + 1);
          }
        }
      }
    }
  };
  constexpr std::size_t kGroup = 8;
  std::size_t from = 0;
  for (; from + kGroup <= count; from += kGroup) group(from, kGroup);
  group(from, count - from);
  std::memset(plane + count * Bytes, 0, kDeltaPlaneSpare);
  return exception_count;
}

// Packs `code(i)` for every tag, LSB first.
template <unsigned Bits, typename Code>
void packCodes(Code code, std::size_t count, std::uint8_t* plane) {
  if constexpr (Bits >= 8) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t value = code(i);
      std::memcpy(plane + i * (Bits / 8), &value, Bits / 8);
    }
  } else if constexpr (Bits > 0) {
    constexpr std::size_t kPerByte = 8 / Bits;
    const std::size_t whole = count / kPerByte;
    for (std::size_t j = 0; j < whole; ++j) {
      std::uint32_t byte = 0;
      for (std::size_t k = 0; k < kPerByte; ++k) byte |= code(j * kPerByte + k) << (k * Bits);
      plane[j] = static_cast<std::uint8_t>(byte);
    }
    if (whole * kPerByte < count) {
      std::uint32_t byte = 0;
      for (std::size_t i = whole * kPerByte; i < count; ++i) {
        byte |= code(i) << ((i - whole * kPerByte) * Bits);
      }
      plane[whole] = static_cast<std::uint8_t>(byte);
    }
  }
}

std::size_t packDeltasFor(unsigned bytes, const std::uint64_t* deltas, std::size_t count,
                          std::uint64_t min_delta, std::uint8_t* plane, std::uint32_t* exceptions) {
  switch (bytes) {
    case 0:
      return packDeltas<0>(deltas, count, min_delta, plane, exceptions);
    case 1:
      return packDeltas<1>(deltas, count, min_delta, plane, exceptions);
    case 2:
      return packDeltas<2>(deltas, count, min_delta, plane, exceptions);
    case 3:
      return packDeltas<3>(deltas, count, min_delta, plane, exceptions);
    case 4:
      return packDeltas<4>(deltas, count, min_delta, plane, exceptions);
    case 5:
      return packDeltas<5>(deltas, count, min_delta, plane, exceptions);
    case 6:
      return packDeltas<6>(deltas, count, min_delta, plane, exceptions);
    case 7:
      return packDeltas<7>(deltas, count, min_delta, plane, exceptions);
    default:
      return packDeltas<8>(deltas, count, min_delta, plane, exceptions);
  }
}

template <typename Code>
void packCodesFor(unsigned bits, Code code, std::size_t count, std::uint8_t* plane) {
  switch (bits) {
    case 0:
      return packCodes<0>(code, count, plane);
    case 1:
      return packCodes<1>(code, count, plane);
    case 2:
      return packCodes<2>(code, count, plane);
    case 4:
      return packCodes<4>(code, count, plane);
    case 8:
      return packCodes<8>(code, count, plane);
    case 16:
      return packCodes<16>(code, count, plane);
    default:
      return packCodes<32>(code, count, plane);
  }
}

// The largest code in a plane of `Bits`-bit codes (padding codes past the end are zero).
template <unsigned Bits>
std::uint32_t largestCode(const std::uint8_t* plane, std::size_t count) {
  std::uint32_t largest = 0;
  if constexpr (Bits >= 8) {
    for (std::size_t i = 0; i < count; ++i) {
      std::uint32_t code = 0;
      std::memcpy(&code, plane + i * (Bits / 8), Bits / 8);
      largest = std::max(largest, code);
    }
  } else if constexpr (Bits > 0) {
    std::uint8_t largest_byte = 0;
    const std::size_t bytes = codePlaneBytes(count, Bits);
    for (std::size_t j = 0; j < bytes; ++j) {
      for (unsigned k = 0; k < 8 / Bits; ++k) {
        largest_byte = std::max<std::uint8_t>(
            largest_byte, static_cast<std::uint8_t>((plane[j] >> (k * Bits)) & ((1u << Bits) - 1)));
      }
    }
    largest = largest_byte;
  }
  return largest;
}

std::uint32_t largestCodeFor(unsigned bits, const std::uint8_t* plane, std::size_t count) {
  switch (bits) {
    case 0:
      return largestCode<0>(plane, count);
    case 1:
      return largestCode<1>(plane, count);
    case 2:
      return largestCode<2>(plane, count);
    case 4:
      return largestCode<4>(plane, count);
    case 8:
      return largestCode<8>(plane, count);
    case 16:
      return largestCode<16>(plane, count);
    default:
      return largestCode<32>(plane, count);
  }
}

// Rebuilds tags [from, to): the channel from the code plane (checked against the table by
// the caller), the time as begin + the running sum of (plane delta + smallest delta).
struct TimeRun {
  const std::uint8_t* code_plane;
  const std::uint8_t* delta_plane;
  const channel_t* table;
  std::uint64_t min_delta;
  std::uint64_t begin;
  std::uint64_t elapsed = 0;
  bool wrapped = false;

  // The plane entry of tag i >= 1.
  template <unsigned Bytes>
  std::uint64_t delta(std::size_t i) const {
    constexpr std::uint64_t kMask =
        Bytes >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * Bytes)) - 1;
    std::uint64_t value = 0;
    if constexpr (Bytes > 0) {
      std::memcpy(&value, delta_plane + (i - 1) * Bytes, 8);
      value &= kMask;
    }
    return value;
  }

  template <unsigned Bits>
  std::uint32_t code(std::size_t i) const {
    std::uint32_t value = 0;
    if constexpr (Bits >= 8) {
      std::memcpy(&value, code_plane + i * (Bits / 8), Bits / 8);
    } else if constexpr (Bits > 0) {
      constexpr std::size_t kPerByte = 8 / Bits;
      value = (code_plane[i / kPerByte] >> ((i % kPerByte) * Bits)) & ((1u << Bits) - 1);
    }
    return value;
  }

  // Two 8-byte stores: type, reserved and missed_events are zero, the channel above them.
  static void put(Tag* out, channel_t channel, std::uint64_t time) {
    const std::uint64_t head = std::uint64_t{static_cast<std::uint32_t>(channel)} << 32;
    std::memcpy(reinterpret_cast<std::uint8_t*>(out), &head, 8);
    std::memcpy(reinterpret_cast<std::uint8_t*>(out) + 8, &time, 8);
  }

  template <unsigned Bytes, unsigned Bits>
  void run(std::size_t from, std::size_t to, Tag* out) {
    constexpr std::uint64_t kMaxValue =
        Bytes >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * Bytes)) - 1;
    // The sum cannot wrap if every delta were the largest the plane can hold: then no check
    // per tag is needed (always so for real streams; crafted input takes the checked loop).
    std::uint64_t largest_step = 0;
    std::uint64_t largest_sum = 0;
    const bool may_wrap = __builtin_add_overflow(kMaxValue, min_delta, &largest_step) ||
                          __builtin_mul_overflow(largest_step, to - from, &largest_sum) ||
                          __builtin_add_overflow(largest_sum, elapsed, &largest_sum);
    if (may_wrap) {
      runChecked<Bytes, Bits>(from, to, out);
      return;
    }
    // Locals: the stores through `out` could alias the members, which would be reloaded.
    const TimeRun self = *this;
    const channel_t* const channels = table;
    const std::uint64_t smallest = min_delta;
    const std::uint64_t start = begin;
    std::uint64_t sum = elapsed;
    std::size_t i = from;
    if constexpr (Bits > 0 && Bits < 8) {
      // Whole bytes of codes at a time; the codes of a byte are then constant shifts.
      constexpr std::size_t kPerByte = 8 / Bits;
      for (; i < to && i % kPerByte != 0; ++i) {
        sum += self.delta<Bytes>(i) + smallest;
        put(out + i, channels[self.code<Bits>(i)], start + sum);
      }
      for (; i + kPerByte <= to; i += kPerByte) {
        const unsigned byte = code_plane[i / kPerByte];
        for (std::size_t k = 0; k < kPerByte; ++k) {
          sum += self.delta<Bytes>(i + k) + smallest;
          put(out + i + k, channels[(byte >> (k * Bits)) & ((1u << Bits) - 1)], start + sum);
        }
      }
    }
    for (; i < to; ++i) {
      sum += self.delta<Bytes>(i) + smallest;
      put(out + i, channels[self.code<Bits>(i)], start + sum);
    }
    elapsed = sum;
  }

  template <unsigned Bytes, unsigned Bits>
  void runChecked(std::size_t from, std::size_t to, Tag* out) {
    for (std::size_t i = from; i < to; ++i) {
      const std::uint64_t step = delta<Bytes>(i) + min_delta;
      elapsed += step;
      wrapped |= elapsed < step;
      put(out + i, table[code<Bits>(i)], begin + elapsed);
    }
  }

  template <unsigned Bits>
  void runWithCodes(unsigned bytes, std::size_t from, std::size_t to, Tag* out) {
    switch (bytes) {
      case 0:
        return run<0, Bits>(from, to, out);
      case 1:
        return run<1, Bits>(from, to, out);
      case 2:
        return run<2, Bits>(from, to, out);
      case 3:
        return run<3, Bits>(from, to, out);
      case 4:
        return run<4, Bits>(from, to, out);
      case 5:
        return run<5, Bits>(from, to, out);
      case 6:
        return run<6, Bits>(from, to, out);
      case 7:
        return run<7, Bits>(from, to, out);
      default:
        return run<8, Bits>(from, to, out);
    }
  }

  void runFor(unsigned bits, unsigned bytes, std::size_t from, std::size_t to, Tag* out) {
    switch (bits) {
      case 0:
        return runWithCodes<0>(bytes, from, to, out);
      case 1:
        return runWithCodes<1>(bytes, from, to, out);
      case 2:
        return runWithCodes<2>(bytes, from, to, out);
      case 4:
        return runWithCodes<4>(bytes, from, to, out);
      case 8:
        return runWithCodes<8>(bytes, from, to, out);
      case 16:
        return runWithCodes<16>(bytes, from, to, out);
      default:
        return runWithCodes<32>(bytes, from, to, out);
    }
  }
};

// What the encoder's first pass gathers over a block.
}  // namespace

struct ScanSummary {
  std::uint64_t previous;  // time of the tag before
  std::uint64_t min_delta;
  std::uint64_t max_delta;
  std::uint32_t any_special;  // or of every tag's type, reserved and missed_events bytes
  channel_t min_channel;
  channel_t max_channel;
};

namespace {

// The first pass over tags [from, to) four at a time with AVX2 (the x86-64-v3 baseline):
// deltas into `deltas`, their unsigned range, the channel range, the or of the tag heads.
// Returns where it stopped (fewer than four tags left); the caller does the rest.
__attribute__((target("avx2"))) std::size_t scanGroups(const Tag* tags, std::size_t from,
                                                       std::size_t to, std::uint64_t* deltas,
                                                       ScanSummary& summary) {
  const __m256i sign = _mm256_set1_epi64x(static_cast<std::int64_t>(0x8000000000000000ull));
  __m256i last = _mm256_set1_epi64x(static_cast<std::int64_t>(summary.previous));
  // Unsigned order through signed compares of sign-flipped values.
  __m256i low =
      _mm256_xor_si256(_mm256_set1_epi64x(static_cast<std::int64_t>(summary.min_delta)), sign);
  __m256i high =
      _mm256_xor_si256(_mm256_set1_epi64x(static_cast<std::int64_t>(summary.max_delta)), sign);
  __m256i heads_or = _mm256_setzero_si256();
  __m256i channel_low = _mm256_set1_epi32(summary.min_channel);
  __m256i channel_high = _mm256_set1_epi32(summary.max_channel);
  std::size_t i = from;
  for (; i + 4 <= to; i += 4) {
    prefetchAhead(tags + i);
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tags + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tags + i + 2));
    // Per 128-bit lane a tag: (head and channel, time). Times in order i .. i+3:
    const __m256i times =
        _mm256_permute4x64_epi64(_mm256_unpackhi_epi64(a, b), _MM_SHUFFLE(3, 1, 2, 0));
    const __m256i heads = _mm256_unpacklo_epi64(a, b);
    const __m256i before =
        _mm256_blend_epi32(_mm256_permute4x64_epi64(times, _MM_SHUFFLE(2, 1, 0, 0)), last, 0x03);
    const __m256i delta = _mm256_sub_epi64(times, before);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(deltas + i), delta);
    last = _mm256_permute4x64_epi64(times, _MM_SHUFFLE(3, 3, 3, 3));
    const __m256i flipped = _mm256_xor_si256(delta, sign);
    low = _mm256_blendv_epi8(low, flipped, _mm256_cmpgt_epi64(low, flipped));
    high = _mm256_blendv_epi8(high, flipped, _mm256_cmpgt_epi64(flipped, high));
    heads_or = _mm256_or_si256(heads_or, heads);
    const __m256i channels = _mm256_shuffle_epi32(heads, _MM_SHUFFLE(3, 3, 1, 1));
    channel_low = _mm256_min_epi32(channel_low, channels);
    channel_high = _mm256_max_epi32(channel_high, channels);
  }
  alignas(32) std::uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_xor_si256(low, sign));
  summary.min_delta = *std::min_element(lanes, lanes + 4);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_xor_si256(high, sign));
  summary.max_delta = *std::max_element(lanes, lanes + 4);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), heads_or);
  for (std::uint64_t lane : lanes) summary.any_special |= static_cast<std::uint32_t>(lane);
  alignas(32) std::int32_t channel_lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(channel_lanes), channel_low);
  summary.min_channel = *std::min_element(channel_lanes, channel_lanes + 8);
  _mm256_store_si256(reinterpret_cast<__m256i*>(channel_lanes), channel_high);
  summary.max_channel = *std::max_element(channel_lanes, channel_lanes + 8);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), last);
  summary.previous = lanes[0];
  return i;
}

}  // namespace

std::uint32_t TagBlockEncoder::directSlot(channel_t channel) {
  return static_cast<std::uint32_t>(channel) + static_cast<std::uint32_t>(kDirectHalf);
}

TagBlockEncoder::TagBlockEncoder() : direct_(kDirectSize, 0) {}

std::uint32_t TagBlockEncoder::newCode(channel_t channel) {
  const std::uint32_t slot = directSlot(channel);
  const auto code = static_cast<std::uint32_t>(channels_.size());
  if (slot < kDirectSize) {
    direct_[slot] = code + 1;
  } else {
    auto [it, added] = other_.try_emplace(channel, code);
    if (!added) return it->second;
  }
  channels_.push_back(channel);
  return code;
}

// Pass 1: deltas, their range and the channel range. Whether any tag is not a plain TimeTag
// (its first four bytes, type, reserved and missed_events, are not all zero) is or-ed up and
// looked into only then, to note the special tags.
ScanSummary TagBlockEncoder::scanTags(std::span<const Tag> tags) {
  const std::size_t count = tags.size();
  std::uint64_t* __restrict const deltas = deltas_.data();
  const Tag* __restrict const tag_data = tags.data();
  auto previous = count == 0 ? 0 : static_cast<std::uint64_t>(tags.front().time);
  std::uint64_t min_delta = count <= 1 ? 0 : ~std::uint64_t{0};
  std::uint64_t max_delta = 0;
  std::uint32_t any_special = 0;
  channel_t min_channel = count == 0 ? 0 : tag_data[0].channel;
  channel_t max_channel = min_channel;
  const auto scan = [&](std::size_t from, std::size_t size) {
    for (std::size_t i = from; i < from + size; ++i) {
      const Tag& tag = tag_data[i];
      const auto time = static_cast<std::uint64_t>(tag.time);
      const std::uint64_t delta = time - previous;
      previous = time;
      deltas[i] = delta;  // deltas[0] is the first tag's offset from the block's begin
      min_delta = std::min(min_delta, delta);
      max_delta = std::max(max_delta, delta);
      std::uint32_t head;
      std::memcpy(&head, &tag, sizeof head);
      any_special |= head;
      min_channel = std::min(min_channel, tag.channel);
      max_channel = std::max(max_channel, tag.channel);
    }
  };
  std::size_t from = std::min<std::size_t>(count, 1);
  if (count > 4) {
    ScanSummary summary{previous, min_delta, max_delta, any_special, min_channel, max_channel};
    from = scanGroups(tag_data, from, count, deltas, summary);
    previous = summary.previous;
    min_delta = summary.min_delta;
    max_delta = summary.max_delta;
    any_special = summary.any_special;
    min_channel = summary.min_channel;
    max_channel = summary.max_channel;
  }
  scan(from, count - from);
  if (count > 0) {
    std::uint32_t head;
    std::memcpy(&head, &tag_data[0], sizeof head);
    any_special |= head;
    min_channel = std::min(min_channel, tag_data[0].channel);
    max_channel = std::max(max_channel, tag_data[0].channel);
  }
  if (any_special != 0) {
    for (std::size_t i = 0; i < count; ++i) {
      std::uint32_t head;
      std::memcpy(&head, &tag_data[i], sizeof head);
      if (head != 0) specials_.push_back(static_cast<std::uint32_t>(i));
    }
  }
  return ScanSummary{previous, min_delta, max_delta, any_special, min_channel, max_channel};
}

// The channel table: when the channels span at most 64 numbers and numbering the whole span
// costs no more code bits than numbering the channels seen in a sample (bit = channel mod 64),
// the table is the span itself and a code is the channel minus the smallest (no look-up per
// tag, returns true); otherwise codes are given in order of first appearance, into codes_.
bool TagBlockEncoder::buildChannelTable(std::span<const Tag> tags, channel_t min_channel,
                                        channel_t max_channel) {
  const std::size_t count = tags.size();
  const Tag* __restrict const tag_data = tags.data();
  const std::uint64_t span =
      static_cast<std::uint64_t>(static_cast<std::int64_t>(max_channel) - min_channel) + 1;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < count; i += kSampleStride) {
    seen |= std::uint64_t{1} << (static_cast<std::uint32_t>(tag_data[i].channel) & 63);
  }
  const bool spanned =
      count > 0 && span <= 64 &&
      codeBitsFor(span) == codeBitsFor(static_cast<std::size_t>(std::popcount(seen)));
  channels_.clear();
  if (spanned) {
    for (std::uint64_t k = 0; k < span; ++k) {
      channels_.push_back(static_cast<channel_t>(min_channel + static_cast<std::int64_t>(k)));
    }
    return true;
  }
  codes_.resize(count);
  std::uint32_t* __restrict const codes = codes_.data();
  const std::uint32_t* const direct = direct_.data();
  for (std::size_t i = 0; i < count; ++i) {
    const channel_t channel = tag_data[i].channel;
    const std::uint32_t slot = directSlot(channel);
    std::uint32_t code = slot < kDirectSize ? direct[slot] : 0;
    if (code == 0) [[unlikely]]
      code = newCode(channel) + 1;
    codes[i] = code - 1;
  }
  for (channel_t channel : channels_) {
    const std::uint32_t slot = directSlot(channel);
    if (slot < kDirectSize) direct_[slot] = 0;
  }
  other_.clear();
  return false;
}

// After the planes: the deltas too wide for the delta plane, then the special tags' heads.
void TagBlockEncoder::putExceptionsAndSpecials(std::span<const Tag> tags,
                                               std::size_t exception_count, std::uint64_t min_delta,
                                               unsigned delta_bytes,
                                               std::vector<std::uint8_t>& out) const {
  putVarint(out, exception_count);
  std::uint32_t next_index = 1;  // tag 0 has no plane delta, so no exception
  for (std::size_t e = 0; e < exception_count; ++e) {
    const std::uint32_t index = exceptions_[e];
    putVarint(out, index - next_index);
    putVarint(out, (deltas_[index] - min_delta) >> (8 * delta_bytes));
    next_index = index + 1;
  }
  putVarint(out, specials_.size());
  next_index = 0;
  for (std::uint32_t index : specials_) {
    const Tag& tag = tags[index];
    putVarint(out, index - next_index);
    out.push_back(static_cast<std::uint8_t>(tag.type));
    out.push_back(tag.reserved);
    out.push_back(static_cast<std::uint8_t>(tag.missed_events));
    out.push_back(static_cast<std::uint8_t>(tag.missed_events >> 8));
    next_index = index + 1;
  }
}

void TagBlockEncoder::encode(std::span<const Tag> tags, timestamp_t begin_time,
                             std::vector<std::uint8_t>& out) {
  const std::size_t count = tags.size();
  deltas_.resize(count);
  exceptions_.resize(count);
  specials_.clear();
  const ScanSummary summary = scanTags(tags);
  const std::uint64_t* const deltas = deltas_.data();
  // The first tag's offset from the block's begin is stored apart from the deltas, so that it
  // does not widen their range (a clock's deltas are all alike, its offset is not).
  const std::uint64_t first_offset = count == 0 ? 0
                                                : static_cast<std::uint64_t>(tags.front().time) -
                                                      static_cast<std::uint64_t>(begin_time);
  const bool spanned = buildChannelTable(tags, summary.min_channel, summary.max_channel);

  std::array<std::uint64_t, 65> histogram{};
  std::uint64_t samples = 0;
  for (std::size_t i = 1; i < count; i += kSampleStride, ++samples)
    ++histogram[bitWidth(deltas[i])];
  const unsigned delta_bytes = chooseDeltaBytes(
      histogram, samples, (bitWidth(summary.max_delta - summary.min_delta) + 7) / 8);
  const unsigned code_bits = codeBitsFor(channels_.size());

  out.clear();
  putVarint(out, channels_.size());
  for (channel_t channel : channels_) putVarint(out, zigzag(channel));
  out.push_back(static_cast<std::uint8_t>(code_bits));
  out.push_back(static_cast<std::uint8_t>(delta_bytes));
  putVarint(out, first_offset);
  putVarint(out, summary.min_delta);

  // Pass 2: the two planes.
  const std::size_t codes_at = out.size();
  const std::size_t deltas_at = codes_at + codePlaneBytes(count, code_bits);
  out.resize(deltas_at + deltaPlaneBytes(count, delta_bytes));
  std::uint8_t* const code_plane = out.data() + codes_at;
  const Tag* const tag_data = tags.data();
  if (spanned) {
    const auto lowest = static_cast<std::uint32_t>(summary.min_channel);
    packCodesFor(
        code_bits,
        [tag_data, lowest](std::size_t i) {
          return static_cast<std::uint32_t>(tag_data[i].channel) - lowest;
        },
        count, code_plane);
  } else {
    const std::uint32_t* const codes = codes_.data();
    packCodesFor(
        code_bits, [codes](std::size_t i) { return codes[i]; }, count, code_plane);
  }
  const std::size_t exception_count = packDeltasFor(
      delta_bytes, deltas + std::min<std::size_t>(count, 1), count == 0 ? 0 : count - 1,
      summary.min_delta, out.data() + deltas_at, exceptions_.data());
  putExceptionsAndSpecials(tags, exception_count, summary.min_delta, delta_bytes, out);
}

void TagBlockDecoder::decode(std::span<const std::uint8_t> payload, std::uint32_t tag_count,
                             timestamp_t begin_time, timestamp_t end_time, Tag* out,
                             std::vector<std::uint32_t>& specials) {
  specials.clear();
  ByteReader in(payload);
  const std::uint64_t channel_count = in.varint("the channel count");
  if (channel_count > tag_count || (tag_count > 0 && channel_count == 0)) {
    throw DataError("channel count " + std::to_string(channel_count) + " is invalid for " +
                    std::to_string(tag_count) + " tags");
  }
  table_.clear();
  for (std::uint64_t i = 0; i < channel_count; ++i) {
    const std::int64_t channel = unzigzag(in.varint("a channel of the channel table"));
    if (channel != static_cast<channel_t>(channel)) {
      throw DataError("channel " + std::to_string(channel) + " does not fit 32 bits");
    }
    table_.push_back(static_cast<channel_t>(channel));
  }
  const auto code_bits = static_cast<unsigned>(in.fixed(1, "the code width"));
  const auto delta_bytes = static_cast<unsigned>(in.fixed(1, "the delta width"));
  if (code_bits != codeBitsFor(channel_count) || delta_bytes > 8) {
    throw DataError("plane widths " + std::to_string(code_bits) + " bits and " +
                    std::to_string(delta_bytes) + " bytes are invalid for " +
                    std::to_string(channel_count) + " channels (code bits must be " +
                    std::to_string(codeBitsFor(channel_count)) + ", delta bytes 0..8)");
  }
  const std::uint64_t first_offset = in.varint("the first tag's offset");
  const std::uint64_t min_delta = in.varint("the smallest delta");
  if (min_delta >> 63) {
    throw DataError("smallest delta " + std::to_string(min_delta) + " is negative");
  }
  const std::uint8_t* code_plane =
      in.take(codePlaneBytes(tag_count, code_bits), "the channel code plane").data();
  const std::uint8_t* delta_plane =
      in.take(deltaPlaneBytes(tag_count, delta_bytes), "the delta plane").data();

  if (tag_count > 0 && largestCodeFor(code_bits, code_plane, tag_count) >= channel_count) {
    throw DataError("a channel code lies outside the table of " + std::to_string(channel_count) +
                    " channels");
  }
  TimeRun times{
      code_plane,  delta_plane, table_.data(), min_delta, static_cast<std::uint64_t>(begin_time),
      first_offset};
  if (tag_count > 0) {
    std::uint32_t code = 0;
    if (code_bits > 0) std::memcpy(&code, code_plane, std::max(1u, code_bits / 8));
    if (code_bits < 8) code &= (1u << code_bits) - 1;
    TimeRun::put(out, table_[code], times.begin + first_offset);
  }
  const std::uint64_t exception_count = in.varint("the exception count");
  if (exception_count > tag_count) {
    throw DataError(std::to_string(exception_count) + " exceptions for " +
                    std::to_string(tag_count) + " tags");
  }
  std::uint64_t next = std::min<std::uint64_t>(tag_count, 1);
  for (std::uint64_t e = 0; e < exception_count; ++e) {
    const std::uint64_t index = next + in.varint("an exception index");
    const std::uint64_t high = in.varint("an exception value");
    if (index >= tag_count || index < std::max<std::uint64_t>(next, 1)) {
      throw DataError("exception index " + std::to_string(index) + " is out of order or range");
    }
    if (high == 0 || delta_bytes == 8 ||
        (delta_bytes > 0 && (high >> (64 - 8 * delta_bytes)) != 0)) {
      throw DataError("exception value " + std::to_string(high) + " at tag " +
                      std::to_string(index) + " is invalid");
    }
    // The exception's tag: its low bytes come from the plane, the rest from the list.
    times.runFor(code_bits, delta_bytes, next, index + 1, out);
    const std::uint64_t extra = high << (8 * delta_bytes);
    times.elapsed += extra;
    times.wrapped |= times.elapsed < extra;
    out[index].time = static_cast<timestamp_t>(times.begin + times.elapsed);
    next = index + 1;
  }
  times.runFor(code_bits, delta_bytes, next, tag_count, out);

  const std::uint64_t span = static_cast<std::uint64_t>(end_time) - times.begin;
  if (tag_count > 0 && (times.wrapped || times.elapsed >= span)) {
    throw DataError("tag times leave the block's interval [" + std::to_string(begin_time) + ", " +
                    std::to_string(end_time) + ") ps or run backwards");
  }

  const std::uint64_t special_count = in.varint("the special tag count");
  if (special_count > tag_count) {
    throw DataError(std::to_string(special_count) + " special tags for " +
                    std::to_string(tag_count) + " tags");
  }
  next = 0;
  for (std::uint64_t s = 0; s < special_count; ++s) {
    const std::uint64_t index = next + in.varint("a special tag index");
    if (index >= tag_count || index < next) {
      throw DataError("special tag index " + std::to_string(index) + " is out of order or range");
    }
    const auto fields = in.take(4, "a special tag");
    if (fields[0] > kMaxTagType) {
      throw DataError("tag " + std::to_string(index) + " has type " + std::to_string(fields[0]) +
                      " (valid: 0..4)");
    }
    Tag& tag = out[index];
    tag.type = static_cast<TagType>(fields[0]);
    tag.reserved = fields[1];
    tag.missed_events = static_cast<std::uint16_t>(fields[2] | (fields[3] << 8));
    if (tag.type != TagType::TimeTag) specials.push_back(static_cast<std::uint32_t>(index));
    next = index + 1;
  }
  if (in.remaining() != 0) {
    throw DataError(std::to_string(in.remaining()) + " unexpected bytes after the special tags");
  }
}

}  // namespace tagflow::tagfile
