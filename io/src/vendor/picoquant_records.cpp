#include "tagflow/io/vendor/picoquant_records.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

constexpr std::uint64_t kPicoHarpT2Wrap = 210698240;
constexpr std::uint64_t kPicoHarpT3Wrap = 65536;
constexpr std::uint64_t kHydraHarpV1T2Wrap = 33552000;
constexpr std::uint64_t kGenericT2Wrap = 33554432;
constexpr std::uint64_t kHydraHarpT3Wrap = 1024;
constexpr std::uint64_t kPicoHarpLargestDtime = 0xFFF;
constexpr double kSmallestUnitS = 1e-15;
constexpr std::uint64_t kHydraHarpLargestDtime = 0x7FFF;
// How far a T2 marker may lie before the photon recorded ahead of it: markers are stamped
// with a coarser resolution than photons (PicoHarp keeps the marker bits in the time's low
// bits). A T2 tag earlier than the latest photon before it by more than this is an error. (The
// T2 sample file, tests/data/vendor/picoquant/v30_t2.ptu, is in order, photons and markers
// alike; the slack is kept for the markers' coarser stamps.)
constexpr timestamp_t kT2MarkerSlackPs = 1'000'000;

constexpr std::array kRecordTypes{
    PicoQuantRecordType{0x00010203, PicoQuantLayout::PicoHarpT2, "PicoHarp 300 T2"},
    PicoQuantRecordType{0x00010303, PicoQuantLayout::PicoHarpT3, "PicoHarp 300 T3"},
    PicoQuantRecordType{0x00010204, PicoQuantLayout::HydraHarpV1T2, "HydraHarp V1 T2"},
    PicoQuantRecordType{0x00010304, PicoQuantLayout::HydraHarpV1T3, "HydraHarp V1 T3"},
    PicoQuantRecordType{0x01010204, PicoQuantLayout::GenericT2, "HydraHarp V2 T2"},
    PicoQuantRecordType{0x01010304, PicoQuantLayout::GenericT3, "HydraHarp V2 T3"},
    PicoQuantRecordType{0x00010205, PicoQuantLayout::GenericT2, "TimeHarp 260 N T2"},
    PicoQuantRecordType{0x00010305, PicoQuantLayout::GenericT3, "TimeHarp 260 N T3"},
    PicoQuantRecordType{0x00010206, PicoQuantLayout::GenericT2, "TimeHarp 260 P T2"},
    PicoQuantRecordType{0x00010306, PicoQuantLayout::GenericT3, "TimeHarp 260 P T3"},
    PicoQuantRecordType{0x00010207, PicoQuantLayout::GenericT2, "MultiHarp / PicoHarp 330 T2"},
    PicoQuantRecordType{0x00010307, PicoQuantLayout::GenericT3, "MultiHarp / PicoHarp 330 T3"},
};

// Every time stays below 2^62 ps (53 days), a T3 sync time and its dtime below 2^61 ps each,
// so that no sum of them and no block end one past a tag leaves timestamp_t.
constexpr auto kTimeLimitPs = static_cast<std::uint64_t>(kStreamTimeLimit);

