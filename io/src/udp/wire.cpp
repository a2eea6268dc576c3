#include "tagflow/io/udp/wire.hpp"

#include <immintrin.h>

#include <array>
#include <bit>
#include <cstring>
#include <string>

#include "tagflow/core/error.hpp"

namespace tagflow::wire {

static_assert(std::endian::native == std::endian::little,
              "the wire format is little-endian and decoded in place");

namespace {

constexpr std::uint32_t kNoCode = 0xFF;
constexpr std::uint32_t kMissedReservedMask = 0x03FF0000;
constexpr std::uint32_t kMaxExtension = kDeltaMask;

// Code of channel c at index c + kMaxInput; kNoCode for 0 (no such input).
constexpr std::array<std::uint8_t, 2 * kMaxInput + 1> kCodeOfIndex = [] {
  std::array<std::uint8_t, 2 * kMaxInput + 1> codes{};
  for (channel_t c = -kMaxInput; c <= kMaxInput; ++c) {
    const auto index = static_cast<std::size_t>(c + kMaxInput);
    codes[index] = c > 0   ? static_cast<std::uint8_t>(c - 1)
                   : c < 0 ? static_cast<std::uint8_t>(kMaxInput - 1 - c)
                           : static_cast<std::uint8_t>(kNoCode);
  }
  return codes;
}();

// The first 8 bytes of a TimeTag record of each channel code: type 0, reserved 0,
// missed_events 0, channel.
constexpr std::array<std::uint64_t, kChannelCodes> kTimeTagHeads = [] {
  std::array<std::uint64_t, kChannelCodes> heads{};
  for (std::uint32_t code = 0; code < kChannelCodes; ++code) {
    const channel_t channel = code < static_cast<std::uint32_t>(kMaxInput)
                                  ? static_cast<channel_t>(code) + 1
                                  : -static_cast<channel_t>(code - kMaxInput + 1);
    heads[code] = std::uint64_t{static_cast<std::uint32_t>(channel)} << 32;
  }
  return heads;
}();

std::uint32_t loadWord(const std::byte* words, std::size_t index) {
  std::uint32_t word;
  std::memcpy(&word, words + 4 * index, 4);
  return word;
}

template <typename T>
T loadAt(std::span<const std::byte> bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

void storeTag(Tag* out, std::uint64_t head, std::uint64_t time) {
  std::memcpy(reinterpret_cast<std::byte*>(out), &head, 8);
  out->time = static_cast<timestamp_t>(time);
}

// Expands leading groups of 8 time-tag words with AVX2; returns the words consumed (a
// multiple of 8: it stops before the first group that holds a control word).
__attribute__((target("avx2"))) std::size_t expandTimeTagsAvx2(const std::byte* words,
                                                               std::size_t count,
                                                               std::uint64_t& time, Tag* out) {
  const __m256i delta_mask = _mm256_set1_epi32(static_cast<int>(kDeltaMask));
  const __m256i last_channel_code = _mm256_set1_epi32(static_cast<int>(kChannelCodes) - 1);
  const __m256i first_falling = _mm256_set1_epi32(kMaxInput);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i falling_base = _mm256_set1_epi32(kMaxInput - 1);
  __m256i base = _mm256_set1_epi64x(static_cast<std::int64_t>(time));
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256i word = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(words + 4 * i));
    const __m256i code = _mm256_srli_epi32(word, kDeltaBits);
    if (!_mm256_testz_si256(_mm256_cmpgt_epi32(code, last_channel_code), _mm256_set1_epi32(-1))) {
      break;
    }
    // Inclusive prefix sum of the deltas (8 x 26 bits fit in 32): within each 128-bit lane,
    // then the low lane's total carried into the high lane.
    __m256i sum = _mm256_and_si256(word, delta_mask);
    sum = _mm256_add_epi32(sum, _mm256_slli_si256(sum, 4));
    sum = _mm256_add_epi32(sum, _mm256_slli_si256(sum, 8));
    const __m256i low_total = _mm256_shuffle_epi32(sum, 0xFF);
    sum = _mm256_add_epi32(sum, _mm256_permute2x128_si256(low_total, low_total, 0x08));
    // Rising codes 0..17 are channels 1..18, falling codes 18..35 are -1..-18.
    const __m256i channel =
        _mm256_blendv_epi8(_mm256_sub_epi32(falling_base, code), _mm256_add_epi32(code, one),
                           _mm256_cmpgt_epi32(first_falling, code));
    const __m256i time_low =
        _mm256_add_epi64(base, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(sum)));
    const __m256i time_high =
        _mm256_add_epi64(base, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(sum, 1)));
    const __m256i head_low =
        _mm256_slli_epi64(_mm256_cvtepu32_epi64(_mm256_castsi256_si128(channel)), 32);
    const __m256i head_high =
        _mm256_slli_epi64(_mm256_cvtepu32_epi64(_mm256_extracti128_si256(channel, 1)), 32);
    // unpacklo gives tags 0 and 2, unpackhi tags 1 and 3 (one per 128-bit lane).
    const __m256i even_low = _mm256_unpacklo_epi64(head_low, time_low);
    const __m256i odd_low = _mm256_unpackhi_epi64(head_low, time_low);
    const __m256i even_high = _mm256_unpacklo_epi64(head_high, time_high);
    const __m256i odd_high = _mm256_unpackhi_epi64(head_high, time_high);
    __m256i* const o = reinterpret_cast<__m256i*>(out + i);
    _mm256_storeu_si256(o, _mm256_permute2x128_si256(even_low, odd_low, 0x20));
    _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(even_low, odd_low, 0x31));
    _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(even_high, odd_high, 0x20));
    _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(even_high, odd_high, 0x31));
    base = _mm256_permute4x64_epi64(time_high, 0xFF);
  }
  time = static_cast<std::uint64_t>(_mm256_extract_epi64(base, 0));
  return i;
}

