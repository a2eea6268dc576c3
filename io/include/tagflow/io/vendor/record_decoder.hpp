// RecordDecoder: turns the fixed-size records of a vendor's time-tag file into tags, run by
// run, keeping what spans records (the overflow count, the last sync emitted). The records do
// not always hold their tags in time order (a T3 photon is stamped after its sync period's
// start; some devices write stamps slightly out of order): a run's tags are put in order before
// decode() returns, and futureBound() says how early a tag from a later record can still be,
// so that VendorFileSource can merge the runs and hand out the tags before it.
//
// Channels follow VendorChannelMap: the input the vendor numbers k (from 0) becomes channel
// first_input + k, the sync becomes `sync`, marker bit b (from 0) becomes first_marker + b.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow {

struct VendorChannelMap {
  channel_t first_input = 1;
  channel_t sync = 100;
  channel_t first_marker = 200;
};

class RecordDecoder {
 public:
  // The most tags one record yields: a B&H marker record after a gap (the gap's two marks and
  // a tag for each of four marker bits).
  static constexpr std::size_t kMaxTagsPerRecord = 6;

  virtual ~RecordDecoder() = default;

  virtual std::size_t recordBytes() const = 0;

  // Decodes `count` records at `records`, the first being record `first_index` of the file,
  // writing their tags from `out` on (room for kMaxTagsPerRecord tags per record) in time
  // order, tags of one time in record order, and returns the end of what it wrote. The tags
  // are written in place rather than appended, so that the loop over the records does nothing
  // per tag but decode and store it. A tag earlier than `floor` (what was already handed out)
  // is a disorder larger than the format allows: DataError naming the record.
  virtual Tag* decode(const std::uint8_t* records, std::size_t count, std::uint64_t first_index,
                      timestamp_t floor, Tag* out) = 0;

  // No tag of a later record is earlier than this (ps); the largest time when none can be.
  virtual timestamp_t futureBound() const = 0;

  // Called once after the file's last record was decoded: writes from `out` on the tags that
  // what the last records left open gives at the end (at most two, after every tag written
  // so far; room for them is left by the records that left it open, which wrote none) and
  // returns the end of what it wrote. B&H: a GAP on the last records.
  virtual Tag* finish(Tag* out) { return out; }

  // Whether any tag written so far was not a TimeTag (B&H's gap marks); until one was, a
  // block's index of special tags is empty without looking at its tags.
  virtual bool wroteSpecialTags() const { return false; }

 protected:
  // A TimeTag's first 8 bytes: the channel, the type, reserved and missed-events fields zero.
  static std::uint64_t timeTagHead(channel_t channel) {
    return std::uint64_t{static_cast<std::uint32_t>(channel)} << 32;
  }
  // Writes a TimeTag as two 8-byte stores, its head made once (per channel) rather than per
  // tag; the member-wise copy of makeTimeTag() takes three stores.
  static void storeTimeTag(Tag* out, std::uint64_t head, timestamp_t time) {
    std::memcpy(reinterpret_cast<char*>(out), &head, sizeof head);
    std::memcpy(reinterpret_cast<char*>(out) + sizeof head, &time, sizeof time);
  }

  // For a photon stored after its sync tag, which is kept only for the first photon of a sync
  // period: 1 when `sync_count` differs from `last_count` (the tag is kept), else 0, and then
  // `first` (the earlier of the record's tags) and `bound` become `sync`. Whether a photon is
  // its period's first follows no pattern a branch predictor could learn, and the compiler
  // turns a plain `?:` back into a branch: on x86-64 this is one comparison, a set and two
  // conditional moves.
  static std::uint64_t keepSync(std::uint64_t sync_count, std::uint64_t last_count,
                                timestamp_t sync, timestamp_t& first, timestamp_t& bound) {
    std::uint64_t kept = 0;
#if defined(__x86_64__)
    asm("cmp %[last], %[count]\n\tsetne %b[kept]\n\tcmovne %[sync], %[first]\n\t"
        "cmovne %[sync], %[bound]"
        : [kept] "+&r"(kept), [first] "+r"(first), [bound] "+r"(bound)
        : [count] "r"(sync_count), [last] "r"(last_count), [sync] "r"(sync)
        : "cc");
#else
    kept = sync_count != last_count ? 1 : 0;
    asm("" : "+r"(kept));
    const std::uint64_t mask = 0 - kept;
    first ^= static_cast<timestamp_t>(static_cast<std::uint64_t>(first ^ sync) & mask);
    bound ^= static_cast<timestamp_t>(static_cast<std::uint64_t>(bound ^ sync) & mask);
#endif
    return kept;
  }

  // Puts tags written out of time order in order, tags of one time in the order written.
  static void sortRun(Tag* begin, Tag* end);

  // Throws the DataError of a tag at `time` from record `index`, earlier than `floor`.
  [[noreturn]] static void throwDisorder(std::uint64_t index, timestamp_t time, timestamp_t floor);
};

}  // namespace tagflow