// A count of units in picoseconds, the exact value rounded to the nearest picosecond (halves
// up). The unit is a 64.64-bit fixed-point number, so that count * unit is exact in integer
// arithmetic: a sync period that is not a whole number of picoseconds (a HydraHarp file's
// 200001.6000128 ps) does not drift over hours, and costs two multiplications a tag, not
// floating point. A unit within 1e-6 ps of a whole number is that whole number: headers store
// 4 ps as 4.000000000000001e-12 s, float noise of a whole value.
class UnitScale {
 public:
  // Counts beyond maxCount() would take the time past `limit_ps`; a unit for which that is
  // below `largest_count` (the largest value of a field counted in it) is refused.
  UnitScale(double unit_s, std::string_view what, std::uint64_t limit_ps,
            std::uint64_t largest_count = 0) {
    // Below a femtosecond a unit is no instrument's: it would be a mistyped value (and would
    // round most times to zero).
    if (!(unit_s >= kSmallestUnitS) || !std::isfinite(unit_s) || unit_s > 1e3) {
      throw InvalidArgument(
          fmt::format("{} {} s is invalid (valid: >= 1e-15 s and <= 1000 s)", what, unit_s));
    }
    long double exact = static_cast<long double>(unit_s) * 1e12L;
    const long double nearest = std::round(exact);
    if (std::fabs(exact - nearest) < 1e-6L && nearest >= 1) exact = nearest;
    exact_ = exact;
    integer_ = static_cast<std::uint64_t>(exact);
    // 80 bits hold 64 significant ones: from 1 ps on the fraction fits 64 bits exactly, below
    // it what is cut is under 2^-64 ps.
    fraction_ =
        static_cast<std::uint64_t>(std::ldexp(exact - static_cast<long double>(integer_), 64));
    limitCounts(unit_s, what, limit_ps, largest_count);
  }
  // Exactly 1 / rate_hz s, the fraction rounded up: a product exactly halfway between two
  // picoseconds stays at or above the half and rounds up, and no other comes within the
  // 2^-64 ps per count this adds of it.
  UnitScale(std::uint32_t rate_hz, std::string_view what, std::uint64_t limit_ps,
            std::uint64_t largest_count) {
    constexpr std::uint64_t kPsPerSecond = 1'000'000'000'000;
    exact_ = static_cast<long double>(kPsPerSecond) / rate_hz;
    integer_ = kPsPerSecond / rate_hz;
    fraction_ = static_cast<std::uint64_t>(
        ((static_cast<Wide>(kPsPerSecond % rate_hz) << 64) + rate_hz - 1) / rate_hz);
    limitCounts(1.0 / rate_hz, what, limit_ps, largest_count);
  }
  long double exact() const { return exact_; }
  std::uint64_t whole() const { return fraction_ == 0 ? integer_ : 0; }  // 0 when not whole
  std::uint64_t maxCount() const { return max_count_; }

  __extension__ using Wide = unsigned __int128;

  // count * unit exactly, in units of 2^-64 ps (below 2^126 for counts up to maxCount()).
  Wide exactly(std::uint64_t count) const {
    return static_cast<Wide>(count) * fraction_ + (static_cast<Wide>(count * integer_) << 64);
  }
  // An exact time in picoseconds, halves up: only the high half of the sum is kept, which the
  // compiler leaves in registers (taking both halves apart made it go through memory).
  static timestamp_t rounded(Wide exact) {
    return static_cast<timestamp_t>((exact + (Wide{1} << 63)) >> 64);
  }
  // The same for one product, counts up to maxCount(): the high half of count * fraction,
  // plus one when its low half is half a picosecond or more. With BMI2 (x86-64-v3) one mulx
  // leaves both halves in registers; the compiler's 128-bit product (and its _mulx_u64, made
  // of one) took them apart through memory, in every photon's chain of dependent steps.
  timestamp_t operator()(std::uint64_t count) const {
#if defined(__x86_64__) && defined(__BMI2__)
    std::uint64_t high;
    std::uint64_t low;
    asm("mulx %[fraction], %[low], %[high]"
        : [low] "=r"(low), [high] "=r"(high)
        : [count] "d"(count), [fraction] "rm"(fraction_));
#else
    const Wide product = static_cast<Wide>(count) * fraction_;
    const auto high = static_cast<std::uint64_t>(product >> 64);
    const auto low = static_cast<std::uint64_t>(product);
#endif
    return static_cast<timestamp_t>(count * integer_ + high + (low >> 63));
  }

 private:
  // Counts beyond maxCount() would take the time past `limit_ps`.
  void limitCounts(double unit_s, std::string_view what, std::uint64_t limit_ps,
                   std::uint64_t largest_count) {
    max_count_ = static_cast<std::uint64_t>(std::min(static_cast<long double>(limit_ps) / exact_,
                                                     static_cast<long double>(1ull << 63)));
    if (max_count_ < largest_count) {
      throw InvalidArgument(fmt::format(
          "{} {} s is invalid (valid: >= 1e-15 s and <= {:.6g} s, so that {} of it stay below "
          "{:.6g} ps)",
          what, unit_s, static_cast<double>(limit_ps) / static_cast<double>(largest_count) * 1e-12,
          largest_count, static_cast<double>(limit_ps)));
    }
  }

  long double exact_ = 0;
  std::uint64_t integer_ = 0;
  std::uint64_t fraction_ = 0;
  std::uint64_t max_count_ = 0;
};

std::uint32_t wordAt(const std::uint8_t* record) {
  std::uint32_t word;
  std::memcpy(&word, record, sizeof word);
  return word;  // little-endian files on a little-endian host
}