const bool kHasAvx2 = __builtin_cpu_supports("avx2");

std::uint32_t controlWord(std::uint32_t code, std::uint32_t payload) {
  return code << kDeltaBits | payload;
}

std::string tagWhere(std::uint64_t index, const Tag& tag) {
  return "tag " + std::to_string(index) + " (" + std::string(tagTypeName(tag.type)) + ", channel " +
         std::to_string(tag.channel) + ", " + std::to_string(tag.time) + " ps)";
}

}  // namespace

std::string_view statusName(Status status) {
  switch (status) {
    case Status::Ok:
      return "ok";
    case Status::TooShort:
      return "too_short";
    case Status::BadMagic:
      return "bad_magic";
    case Status::BadVersion:
      return "bad_version";
    case Status::BadFlags:
      return "bad_flags";
    case Status::BadLength:
      return "bad_length";
    case Status::BadWord:
      return "bad_word";
    case Status::TimeOverflow:
      return "time_overflow";
    case Status::OverflowOrder:
      return "overflow_order";
  }
  return "unknown";
}

std::size_t wordsPerDatagram(int mtu) {
  if (mtu < kMinMtu || mtu > kMaxMtu) {
    throw InvalidArgument("MTU " + std::to_string(mtu) + " is invalid (valid: " +
                          std::to_string(kMinMtu) + ".." + std::to_string(kMaxMtu) + ")");
  }
  return (static_cast<std::size_t>(mtu - kIpUdpHeaderBytes) - kHeaderBytes) / 4;
}

int channelCode(channel_t channel) {
  if (channel < -kMaxInput || channel > kMaxInput) return -1;
  const std::uint32_t code = kCodeOfIndex[static_cast<std::size_t>(channel + kMaxInput)];
  return code == kNoCode ? -1 : static_cast<int>(code);
}

channel_t codeChannel(std::uint32_t code) {
  return static_cast<channel_t>(static_cast<std::int32_t>(kTimeTagHeads[code] >> 32));
}