// One decoding loop per layout and kind of unit (a template, not a switch per record), over
// locals rather than members (a tag stored through `out` could alias a member, which the
// compiler would then load again after every store); the rare records (overflows, markers)
// leave the loop for functions that work on the members. Each tag is compared with the one
// written before it, which starts at the floor: one comparison finds both a tag before the
// floor (an error) and a run out of order (sorted at its end).
class PicoQuantDecoder final : public RecordDecoder {
 public:
  PicoQuantDecoder(PicoQuantLayout layout, PicoQuantTiming timing, VendorChannelMap channels)
      : layout_(layout),
        channels_(channels),
        field_max_(fieldMax(layout)),
        global_(globalUnit(layout, timing, field_max_)),
        dtime_(isT3(layout) ? timing.resolution_s : timing.global_resolution_s,
               "dtime resolution (MeasDesc_Resolution)", kTimeLimitPs / 2,
               layout == PicoQuantLayout::PicoHarpT3 ? kPicoHarpLargestDtime
               : isT3(layout)                        ? kHydraHarpLargestDtime
                                                     : 0),
        heads_(photonHeads(layout, channels)),
        run_(chooseRun()) {}

  std::size_t recordBytes() const override { return 4; }
  timestamp_t futureBound() const override { return bound_; }

  Tag* decode(const std::uint8_t* records, std::size_t count, std::uint64_t first_index,
              timestamp_t floor, Tag* out) override {
    last_ = floor;
    unordered_ = false;
    Tag* const end = (this->*run_)(records, count, first_index, floor, out);
    if (unordered_) sortRun(out, end);
    return end;
  }

 private:
  using Run = Tag* (PicoQuantDecoder::*)(const std::uint8_t*, std::size_t, std::uint64_t,
                                         timestamp_t, Tag*);

  // T2: the time unit; T3: the sync period, exactly 1 / the rate where the header gives that.
  static UnitScale globalUnit(PicoQuantLayout layout, const PicoQuantTiming& timing,
                              std::uint64_t field_max) {
    const std::uint64_t limit = isT3(layout) ? kTimeLimitPs / 2 : kTimeLimitPs;
    if (timing.global_rate_hz != 0) {
      return UnitScale(timing.global_rate_hz, "sync period (1 / the sync rate)", limit, field_max);
    }
    return UnitScale(timing.global_resolution_s,
                     isT3(layout) ? "sync period (MeasDesc_GlobalResolution)"
                                  : "time resolution (MeasDesc_GlobalResolution)",
                     limit, field_max);
  }

  // The largest value of the field the overflows add to (T2: the time, T3: nsync).
  static std::uint64_t fieldMax(PicoQuantLayout layout) {
    switch (layout) {
      case PicoQuantLayout::PicoHarpT2:
        return 0x0FFFFFFF;
      case PicoQuantLayout::PicoHarpT3:
        return 0xFFFF;
      case PicoQuantLayout::HydraHarpV1T2:
      case PicoQuantLayout::GenericT2:
        return 0x1FFFFFF;
      case PicoQuantLayout::HydraHarpV1T3:
      case PicoQuantLayout::GenericT3:
        break;
    }
    return 0x3FF;
  }

  // T2: whether the unit is whole; T3: whether the sync period and the dtime unit are.
  template <PicoQuantLayout kLayout>
  static Run runOf(bool whole_global, bool whole_dtime) {
    if constexpr (kLayout == PicoQuantLayout::PicoHarpT2 ||
                  kLayout == PicoQuantLayout::HydraHarpV1T2 ||
                  kLayout == PicoQuantLayout::GenericT2) {
      return whole_global ? &PicoQuantDecoder::runT2<kLayout, true>
                          : &PicoQuantDecoder::runT2<kLayout, false>;
    } else if (whole_global) {
      return whole_dtime ? &PicoQuantDecoder::runT3<kLayout, true, true>
                         : &PicoQuantDecoder::runT3<kLayout, true, false>;
    } else {
      return whole_dtime ? &PicoQuantDecoder::runT3<kLayout, false, true>
                         : &PicoQuantDecoder::runT3<kLayout, false, false>;
    }
  }
  Run chooseRun() const {
    const bool whole_global = global_.whole() != 0;
    const bool whole_dtime = dtime_.whole() != 0;
    switch (layout_) {
      case PicoQuantLayout::PicoHarpT2:
        return runOf<PicoQuantLayout::PicoHarpT2>(whole_global, whole_dtime);
      case PicoQuantLayout::PicoHarpT3:
        return runOf<PicoQuantLayout::PicoHarpT3>(whole_global, whole_dtime);
      case PicoQuantLayout::HydraHarpV1T2:
        return runOf<PicoQuantLayout::HydraHarpV1T2>(whole_global, whole_dtime);
      case PicoQuantLayout::HydraHarpV1T3:
        return runOf<PicoQuantLayout::HydraHarpV1T3>(whole_global, whole_dtime);
      case PicoQuantLayout::GenericT2:
        return runOf<PicoQuantLayout::GenericT2>(whole_global, whole_dtime);
      case PicoQuantLayout::GenericT3:
        break;
    }
    return runOf<PicoQuantLayout::GenericT3>(whole_global, whole_dtime);
  }