void writeHeader(std::uint32_t* datagram, const Header& header) {
  std::byte* bytes = reinterpret_cast<std::byte*>(datagram);
  const std::uint32_t magic = kMagic;
  std::memcpy(bytes, &magic, 4);
  bytes[4] = std::byte{kVersion};
  bytes[5] = std::byte{header.flags};
  std::memcpy(bytes + 6, &header.word_count, 2);
  std::memcpy(bytes + 8, &header.sequence, 4);
  std::memcpy(bytes + 12, &header.events_before, 4);
  std::memcpy(bytes + 16, &header.base_time, 8);
}

Status parseHeader(std::span<const std::byte> datagram, Header& header) {
  if (datagram.size() < kHeaderBytes) return Status::TooShort;
  if (loadAt<std::uint32_t>(datagram, 0) != kMagic) return Status::BadMagic;
  if (static_cast<std::uint8_t>(datagram[4]) != kVersion) return Status::BadVersion;
  header.flags = static_cast<std::uint8_t>(datagram[5]);
  if ((header.flags & ~kKnownFlags) != 0) return Status::BadFlags;
  header.word_count = loadAt<std::uint16_t>(datagram, 6);
  if (header.word_count > kMaxWords ||
      datagram.size() != kHeaderBytes + 4 * std::size_t{header.word_count}) {
    return Status::BadLength;
  }
  header.sequence = loadAt<std::uint32_t>(datagram, 8);
  header.events_before = loadAt<std::uint32_t>(datagram, 12);
  header.base_time = loadAt<timestamp_t>(datagram, 16);
  return Status::Ok;
}