  // The head of a photon's tag by the record's top bits (T2: 4-bit channel, or the special
  // bit and the 6-bit channel; T3: the channel), made once for the decoder's channel map.
  static std::array<std::uint64_t, 128> photonHeads(PicoQuantLayout layout,
                                                    VendorChannelMap channels) {
    std::array<std::uint64_t, 128> heads{};
    // Codes a file cannot hold may map outside the channels (openVendorFile checks the map for
    // the codes it can): their heads are computed without overflow and never used.
    const auto input = [&](channel_t code) {
      return static_cast<channel_t>(std::int64_t{channels.first_input} + code);
    };
    for (channel_t code = 0; code < 128; ++code) {
      channel_t channel = input(code);
      if (layout == PicoQuantLayout::PicoHarpT2) {
        // Input 0 of a PicoHarp is its sync input; the detector inputs are numbered from 1.
        channel = code == 0 ? channels.sync : input(code - 1);
      } else if (layout == PicoQuantLayout::PicoHarpT3) {
        // PicoHarp numbers its inputs 1..4 in T3 records.
        channel = input(code - 1);
      } else if (!isT3(layout) && code == 64) {
        channel = channels.sync;  // a special record on channel 0: a sync in T2
      }
      heads[static_cast<std::size_t>(code)] = timeTagHead(channel);
    }
    return heads;
  }

  // The overflows keep every count within the unit's limit (see addOverflows()): no record's
  // time is checked against it.
  template <PicoQuantLayout kLayout, bool kWhole>
  Tag* runT2(const std::uint8_t* records, std::size_t count, std::uint64_t first_index,
             timestamp_t floor, Tag* out) {
    const UnitScale scale = global_;  // copies: see the class comment
    const std::uint64_t unit = scale.whole();
    const std::uint64_t* const heads = heads_.data();
    std::uint64_t overflow = overflow_;
    timestamp_t bound = bound_;
    timestamp_t last = last_;
    const std::uint8_t* const end = records + 4 * count;
    for (const std::uint8_t* record = records; record != end; record += 4) {
      const std::uint32_t word = wordAt(record);
      std::uint32_t field;
      std::uint32_t code;
      bool special;
      if constexpr (kLayout == PicoQuantLayout::PicoHarpT2) {
        field = word & 0x0FFFFFFF;
        code = word >> 28;
        special = code == 0xF;
      } else {
        // The special bit and the channel: sync records (special channel 0, 64 here) can be as
        // many as the photons, so they stay in the loop.
        field = word & 0x1FFFFFF;
        code = word >> 25;
        special = code > 64;
      }
      if (special) [[unlikely]] {
        overflow_ = overflow;
        bound_ = bound;
        last_ = last;
        const std::uint64_t index = first_index + static_cast<std::uint64_t>(record - records) / 4;
        out = kLayout == PicoQuantLayout::PicoHarpT2
                  ? picoHarpT2Special(field, index, floor, out)
                  : hydraHarpT2Special(code & 0x3F, field, index, floor, out);
        overflow = overflow_;
        bound = bound_;
        last = last_;
        continue;
      }
      if constexpr (kLayout == PicoQuantLayout::PicoHarpT2) {
        // PicoHarp T2 photons are on channels 0 (its sync input) to 4.
        if (code > 4) [[unlikely]] {
          throwIllegalChannel(first_index + static_cast<std::uint64_t>(record - records) / 4, code);
        }
      }
      const std::uint64_t units = overflow + field;
      const timestamp_t time = kWhole ? static_cast<timestamp_t>(units * unit) : scale(units);
      if (time < last) [[unlikely]] {
        const std::uint64_t index = first_index + static_cast<std::uint64_t>(record - records) / 4;
        if (time < bound) throwT2Backwards(index, "photon", time, bound);
        if (time < floor) throwDisorder(index, time, floor);
        unordered_ = true;
      }
      storeTimeTag(out++, heads[code], time);
      last = time;
      // The latest photon's, so that the bound never moves back.
      bound = std::max(bound, time - kT2MarkerSlackPs);
    }
    overflow_ = overflow;
    bound_ = bound;
    last_ = last;
    return out;
  }

  // A whole term of the photon's time adds to the other's rounded value unchanged; only when
  // neither is whole are the two exact products summed before rounding.
  template <PicoQuantLayout kLayout, bool kWholeSync, bool kWholeDtime>
  Tag* runT3(const std::uint8_t* records, std::size_t count, std::uint64_t first_index,
             timestamp_t floor, Tag* out) {
    const UnitScale sync_scale = global_;  // copies: see the class comment
    const UnitScale dtime_scale = dtime_;
    const std::uint64_t period = sync_scale.whole();
    const std::uint64_t unit = dtime_scale.whole();
    const std::uint64_t* const heads = heads_.data();
    const std::uint64_t sync_head = timeTagHead(channels_.sync);
    std::uint64_t overflow = overflow_;
    std::uint64_t last_sync = last_sync_;
    std::uint64_t latest_nsync = latest_nsync_;
    timestamp_t bound = bound_;
    timestamp_t last = last_;
    const std::uint8_t* const end = records + 4 * count;
    for (const std::uint8_t* record = records; record != end; record += 4) {
      const std::uint32_t word = wordAt(record);
      std::uint32_t nsync_field;
      std::uint32_t dtime;
      std::uint32_t code;
      bool special;
      if constexpr (kLayout == PicoQuantLayout::PicoHarpT3) {
        nsync_field = word & 0xFFFF;
        dtime = (word >> 16) & 0xFFF;
        code = word >> 28;
        special = code == 0xF;
      } else {
        nsync_field = word & 0x3FF;
        dtime = (word >> 10) & 0x7FFF;
        code = word >> 25;
        special = code >= 64;
      }
      if (special) [[unlikely]] {
        overflow_ = overflow;
        latest_nsync_ = latest_nsync;
        bound_ = bound;
        last_ = last;
        const std::uint64_t index = first_index + static_cast<std::uint64_t>(record - records) / 4;
        out = kLayout == PicoQuantLayout::PicoHarpT3
                  ? picoHarpT3Special(nsync_field, dtime, index, floor, out)
                  : hydraHarpT3Special(code & 0x3F, nsync_field, index, floor, out);
        overflow = overflow_;
        latest_nsync = latest_nsync_;
        bound = bound_;
        last = last_;
        continue;
      }
      if constexpr (kLayout == PicoQuantLayout::PicoHarpT3) {
        // PicoHarp T3 photons are on channels 1 to 4.
        if (code - 1 > 3) [[unlikely]] {
          throwIllegalChannel(first_index + static_cast<std::uint64_t>(record - records) / 4, code);
        }
      }
      const std::uint64_t nsync = overflow + nsync_field;
      // Records are written in the order of their sync periods: one from an earlier period
      // than the record before it is damage, not a disorder to sort (photons of one period,
      // whose dtimes follow no order, are sorted).
      if (nsync < latest_nsync) [[unlikely]] {
        throwT3Backwards(first_index + static_cast<std::uint64_t>(record - records) / 4, nsync,
                         latest_nsync);
      }
      latest_nsync = nsync;
      timestamp_t sync_time;
      timestamp_t time;
      if constexpr (kWholeSync && kWholeDtime) {
        sync_time = static_cast<timestamp_t>(nsync * period);
        time = sync_time + static_cast<timestamp_t>(dtime * unit);
      } else if constexpr (kWholeSync) {
        sync_time = static_cast<timestamp_t>(nsync * period);
        time = sync_time + dtime_scale(dtime);
      } else if constexpr (kWholeDtime) {
        sync_time = sync_scale(nsync);
        time = sync_time + static_cast<timestamp_t>(dtime * unit);
      } else {
        const UnitScale::Wide sync = sync_scale.exactly(nsync);
        sync_time = UnitScale::rounded(sync);
        time = UnitScale::rounded(sync + dtime_scale.exactly(dtime));
      }
      // The sync tag is stored for every photon and kept for its sync period's first.
      timestamp_t first = time;
      const std::uint64_t kept = keepSync(nsync, last_sync, sync_time, first, bound);
      if (first < last) [[unlikely]] {
        if (first < floor) {
          throwDisorder(first_index + static_cast<std::uint64_t>(record - records) / 4, first,
                        floor);
        }
        unordered_ = true;
      }
      storeTimeTag(out, sync_head, sync_time);
      out += kept;
      storeTimeTag(out++, heads[code], time);
      last = time;
      last_sync = nsync;
    }
    overflow_ = overflow;
    last_sync_ = last_sync;
    latest_nsync_ = latest_nsync;
    bound_ = bound;
    last_ = last;
    return out;
  }