Decoded decodeWords(const Header& header, const std::byte* words, Tag* out,
                    std::vector<std::uint32_t>* special, std::uint32_t special_base) {
  Decoded result;
  // Time runs in uint64 (wrapping, defined); a step past INT64_MAX shows as the signed value
  // going down, which is checked at every extension word and at the end: between two checks
  // the 26-bit deltas add less than 2^38, so a wrap cannot hide.
  std::uint64_t time = static_cast<std::uint64_t>(header.base_time);
  std::uint64_t checked = time;
  bool in_overflow = (header.flags & kFlagInOverflow) != 0;
  bool extension_pending = false;
  std::uint32_t missed = 0;
  std::size_t specials = 0;
  const std::size_t count = header.word_count;
  Tag* o = out;
  std::size_t i = 0;
  while (true) {
    const std::size_t run_begin = i;
    if (kHasAvx2) {
      const std::size_t expanded = expandTimeTagsAvx2(words + 4 * i, count - i, time, o);
      i += expanded;
      o += expanded;
    }
    // Four time-tag words per step, with one test: a code >= 36 carries into bit 32.
    for (; i + 4 <= count; i += 4) {
      const std::uint64_t w0 = loadWord(words, i), w1 = loadWord(words, i + 1),
                          w2 = loadWord(words, i + 2), w3 = loadWord(words, i + 3);
      constexpr std::uint64_t kCarry = std::uint64_t{64 - kChannelCodes} << kDeltaBits;
      if ((((w0 + kCarry) | (w1 + kCarry) | (w2 + kCarry) | (w3 + kCarry)) >> 32) != 0) break;
      const std::uint64_t t0 = time + (w0 & kDeltaMask);
      const std::uint64_t t1 = t0 + (w1 & kDeltaMask);
      const std::uint64_t t2 = t1 + (w2 & kDeltaMask);
      time = t2 + (w3 & kDeltaMask);
      storeTag(o, kTimeTagHeads[w0 >> kDeltaBits], t0);
      storeTag(o + 1, kTimeTagHeads[w1 >> kDeltaBits], t1);
      storeTag(o + 2, kTimeTagHeads[w2 >> kDeltaBits], t2);
      storeTag(o + 3, kTimeTagHeads[w3 >> kDeltaBits], time);
      o += 4;
    }
    for (; i < count; ++i) {
      const std::uint32_t word = loadWord(words, i);
      const std::uint32_t code = word >> kDeltaBits;
      if (code >= kChannelCodes) break;
      time += word & kDeltaMask;
      storeTag(o++, kTimeTagHeads[code], time);
    }
    if (i != run_begin) extension_pending = false;
    if (i == count) break;
    const std::uint32_t word = loadWord(words, i++);
    const std::uint32_t code = word >> kDeltaBits;
    const std::uint32_t payload = word & kDeltaMask;
    if (code == kCodeTimeExtend) {
      if (payload == 0 || static_cast<timestamp_t>(time) < static_cast<timestamp_t>(checked)) {
        result.status = payload == 0 ? Status::BadWord : Status::TimeOverflow;
        return result;
      }
      timestamp_t extended;
      if (__builtin_add_overflow(static_cast<timestamp_t>(time),
                                 static_cast<timestamp_t>(payload) << kDeltaBits, &extended)) {
        result.status = Status::TimeOverflow;
        return result;
      }
      time = static_cast<std::uint64_t>(extended);
      checked = time;
      extension_pending = true;
      continue;
    }
    Tag tag;
    switch (code) {
      case kCodeMissedEvents: {
        if (i == count) {
          result.status = Status::BadWord;
          return result;
        }
        const std::uint32_t detail = loadWord(words, i++);
        const std::uint32_t channel_code = detail >> kDeltaBits;
        const bool unknown_channel = channel_code == kMissedUnknownChannel;
        if ((channel_code >= kChannelCodes && !unknown_channel) ||
            (detail & kMissedReservedMask) != 0) {
          result.status = Status::BadWord;
          return result;
        }
        tag.type = TagType::MissedEvents;
        tag.missed_events = static_cast<std::uint16_t>(detail & 0xFFFF);
        tag.channel = unknown_channel ? 0 : codeChannel(channel_code);
        missed += tag.missed_events;
        break;
      }
      case kCodeError:
        tag.type = TagType::Error;
        break;
      case kCodeOverflowBegin:
        if (in_overflow) {
          result.status = Status::OverflowOrder;
          return result;
        }
        in_overflow = true;
        tag.type = TagType::OverflowBegin;
        break;
      case kCodeOverflowEnd:
        if (!in_overflow) {
          result.status = Status::OverflowOrder;
          return result;
        }
        in_overflow = false;
        tag.type = TagType::OverflowEnd;
        break;
      default:
        result.status = Status::BadWord;
        return result;
    }
    time += payload;
    tag.time = static_cast<timestamp_t>(time);
    if (special != nullptr) {
      special->push_back(special_base + static_cast<std::uint32_t>(o - out));
    }
    *o++ = tag;
    ++specials;
    extension_pending = false;
  }
  if (extension_pending) {
    result.status = Status::BadWord;
    return result;
  }
  if (static_cast<timestamp_t>(time) < static_cast<timestamp_t>(checked)) {
    result.status = Status::TimeOverflow;
    return result;
  }
  result.tags = static_cast<std::size_t>(o - out);
  result.events = static_cast<std::uint32_t>(result.tags - specials) + missed;
  result.in_overflow = in_overflow;
  result.last_time = static_cast<timestamp_t>(time);
  return result;
}

Encoder::Encoder(std::size_t words_per_datagram) : capacity_(words_per_datagram) {
  if (capacity_ < 2 || capacity_ > kMaxWords) {
    throw InvalidArgument("words per datagram " + std::to_string(capacity_) +
                          " is invalid (valid: 2.." + std::to_string(kMaxWords) + ")");
  }
}