  // The rare records, on the members.
  Tag* emitMarkers(std::uint32_t bits, timestamp_t time, std::uint64_t index, timestamp_t floor,
                   Tag* out) {
    if (time < last_) {
      if (time < floor) throwDisorder(index, time, floor);
      unordered_ = true;
    }
    last_ = time;
    for (channel_t bit = 0; bits != 0; ++bit, bits >>= 1) {
      if ((bits & 1) != 0) storeTimeTag(out++, timeTagHead(channels_.first_marker + bit), time);
    }
    return out;
  }
  // A T2 marker may lie up to kT2MarkerSlackPs before the latest photon, no further.
  Tag* t2Marker(std::uint32_t bits, timestamp_t time, std::uint64_t index, timestamp_t floor,
                Tag* out) {
    if (time < bound_) throwT2Backwards(index, "marker", time, bound_);
    return emitMarkers(bits, time, index, floor, out);
  }
  // A T3 marker is stamped with its sync period, which may not be earlier than the last
  // record's either.
  Tag* t3Marker(std::uint32_t bits, std::uint32_t nsync_field, std::uint64_t index,
                timestamp_t floor, Tag* out) {
    const std::uint64_t nsync = overflow_ + nsync_field;
    if (nsync < latest_nsync_) throwT3Backwards(index, nsync, latest_nsync_);
    latest_nsync_ = nsync;
    const timestamp_t sync = global_(nsync);
    out = emitMarkers(bits, sync, index, floor, out);
    bound_ = std::max(bound_, sync);
    return out;
  }
  // Every count of units (T2) or sync periods (T3) a record can make, overflow_ + field, stays
  // within the unit's limit: an overflow that would take the largest past it is the error.
  void addOverflows(std::uint64_t more, std::uint64_t index) {
    if (more > global_.maxCount() - field_max_ - overflow_) {
      throw DataError(fmt::format(
          "record {}: its overflows take the time to {:.6g} ps (valid: below {:.6g} ps, about {} "
          "days)",
          index, static_cast<double>(static_cast<long double>(overflow_ + more) * global_.exact()),
          static_cast<double>(isT3(layout_) ? kTimeLimitPs / 2 : kTimeLimitPs),
          isT3(layout_) ? 26 : 53));
    }
    overflow_ += more;
  }
  Tag* picoHarpT2Special(std::uint32_t field, std::uint64_t index, timestamp_t floor, Tag* out) {
    const std::uint32_t markers = field & 0xF;
    if (markers == 0) {
      addOverflows(kPicoHarpT2Wrap, index);
      return out;
    }
    return t2Marker(markers, global_(overflow_ + field), index, floor, out);
  }
  Tag* picoHarpT3Special(std::uint32_t nsync_field, std::uint32_t dtime, std::uint64_t index,
                         timestamp_t floor, Tag* out) {
    const std::uint32_t markers = dtime & 0xF;
    if (markers == 0) {
      addOverflows(kPicoHarpT3Wrap, index);
      return out;
    }
    return t3Marker(markers, nsync_field, index, floor, out);
  }
  Tag* hydraHarpT2Special(std::uint32_t code, std::uint32_t field, std::uint64_t index,
                          timestamp_t floor, Tag* out) {
    if (code == 0x3F) {
      addOverflows(layout_ == PicoQuantLayout::GenericT2 ? kGenericT2Wrap * (field == 0 ? 1 : field)
                                                         : kHydraHarpV1T2Wrap,
                   index);
      return out;
    }
    if (code > 15) throwUndefinedSpecial(index, code);
    return t2Marker(code, global_(overflow_ + field), index, floor, out);
  }
  Tag* hydraHarpT3Special(std::uint32_t code, std::uint32_t nsync_field, std::uint64_t index,
                          timestamp_t floor, Tag* out) {
    if (code == 0x3F) {
      const bool counted = layout_ == PicoQuantLayout::GenericT3 && nsync_field != 0;
      addOverflows(kHydraHarpT3Wrap * (counted ? nsync_field : 1), index);
      return out;
    }
    if (code == 0 || code > 15) throwUndefinedSpecial(index, code);
    return t3Marker(code, nsync_field, index, floor, out);
  }

  // The errors of records that the format does not allow, as PicoQuant's own readers treat them.
  [[noreturn]] void throwIllegalChannel(std::uint64_t index, std::uint32_t code) const {
    throw DataError(
        fmt::format("record {}: a PicoHarp {} record on channel {}, which the format "
                    "does not define (valid: {}, and 15 for special records)",
                    index, isT3(layout_) ? "T3" : "T2", code, isT3(layout_) ? "1..4" : "0..4"));
  }
  [[noreturn]] void throwUndefinedSpecial(std::uint64_t index, std::uint32_t code) const {
    throw DataError(fmt::format(
        "record {}: a special record on channel {}, which the format does not define (valid: "
        "{}1..15 markers, 63 overflow)",
        index, code, isT3(layout_) ? "" : "0 sync, "));
  }
  [[noreturn]] static void throwT3Backwards(std::uint64_t index, std::uint64_t nsync,
                                            std::uint64_t previous) {
    throw DataError(fmt::format(
        "record {}: sync period {} (nsync with its overflows) is before the previous record's "
        "{}: T3 records go back in time (valid: nsync >= {})",
        index, nsync, previous, previous));
  }
  [[noreturn]] static void throwT2Backwards(std::uint64_t index, std::string_view what,
                                            timestamp_t time, timestamp_t bound) {
    throw DataError(fmt::format(
        "record {}: a {} at {} ps, more than {} ps before the latest photon before it at {} ps: "
        "T2 records go back in time (valid: at or after {} ps)",
        index, what, time, kT2MarkerSlackPs, bound + kT2MarkerSlackPs, bound));
  }

  PicoQuantLayout layout_;
  VendorChannelMap channels_;
  std::uint64_t field_max_;
  UnitScale global_;
  UnitScale dtime_;
  std::array<std::uint64_t, 128> heads_;
  Run run_;
  std::uint64_t overflow_ = 0;  // in time units (T2) or sync periods (T3)
  std::uint64_t last_sync_ = ~std::uint64_t{0};
  std::uint64_t latest_nsync_ = 0;  // of the last T3 record with a sync period
  timestamp_t bound_ = std::numeric_limits<timestamp_t>::min();
  // Of the run being decoded: the last tag's time, and whether one was earlier than the last.
  timestamp_t last_ = 0;
  bool unordered_ = false;
};

}  // namespace

bool isT3(PicoQuantLayout layout) {
  return layout == PicoQuantLayout::PicoHarpT3 || layout == PicoQuantLayout::HydraHarpV1T3 ||
         layout == PicoQuantLayout::GenericT3;
}

std::string_view layoutName(PicoQuantLayout layout) {
  switch (layout) {
    case PicoQuantLayout::PicoHarpT2:
      return "PicoHarp T2";
    case PicoQuantLayout::PicoHarpT3:
      return "PicoHarp T3";
    case PicoQuantLayout::HydraHarpV1T2:
      return "HydraHarp V1 T2";
    case PicoQuantLayout::HydraHarpV1T3:
      return "HydraHarp V1 T3";
    case PicoQuantLayout::GenericT2:
      return "generic T2";
    case PicoQuantLayout::GenericT3:
      return "generic T3";
  }
  return "unknown";
}

const PicoQuantRecordType* findPicoQuantRecordType(std::uint32_t code) {
  for (const auto& type : kRecordTypes) {
    if (type.code == code) return &type;
  }
  return nullptr;
}

std::unique_ptr<RecordDecoder> makePicoQuantDecoder(PicoQuantLayout layout, PicoQuantTiming timing,
                                                    VendorChannelMap channels) {
  return std::make_unique<PicoQuantDecoder>(layout, timing, channels);
}

}  // namespace tagflow