void Encoder::encode(std::span<const Tag> tags, DatagramSink& sink) {
  const Tag* tag = tags.data();
  const Tag* const end = tag + tags.size();
  while (tag != end) {
    if (datagram_ != nullptr) {
      // The common case: time tags of known channels, short gaps, room in the datagram.
      std::uint32_t* const words = datagram_ + kHeaderWords;
      std::size_t n = words_;
      std::size_t run = run_start_;
      timestamp_t last = last_time_;
      const Tag* const stop = tag + std::min(capacity_ - n, static_cast<std::size_t>(end - tag));
      for (; tag != stop; ++tag) {
        const std::uint64_t delta =
            static_cast<std::uint64_t>(tag->time) - static_cast<std::uint64_t>(last);
        const std::uint32_t index = static_cast<std::uint32_t>(tag->channel) + kMaxInput;
        const std::uint32_t code = index < kCodeOfIndex.size() ? kCodeOfIndex[index] : kNoCode;
        if ((delta > kDeltaMask) | (code >= kChannelCodes) | (tag->type != TagType::TimeTag)) {
          break;
        }
        words[n] = code << kDeltaBits | static_cast<std::uint32_t>(delta);
        run = delta != 0 ? n : run;
        ++n;
        last = tag->time;
      }
      events_ += static_cast<std::uint32_t>(n - words_);
      tags_ += n - words_;
      words_ = n;
      run_start_ = run;
      last_time_ = last;
      if (tag == end) break;
    }
    encodeSlow(*tag++, sink);
  }
}

void Encoder::encodeSlow(const Tag& tag, DatagramSink& sink) {
  const std::uint64_t index = tags_;
  if (started_ && tag.time < last_time_) {
    throw DataError(tagWhere(index, tag) + " is earlier than the tag before it at " +
                    std::to_string(last_time_) + " ps (tags must be sorted by time)");
  }
  if (boundary_ && tag.time == last_time_) {
    throw DataError(tagWhere(index, tag) +
                    " shares its time with the last tag of a flushed datagram (flush only "
                    "between blocks)");
  }
  std::uint32_t code = 0;
  std::size_t item_words = 1;
  switch (tag.type) {
    case TagType::TimeTag:
    case TagType::MissedEvents: {
      const bool unknown_channel = tag.type == TagType::MissedEvents && tag.channel == 0;
      const int channel_code =
          unknown_channel ? static_cast<int>(kMissedUnknownChannel) : channelCode(tag.channel);
      if (channel_code < 0) {
        throw DataError(tagWhere(index, tag) + ": channel " + std::to_string(tag.channel) +
                        " cannot be sent (the wire format carries channels 1.." +
                        std::to_string(kMaxInput) + " and -1..-" + std::to_string(kMaxInput) +
                        (tag.type == TagType::MissedEvents ? ", and 0 for missed events)" : ")"));
      }
      code = static_cast<std::uint32_t>(channel_code);
      item_words = tag.type == TagType::MissedEvents ? 2 : 1;
      break;
    }
    case TagType::Error:
      code = kCodeError;
      break;
    case TagType::OverflowBegin:
      if (in_overflow_) {
        throw DataError(tagWhere(index, tag) + " begins an overflow inside an open one");
      }
      code = kCodeOverflowBegin;
      break;
    case TagType::OverflowEnd:
      if (!in_overflow_) {
        throw DataError(tagWhere(index, tag) + " ends an overflow that was not open");
      }
      code = kCodeOverflowEnd;
      break;
    default:
      throw DataError(tagWhere(index, tag) + " has type " +
                      std::to_string(static_cast<int>(tag.type)) + " (valid: 0..4)");
  }

  if (datagram_ == nullptr) open(declared_start_ ? start_time_ : tag.time, sink);
  declared_start_ = false;
  std::uint64_t delta =
      static_cast<std::uint64_t>(tag.time) - static_cast<std::uint64_t>(last_time_);
  const std::uint64_t high = delta >> kDeltaBits;
  const auto extension_words = static_cast<std::size_t>((high + kMaxExtension - 1) / kMaxExtension);
  if (words_ + extension_words + item_words > capacity_) {
    if (words_ > 0 && tag.time == last_time_) {
      closeMovingRun(tag.time, sink);
    } else {
      close(sink);  // also an empty one: it still carries a declared stream start
      open(tag.time, sink);
    }
    delta = 0;
  }
  std::uint32_t* const words = datagram_ + kHeaderWords;
  if (delta != 0) run_start_ = words_;
  for (std::uint64_t rest = delta >> kDeltaBits; rest > 0;) {
    const std::uint64_t step = std::min<std::uint64_t>(rest, kMaxExtension);
    words[words_++] = controlWord(kCodeTimeExtend, static_cast<std::uint32_t>(step));
    rest -= step;
  }
  const auto low = static_cast<std::uint32_t>(delta & kDeltaMask);
  if (tag.type == TagType::MissedEvents) {
    words[words_++] = controlWord(kCodeMissedEvents, low);
    words[words_++] = code << kDeltaBits | tag.missed_events;
    events_ += tag.missed_events;
  } else {
    words[words_++] = controlWord(code, low);
    if (tag.type == TagType::TimeTag) ++events_;
  }
  if (tag.type == TagType::OverflowBegin) in_overflow_ = true;
  if (tag.type == TagType::OverflowEnd) in_overflow_ = false;
  last_time_ = tag.time;
  started_ = true;
  ++tags_;
}

void Encoder::open(timestamp_t base_time, DatagramSink& sink) {
  datagram_ = sink.openDatagram();
  words_ = 0;
  events_ = 0;
  base_time_ = base_time;
  last_time_ = base_time;
  run_start_ = 0;
  open_in_overflow_ = in_overflow_;
  boundary_ = false;
}

void Encoder::begin(timestamp_t start_time, DatagramSink& sink) {
  if (started_) throw std::logic_error("encoder: begin() after the first tag");
  open(start_time, sink);
  close(sink);
  started_ = true;
  declared_start_ = true;
  start_time_ = start_time;
  last_time_ = start_time;
}

void Encoder::close(DatagramSink& sink) {
  Header header;
  header.flags = open_in_overflow_ ? kFlagInOverflow : 0;
  header.word_count = static_cast<std::uint16_t>(words_);
  header.base_time = base_time_;
  std::uint32_t* const datagram = datagram_;
  datagram_ = nullptr;
  sink.closeDatagram(datagram, header, events_);
}

void Encoder::closeMovingRun(timestamp_t next_time, DatagramSink& sink) {
  if (run_start_ == 0) {
    throw DataError("more than " + std::to_string(capacity_) + " wire words of tags at " +
                    std::to_string(next_time) +
                    " ps: a datagram of this MTU cannot hold every item of one time");
  }
  const std::byte* const words = reinterpret_cast<const std::byte*>(datagram_ + kHeaderWords);
  Header header;
  header.flags = open_in_overflow_ ? kFlagInOverflow : 0;
  header.base_time = base_time_;
  header.word_count = static_cast<std::uint16_t>(words_);
  scratch_.resize(words_);
  const Decoded all = decodeWords(header, words, scratch_.data());
  // The kept words decode to the first records of `all` again; this pass gives their facts.
  header.word_count = static_cast<std::uint16_t>(run_start_);
  const Decoded kept = decodeWords(header, words, scratch_.data());
  if (all.status != Status::Ok || kept.status != Status::Ok) {
    throw std::logic_error("encoder: its own datagram does not decode");
  }
  std::vector<Tag> run(scratch_.begin() + static_cast<std::ptrdiff_t>(kept.tags),
                       scratch_.begin() + static_cast<std::ptrdiff_t>(all.tags));
  words_ = run_start_;
  events_ = kept.events;
  in_overflow_ = kept.in_overflow;
  last_time_ = kept.last_time;
  close(sink);
  open(next_time, sink);
  tags_ -= run.size();
  for (const Tag& tag : run) encodeSlow(tag, sink);
}

void Encoder::flush(DatagramSink& sink) {
  if (datagram_ != nullptr && words_ > 0) {
    close(sink);
    boundary_ = true;
  }
}

void Encoder::finish(timestamp_t end_time, DatagramSink& sink) {
  flush(sink);
  if (started_ && end_time <= last_time_) {
    throw DataError("stream end " + std::to_string(end_time) +
                    " ps is not later than the last tag at " + std::to_string(last_time_) + " ps");
  }
  Header header;
  header.flags = kFlagEndOfStream | (in_overflow_ ? kFlagInOverflow : 0);
  header.base_time = end_time;
  sink.closeDatagram(sink.openDatagram(), header, 0);
}

}  // namespace tagflow::wire
