// The record layouts, the first record and the .set file follow B&H's SPC_data_file_structure.h
// (shipped with SPCM; sections "FIFO Data Files"); the macrotime clock's sources follow B&H's
// FIFO example (the clock written to the first record: the internal 50 ns or 25 ns, or the
// sync period when MACRO_TIME_CLK is set).
#include "tagflow/io/vendor/becker_hickl_spc.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "tagflow/core/error.hpp"
#include "tagflow/io/vendor/header_bytes.hpp"

namespace tagflow {

namespace {

enum class Layout { Spc130, Spc600Wide, Spc600Narrow };

struct LayoutInfo {
  Layout layout;
  std::string_view option;  // its SpcOptions::layout value
  std::string_view name;
  std::size_t record_bytes;
  std::uint64_t wrap;   // macrotime periods per overflow
  std::uint32_t codes;  // ADC codes
};

constexpr std::array kLayouts{
    LayoutInfo{Layout::Spc130, "130", "SPC-130 layout", 4, std::uint64_t{1} << 12, 4096},
    LayoutInfo{Layout::Spc600Wide, "600-4096", "SPC-600/630 4096-channel layout", 6,
               std::uint64_t{1} << 24, 4096},
    LayoutInfo{Layout::Spc600Narrow, "600-256", "SPC-600/630 256-channel layout", 4,
               std::uint64_t{1} << 17, 256},
};

const LayoutInfo& layoutInfo(Layout layout) {
  return *std::find_if(kLayouts.begin(), kLayouts.end(),
                       [&](const LayoutInfo& info) { return info.layout == layout; });
}

enum class Family { Spc130, Spc600, Other };

// Bits 11-4 of the .set header's revision: the module. Internal macrotime clock in ns where B&H
// state it for every module of the type (SPC-140 and SPC-830 depend on the FPGA version).
struct Module {
  std::uint32_t code;
  std::string_view name;
  Family family;
  double internal_clock_ns;  // 0: not known from the type alone
};

constexpr std::array kModules{
    Module{0x20, "SPC-130", Family::Spc130, 50},     Module{0x21, "SPC-600", Family::Spc600, 50},
    Module{0x22, "SPC-630", Family::Spc600, 50},     Module{0x23, "SPC-700", Family::Other, 0},
    Module{0x24, "SPC-730", Family::Other, 0},       Module{0x25, "SPC-830", Family::Spc130, 0},
    Module{0x26, "SPC-140", Family::Spc130, 0},      Module{0x27, "SPC-930", Family::Other, 0},
    Module{0x28, "SPC-150", Family::Spc130, 25},     Module{0x29, "DPC-230", Family::Other, 0},
    Module{0x2a, "SPC-130EM", Family::Spc130, 0},    Module{0x2b, "SPC-160", Family::Spc130, 0},
    Module{0x2e, "SPC-150N", Family::Spc130, 0},     Module{0x80, "SPC-150NX", Family::Spc130, 0},
    Module{0x81, "SPC-160X", Family::Spc130, 0},     Module{0x82, "SPC-160PCIE", Family::Spc130, 0},
    Module{0x83, "SPC-130EMN", Family::Spc130, 0},   Module{0x84, "SPC-180N", Family::Spc130, 0},
    Module{0x85, "SPC-180NX", Family::Spc130, 0},    Module{0x86, "SPC-180NXX", Family::Spc130, 0},
    Module{0x87, "SPC-180N-USB", Family::Spc130, 0}, Module{0x88, "SPC-130IN", Family::Spc130, 0},
    Module{0x89, "SPC-130INX", Family::Spc130, 0},   Module{0x8a, "SPC-130INXX", Family::Spc130, 0},
    Module{0x8b, "SPC-QC-104", Family::Other, 0},    Module{0x8c, "SPC-QC-004", Family::Other, 0},
    Module{0x8d, "SPC-QC-106", Family::Other, 0},    Module{0x8e, "SPC-QC-006", Family::Other, 0},
};

const Module* findModule(std::uint32_t code) {
  for (const auto& module : kModules) {
    if (module.code == code) return &module;
  }
  return nullptr;
}

// The record flags and fields (SPC_data_file_structure.h: INVALID32, MTOV32, OVRUN32, the marker
// frame's bit 28; INVALID6_32 ...; MTOV48, OVRUN48, INVALID48).
constexpr std::uint32_t kInvalid = 1u << 31;
constexpr std::uint32_t kMtov = 1u << 30;
constexpr std::uint32_t kGap = 1u << 29;
constexpr std::uint32_t kMark = 1u << 28;
constexpr std::uint32_t kCountMask = 0x0FFFFFFF;
constexpr std::uint16_t kInvalid48 = 0x1000;
constexpr std::uint16_t kMtov48 = 0x2000;
constexpr std::uint16_t kGap48 = 0x4000;
// The first record's flags (RB_NO32, R_FILE32, M_FILE32).
constexpr std::uint32_t kRawFile = 1u << 26;
constexpr std::uint32_t kMarkerFile = 1u << 25;
// The internal macrotime clocks; any other clock of an SPC-130-layout file is the sync.
constexpr std::uint32_t kInternalClocks[] = {500, 250};  // 0.1 ns
// Tagflow's times stop at 2^63 ps; records must stay below half of it, with room for the
// microtime.
constexpr long double kTimeLimitPs = 4.6e18L;

struct SpcRecord {
  enum class Kind { Photon, Invalid, Marker, OverflowCount };
  Kind kind = Kind::Invalid;
  std::uint32_t macrotime = 0;  // within the current overflow period
  std::uint32_t routing = 0;    // the routing channel; a marker's bits
  std::uint32_t adc = 0;
  std::uint32_t count = 0;  // overflows of an OverflowCount record
  bool mtov = false;
  bool gap = false;
};

// A time unit in ps as a 64.64-bit fixed-point number, so that count * unit is exact in
// integer arithmetic and rounded once (halves up), at two multiplications a tag instead of
// 80-bit floating point, whose sum of two rounded products could round twice.
class FixedUnit {
 public:
  __extension__ using Wide = unsigned __int128;

  // From 1 ps on the 80-bit value's 64 significant bits fit exactly; below, what is cut is
  // under 2^-64 ps.
  explicit FixedUnit(long double ps)
      : integer_(static_cast<std::uint64_t>(ps)),
        fraction_(static_cast<std::uint64_t>(
            std::ldexp(ps - static_cast<long double>(static_cast<std::uint64_t>(ps)), 64))) {}
  // numerator / denominator ps, the fraction rounded up: a product that is exactly halfway
  // between two picoseconds stays at or above the half and rounds up, and no other comes
  // within the 2^-64 ps per count this adds of it.
  FixedUnit(std::uint64_t numerator, std::uint64_t denominator)
      : integer_(numerator / denominator),
        fraction_(static_cast<std::uint64_t>(
            ((static_cast<Wide>(numerator % denominator) << 64) + denominator - 1) / denominator)) {
  }
  // count * unit exactly, in units of 2^-64 ps.
  Wide times(std::uint64_t count) const {
    return static_cast<Wide>(count) * fraction_ + (static_cast<Wide>(count * integer_) << 64);
  }
  // An exact time in picoseconds, halves up: only the high half of the sum is kept, which the
  // compiler leaves in registers (taking both halves apart made it go through memory).
  static timestamp_t rounded(Wide exact) {
    return static_cast<timestamp_t>((exact + (Wide{1} << 63)) >> 64);
  }
  timestamp_t timeOf(std::uint64_t count) const { return rounded(times(count)); }

 private:
  std::uint64_t integer_;
  std::uint64_t fraction_;
};

struct SpcTiming {
  long double clock_ps;  // the macrotime period
  long double micro_ps;  // one ADC code; 0 when unknown
  FixedUnit micro;       // the same, for the arithmetic
  bool sync_tags;
};

bool isWhole(long double value) {
  return value >= 1 && std::fabs(value - std::round(value)) < 1e-6L;
}

// The common record, a photon without flags, is decoded in a loop of its own per layout (a
// template, not a switch per record) over locals rather than members (a tag stored through
// `out` could alias a member, which the compiler would then load again after every store);
// every other record (flags, markers, gaps, overflow counts) goes through parse() and
// handle() on the members. Each tag is compared with the one written before it, which starts
// at the floor: one comparison finds both a tag before the floor (an error) and a run out of
// order (sorted at its end).
class SpcDecoder final : public RecordDecoder {
 public:
  SpcDecoder(const LayoutInfo& layout, SpcTiming timing, VendorChannelMap channels)
      : layout_(layout),
        channels_(channels),
        clock_ps_(timing.clock_ps),
        micro_ps_(timing.micro_ps),
        sync_tags_(timing.sync_tags),
        whole_clock_(isWhole(clock_ps_) ? static_cast<std::int64_t>(std::round(clock_ps_)) : 0),
        max_macro_(static_cast<std::uint64_t>(
            std::min(kTimeLimitPs / clock_ps_, static_cast<long double>(1ull << 62)))),
        clock_(clock_ps_),
        micro_(timing.micro) {
    // With a clock of whole picoseconds a photon's time is its macrotime's plus its
    // microtime's, rounded alone: one look-up per ADC code, in a table of 32-bit entries (16
    // KiB for 4096 codes, which stays in the first-level cache beside the records) where the
    // largest microtime fits them, as any TAC range below 4 ms does.
    const bool table = clock_ps_ == std::floor(clock_ps_) &&
                       (micro_ps_ == 0 || micro_.timeOf(layout_.codes - 1) <= 0xFFFFFFFF);
    if (table) {
      micro_times_.resize(layout_.codes);
      for (std::uint32_t adc = 0; adc < layout_.codes; ++adc) {
        micro_times_[adc] =
            static_cast<std::uint32_t>(micro_ps_ == 0 ? 0 : micro_.timeOf(layout_.codes - 1 - adc));
      }
    }
    switch (layout_.layout) {
      case Layout::Spc130:
        run_ = table ? &SpcDecoder::run<Layout::Spc130, true>
                     : &SpcDecoder::run<Layout::Spc130, false>;
        break;
      case Layout::Spc600Wide:
        run_ = table ? &SpcDecoder::run<Layout::Spc600Wide, true>
                     : &SpcDecoder::run<Layout::Spc600Wide, false>;
        break;
      case Layout::Spc600Narrow:
        run_ = table ? &SpcDecoder::run<Layout::Spc600Narrow, true>
                     : &SpcDecoder::run<Layout::Spc600Narrow, false>;
        break;
    }
  }

  std::size_t recordBytes() const override { return layout_.record_bytes; }
  timestamp_t futureBound() const override { return bound_; }
  bool wroteSpecialTags() const override { return wrote_gap_; }

  // A GAP on the last records, which hold no time: the data lost lie after the last tag, so
  // the interval is marked from there to the stream's end, the last time the records reach
  // (the overflows they count).
  Tag* finish(Tag* out) override {
    if (!gap_pending_) return out;
    const timestamp_t begin = std::max(max_emitted_ + 1, bound_);
    const timestamp_t end = std::max(begin, macroTime(overflow_));
    out[0] = Tag{TagType::OverflowBegin, 0, 0, 0, begin};
    out[1] = Tag{TagType::OverflowEnd, 0, 0, 0, end};
    gap_pending_ = false;
    wrote_gap_ = true;
    max_emitted_ = end;
    return out + 2;
  }

  Tag* decode(const std::uint8_t* records, std::size_t count, std::uint64_t first_index,
              timestamp_t floor, Tag* out) override {
    run_begin_ = out;
    last_ = floor;
    unordered_ = false;
    Tag* const end = (this->*run_)(records, count, first_index, floor, out);
    if (unordered_) sortRun(out, end);
    if (end != out) max_emitted_ = std::max(max_emitted_, end[-1].time);
    return end;
  }

 private:
  using Run = Tag* (SpcDecoder::*)(const std::uint8_t*, std::size_t, std::uint64_t, timestamp_t,
                                   Tag*);

  template <Layout kLayout, bool kTable>
  Tag* run(const std::uint8_t* records, std::size_t count, std::uint64_t first_index,
           timestamp_t floor, Tag* out) {
    constexpr std::size_t kBytes = kLayout == Layout::Spc600Wide ? 6 : 4;
    constexpr std::uint32_t kLastCode = kLayout == Layout::Spc600Narrow ? 255 : 4095;
    // Copies: see the class comment.
    const bool micro_known = micro_ps_ != 0;
    const bool sync_tags = sync_tags_;
    const std::uint64_t max_macro = max_macro_;
    const std::int64_t whole_clock = whole_clock_;
    const FixedUnit clock = clock_;
    const FixedUnit micro_unit = micro_;
    const std::uint32_t* const micro_times = micro_times_.data();
    const std::uint64_t sync_head = timeTagHead(channels_.sync);
    const channel_t first_input = channels_.first_input;
    std::uint64_t overflow = overflow_;
    std::uint64_t last_macro = last_macro_;
    std::uint64_t last_sync = last_sync_;
    timestamp_t bound = bound_;
    timestamp_t last = last_;
    bool gap_pending = gap_pending_;
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint8_t* bytes = records + i * kBytes;
      std::uint32_t macrotime;
      std::uint32_t routing;
      std::uint32_t adc;
      bool plain;  // a photon without flags
      if constexpr (kLayout == Layout::Spc600Wide) {
        const std::uint32_t w0 = bytes[0] | (std::uint32_t{bytes[1]} << 8);
        const std::uint32_t w1 = bytes[2] | (std::uint32_t{bytes[3]} << 8);
        const std::uint32_t w2 = bytes[4] | (std::uint32_t{bytes[5]} << 8);
        plain = (w0 & (kInvalid48 | kMtov48 | kGap48)) == 0;
        adc = w0 & 0xFFF;
        macrotime = ((w1 & 0xFF) << 16) | w2;
        routing = w1 >> 8;
      } else {
        std::uint32_t word;
        std::memcpy(&word, bytes, sizeof word);  // little-endian files on a little-endian host
        if constexpr (kLayout == Layout::Spc130) {
          plain = (word & (kInvalid | kMtov | kGap | kMark)) == 0;
          macrotime = word & 0xFFF;
          routing = (word >> 12) & 0xF;
          adc = (word >> 16) & 0xFFF;
        } else {
          plain = (word & (kInvalid | kMtov | kGap)) == 0;
          adc = word & 0xFF;
          macrotime = (word >> 8) & 0x1FFFF;
          routing = (word >> 25) & 0x7;
        }
      }
      // A gap flagged on an invalid record is marked at the next record with a time.
      if (!plain || gap_pending) [[unlikely]] {
        overflow_ = overflow;
        last_macro_ = last_macro;
        last_sync_ = last_sync;
        bound_ = bound;
        last_ = last;
        out = handle(parse(bytes), first_index + i, floor, out);
        overflow = overflow_;
        last_macro = last_macro_;
        last_sync = last_sync_;
        bound = bound_;
        last = last_;
        gap_pending = gap_pending_;
        continue;
      }
      if constexpr (kLayout == Layout::Spc600Wide) checkRouting(first_index + i, routing);
      const std::uint64_t macro = overflow + macrotime;
      if (macro > max_macro) [[unlikely]] {
        throwBeyondLimit(first_index + i, macro);
      }
      timestamp_t start;
      timestamp_t photon;
      if constexpr (kTable) {
        start = static_cast<timestamp_t>(macro) * whole_clock;
        photon = start + micro_times[adc];
      } else {
        start =
            whole_clock != 0 ? static_cast<timestamp_t>(macro) * whole_clock : clock.timeOf(macro);
        photon = start;
        if (micro_known) {
          photon = FixedUnit::rounded(clock.times(macro) + micro_unit.times(kLastCode - adc));
        }
      }
      if (start < bound) [[unlikely]] {
        throwDisorder(first_index + i, start, bound);
      }
      // The sync tag is stored for every photon and kept for its period's first; without
      // sync tags the count compared is the macrotime itself, never new. (The bound is the
      // macrotime's start whatever the sync: the conditional move's copy is dropped.)
      timestamp_t first = photon;
      timestamp_t unused_bound = bound;
      const std::uint64_t kept =
          keepSync(macro, sync_tags ? last_sync : macro, start, first, unused_bound);
      // A clock that is not whole can put the photon a picosecond before its sync tag.
      if (first < last || (!kTable && photon < first)) [[unlikely]] {
        if (kept != 0 && start < floor) throwDisorder(first_index + i, start, floor);
        if (photon < floor) throwDisorder(first_index + i, photon, floor);
        unordered_ = true;
      }
      storeTimeTag(out, sync_head, start);
      out += kept;
      storeTimeTag(out++, timeTagHead(first_input + static_cast<channel_t>(routing)), photon);
      last = photon;
      bound = start;
      last_macro = macro;
      last_sync = macro;
    }
    overflow_ = overflow;
    last_macro_ = last_macro;
    last_sync_ = last_sync;
    bound_ = bound;
    last_ = last;
    return out;
  }

  SpcRecord parse(const std::uint8_t* bytes) const {
    SpcRecord record;
    if (layout_.layout == Layout::Spc600Wide) {
      // Three little-endian 16-bit words: ADC and flags; MT[23:16] and routing; MT[15:0].
      const std::uint32_t w0 = bytes[0] | (std::uint32_t{bytes[1]} << 8);
      const std::uint32_t w1 = bytes[2] | (std::uint32_t{bytes[3]} << 8);
      const std::uint32_t w2 = bytes[4] | (std::uint32_t{bytes[5]} << 8);
      record.mtov = (w0 & kMtov48) != 0;
      record.gap = (w0 & kGap48) != 0;
      // No overflow-count records here: every MTOV adds one overflow, also on an invalid one.
      record.kind = (w0 & kInvalid48) != 0 ? SpcRecord::Kind::Invalid : SpcRecord::Kind::Photon;
      record.adc = w0 & 0xFFF;
      record.macrotime = ((w1 & 0xFF) << 16) | w2;
      record.routing = w1 >> 8;
      return record;
    }
    std::uint32_t word;
    std::memcpy(&word, bytes, sizeof word);  // little-endian files on a little-endian host
    record.mtov = (word & kMtov) != 0;
    record.gap = (word & kGap) != 0;
    if (layout_.layout == Layout::Spc130 && (word & kMark) != 0) {
      record.kind = SpcRecord::Kind::Marker;
      record.macrotime = word & 0xFFF;
      record.routing = (word >> 12) & 0xF;
    } else if ((word & kInvalid) != 0 && record.mtov) {
      record.kind = SpcRecord::Kind::OverflowCount;
      record.count = word & kCountMask;
      record.mtov = false;  // the flag that makes it a count; its GAP flag is kept
    } else if ((word & kInvalid) != 0) {
      record.kind = SpcRecord::Kind::Invalid;
    } else if (layout_.layout == Layout::Spc130) {
      record.kind = SpcRecord::Kind::Photon;
      record.macrotime = word & 0xFFF;
      record.routing = (word >> 12) & 0xF;
      record.adc = (word >> 16) & 0xFFF;
    } else {
      record.kind = SpcRecord::Kind::Photon;
      record.adc = word & 0xFF;
      record.macrotime = (word >> 8) & 0x1FFFF;
      record.routing = (word >> 25) & 0x7;
    }
    return record;
  }

  Tag* handle(const SpcRecord& record, std::uint64_t index, timestamp_t floor, Tag* out) {
    // A GAP on a record without a time (invalid, or a count of overflows) is marked at the next
    // record with one, or at the end of the file (finish()).
    gap_pending_ = gap_pending_ || record.gap;
    if (record.kind == SpcRecord::Kind::OverflowCount) {
      addOverflows(record.count, index);
      // Every later record's macrotime is at least the overflows counted so far; after a gap the
      // interval that marks it begins after the last tag, before them.
      if (!gap_pending_) bound_ = std::max(bound_, macroTime(overflow_));
      return out;
    }
    if (record.mtov) addOverflows(1, index);
    if (record.kind == SpcRecord::Kind::Invalid) return out;
    std::uint64_t macro = overflow_ + record.macrotime;
    if (gap_pending_) out = markGap(macro, index, floor, out);
    if (macro > max_macro_) throwBeyondLimit(index, macro);
    const timestamp_t start = macroTime(macro);
    if (start < bound_) throwDisorder(index, start, bound_);
    bound_ = start;
    last_macro_ = macro;
    if (record.kind == SpcRecord::Kind::Marker) {
      std::uint32_t bits = record.routing;
      for (channel_t bit = 0; bits != 0; ++bit, bits >>= 1) {
        if ((bits & 1) != 0) {
          out = emit(makeTimeTag(channels_.first_marker + bit, start), index, floor, out);
        }
      }
      return out;
    }
    if (layout_.layout == Layout::Spc600Wide) checkRouting(index, record.routing);
    if (sync_tags_ && macro != last_sync_) {
      out = emit(makeTimeTag(channels_.sync, start), index, floor, out);
      last_sync_ = macro;
    }
    const std::uint32_t micro = layout_.codes - 1 - record.adc;
    return emit(makeTimeTag(channels_.first_input + static_cast<channel_t>(record.routing),
                            photonTime(macro, micro)),
                index, floor, out);
  }

  // The module's FIFO overflowed before this record: the data since the last record are lost,
  // and with them any overflow marks, so the macrotime may have fallen behind; it is advanced
  // by the fewest whole overflow periods that keep time from running backwards. The interval
  // begins after every tag written so far.
  Tag* markGap(std::uint64_t& macro, std::uint64_t index, timestamp_t floor, Tag* out) {
    if (macro < last_macro_) {
      const std::uint64_t behind = last_macro_ - macro;
      const std::uint64_t periods = (behind + layout_.wrap - 1) / layout_.wrap;
      addOverflows(periods, index);
      macro += periods * layout_.wrap;
    }
    if (macro > max_macro_) throwBeyondLimit(index, macro);
    timestamp_t max_emitted = max_emitted_;
    for (const Tag* tag = run_begin_; tag != out; ++tag) {
      max_emitted = std::max(max_emitted, tag->time);
    }
    const timestamp_t end = macroTime(macro);
    const timestamp_t begin = std::min(std::max(max_emitted + 1, bound_), end);
    out = emit(Tag{TagType::OverflowBegin, 0, 0, 0, begin}, index, floor, out);
    out = emit(Tag{TagType::OverflowEnd, 0, 0, 0, end}, index, floor, out);
    gap_pending_ = false;
    wrote_gap_ = true;
    return out;
  }

  void addOverflows(std::uint64_t periods, std::uint64_t index) {
    if (periods > (max_macro_ - overflow_) / layout_.wrap) {
      const long double reached =
          (static_cast<long double>(overflow_) +
           static_cast<long double>(periods) * static_cast<long double>(layout_.wrap)) *
          clock_ps_;
      throw DataError(
          fmt::format("record {}: its overflows take the macrotime to {} ps (valid: below {} ps)",
                      index, static_cast<double>(reached), static_cast<double>(kTimeLimitPs)));
    }
    overflow_ += periods * layout_.wrap;
  }

  // The 4096-channel layout stores the routing channel in 8 bits, but B&H's routers have at most
  // 16 channels and the channel map gives the inputs of an SPC file 16 channels (checkChannelMap
  // in vendor_formats.cpp): a larger value is damage, and would land on the sync or marker
  // channels.
  static void checkRouting(std::uint64_t index, std::uint32_t routing) {
    if (routing > 15) [[unlikely]] {
      throw DataError(fmt::format(
          "record {}: a photon on routing channel {} (valid: 0..15, the inputs a module routes)",
          index, routing));
    }
  }

  [[noreturn]] void throwBeyondLimit(std::uint64_t index, std::uint64_t macro) const {
    throw DataError(
        fmt::format("record {}: its macrotime takes the time to {} ps (valid: below {} ps)", index,
                    static_cast<double>(static_cast<long double>(macro) * clock_ps_),
                    static_cast<double>(kTimeLimitPs)));
  }

  // For macrotimes up to max_macro_.
  timestamp_t macroTime(std::uint64_t macro) const {
    if (whole_clock_ != 0) return static_cast<timestamp_t>(macro) * whole_clock_;
    return clock_.timeOf(macro);
  }

  timestamp_t photonTime(std::uint64_t macro, std::uint32_t micro) const {
    if (micro_ps_ == 0) return macroTime(macro);
    return FixedUnit::rounded(clock_.times(macro) + micro_.times(micro));
  }

  Tag* emit(const Tag& tag, std::uint64_t index, timestamp_t floor, Tag* out) {
    if (tag.time < last_) {
      if (tag.time < floor) throwDisorder(index, tag.time, floor);
      unordered_ = true;
    }
    last_ = tag.time;
    *out = tag;
    return out + 1;
  }

  const LayoutInfo& layout_;
  VendorChannelMap channels_;
  long double clock_ps_;
  long double micro_ps_;
  bool sync_tags_;
  std::int64_t whole_clock_;  // 0 when the clock is not a whole number of ps
  std::uint64_t max_macro_;
  FixedUnit clock_;
  FixedUnit micro_;
  std::vector<std::uint32_t> micro_times_;  // by ADC code, when the clock is whole
  Run run_ = nullptr;
  std::uint64_t overflow_ = 0;  // in macrotime periods
  std::uint64_t last_macro_ = 0;
  std::uint64_t last_sync_ = ~std::uint64_t{0};
  bool gap_pending_ = false;  // waits for a record with a time (none comes after the last)
  bool wrote_gap_ = false;
  timestamp_t bound_ = std::numeric_limits<timestamp_t>::min();
  timestamp_t max_emitted_ = -1;  // of the runs before the one being decoded
  // Of the run being decoded: where it began, the last tag's time, and whether a tag was
  // earlier than the one before it.
  const Tag* run_begin_ = nullptr;
  timestamp_t last_ = 0;
  bool unordered_ = false;
};

std::string doubleText(double value) {
  return fmt::format("{:.17g}", value);
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// Printable ASCII only: SPCM frames some values with control bytes (0x04).
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c >= 0x20 && c < 0x7F) out += c;
  }
  return std::string(trim(out));
}

// A .set file: a binary header (bhfile_header: the revision with the module type), the
// *IDENTIFICATION text, then *SETUP with lines "#SP [KEY,TYPE,VALUE]" between SYS_PARA_BEGIN:
// and SYS_PARA_END: (I, U, L integers, F float, B bool, S string, C character).
struct SetFile {
  std::string path;
  std::uint32_t module_code = 0;
  std::map<std::string, std::string, std::less<>> params;  // the first of each key
  HeaderFields fields;

  const std::string* param(std::string_view key) const {
    const auto it = params.find(key);
    return it == params.end() ? nullptr : &it->second;
  }
};

std::string_view setTypeName(std::string_view letter) {
  constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {"I", "int"},  {"U", "unsigned"}, {"L", "long"},     {"F", "float"},
      {"B", "bool"}, {"S", "string"},   {"C", "character"}};
  for (const auto& [code, name] : kTypes) {
    if (code == letter) return name;
  }
  return letter;
}

constexpr std::uint64_t kMaxSetBytes = std::uint64_t{1} << 24;
constexpr std::size_t kSetHeaderBytes = 42;

SetFile readSetFile(const std::string& path) {
  HeaderBytes in(path);
  if (in.fileSize() > kMaxSetBytes) {
    throw DataError(
        fmt::format("'{}' is {} bytes, more than a B&H .set file holds (valid: at most {})", path,
                    in.fileSize(), kMaxSetBytes));
  }
  SetFile set;
  set.path = path;
  const auto header = in.bytes(kSetHeaderBytes, "the .set file header (bhfile_header)");
  const std::uint32_t revision = header[0] | (std::uint32_t{header[1]} << 8);
  set.module_code = (revision >> 4) & 0xFF;
  set.fields.add("revision", "hex", fmt::format("0x{:04X}", revision));
  const auto rest =
      in.bytes(static_cast<std::size_t>(in.fileSize() - kSetHeaderBytes), "the .set file text");
  const std::string_view text(reinterpret_cast<const char*>(rest.data()), rest.size());

  // "Key : value" lines; a line without a colon continues the value before it.
  const auto ident = text.find("*IDENTIFICATION");
  if (ident != std::string_view::npos) {
    std::vector<std::pair<std::string, std::string>> entries;
    std::size_t at = text.find('\n', ident);
    while (at != std::string_view::npos) {
      const std::size_t next = text.find('\n', at + 1);
      const std::string_view line = trim(text.substr(at + 1, next - at - 1));
      at = next;
      if (line.starts_with("*END")) break;
      const auto colon = line.find(':');
      if (colon != std::string_view::npos) {
        entries.emplace_back(printable(line.substr(0, colon)), printable(line.substr(colon + 1)));
      } else if (!entries.empty() && !line.empty()) {
        entries.back().second.append(" ").append(printable(line));
      }
    }
    for (auto& [key, value] : entries) set.fields.add(key, "identification", value);
  }

  const auto begin = text.find("SYS_PARA_BEGIN:");
  if (begin == std::string_view::npos) {
    throw DataError(fmt::format(
        "'{}' is not a B&H .set file: it has no SYS_PARA_BEGIN: section after its {}-byte header",
        path, kSetHeaderBytes));
  }
  std::size_t at = text.find('\n', begin);
  while (at != std::string_view::npos) {
    const std::size_t next = text.find('\n', at + 1);
    const std::string_view line = trim(text.substr(at + 1, next - at - 1));
    at = next;
    if (line.starts_with("SYS_PARA_END:")) break;
    const auto open = line.find('[');
    const auto close = line.rfind(']');
    if (!line.starts_with("#") || open == std::string_view::npos || close <= open) continue;
    const std::string_view inner = line.substr(open + 1, close - open - 1);
    const auto comma1 = inner.find(',');
    const auto comma2 = inner.find(',', comma1 == std::string_view::npos ? 0 : comma1 + 1);
    if (comma1 == std::string_view::npos || comma2 == std::string_view::npos) continue;
    const std::string key(trim(inner.substr(0, comma1)));
    const std::string_view letter = trim(inner.substr(comma1 + 1, comma2 - comma1 - 1));
    const std::string value = printable(inner.substr(comma2 + 1));
    set.fields.add(key, std::string(setTypeName(letter)), value);
    set.params.emplace(key, value);
  }
  return set;
}

std::optional<std::string> setFilePath(const std::string& path, const SpcOptions& options) {
  if (!options.set_file.empty()) return options.set_file;
  for (const char* extension : {".set", ".SET"}) {
    std::filesystem::path candidate(path);
    candidate.replace_extension(extension);
    std::error_code ignored;
    if (std::filesystem::is_regular_file(candidate, ignored)) return candidate.string();
  }
  return std::nullopt;
}

// A number of the .set file, or nullopt when there is no .set file or the key is absent;
// DataError when it is no number.
std::optional<double> setNumber(const std::optional<SetFile>& set, std::string_view key) {
  const std::string* text = set ? set->param(key) : nullptr;
  if (text == nullptr) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || *end != '\0') {
    throw DataError(fmt::format("'{}': {} is '{}', not a number", set->path, key, *text));
  }
  return value;
}

std::string layoutChoices() {
  std::string choices = "auto";
  for (const auto& info : kLayouts) choices += fmt::format(", {}", info.option);
  return choices;
}

Layout chooseLayout(const std::string& path, std::string_view option, const Module* module,
                    const std::optional<SetFile>& set, std::uint32_t first_word,
                    HeaderFields& fields) {
  for (const auto& info : kLayouts) {
    if (info.option == option) {
      fields.add("layout", "text", fmt::format("{} (SpcOptions::layout)", info.name));
      return info.layout;
    }
  }
  const bool invalid32 = (first_word & kInvalid) != 0;
  const bool invalid48 = !invalid32 && (first_word & kInvalid48) != 0;
  if (module != nullptr && module->family == Family::Other) {
    throw DataError(fmt::format(
        "'{}': the .set file '{}' names the module {} (code 0x{:02X}), whose FIFO records "
        "tagflow does not read (readable: the SPC-130 and SPC-600/630 layouts; SpcOptions::layout "
        "chooses one)",
        path, set->path, module->name, module->code));
  }
  if (module != nullptr && module->family == Family::Spc130) {
    fields.add("layout", "text",
               fmt::format("{} (module {})", layoutInfo(Layout::Spc130).name, module->name));
    return Layout::Spc130;
  }
  if (invalid32) {
    const Layout layout = module != nullptr ? Layout::Spc600Narrow : Layout::Spc130;
    fields.add("layout", "text",
               fmt::format("{} ({})", layoutInfo(layout).name,
                           module != nullptr ? "module " + std::string(module->name)
                                             : "4-byte first record; no .set file names the "
                                               "module"));
    return layout;
  }
  if (invalid48) {
    fields.add("layout", "text",
               fmt::format("{} (6-byte first record)", layoutInfo(Layout::Spc600Wide).name));
    return Layout::Spc600Wide;
  }
  throw DataError(fmt::format(
      "'{}': the first record 0x{:08X} at byte offset 0 carries neither flag B&H software sets on "
      "it (bit 31 of a 4-byte record, bit 12 of a 6-byte one), so its layout is unknown; pass "
      "SpcOptions::layout (valid: {})",
      path, first_word, layoutChoices()));
}

}  // namespace

VendorFile openSpcFile(const std::string& path, const SpcOptions& options,
                       VendorChannelMap channels) {
  if (options.layout != "auto" &&
      std::none_of(kLayouts.begin(), kLayouts.end(),
                   [&](const LayoutInfo& info) { return info.option == options.layout; })) {
    throw InvalidArgument(
        fmt::format("SPC layout '{}' is invalid (valid: {})", options.layout, layoutChoices()));
  }
  if (!(options.macrotime_clock_ns >= 0) || !(options.macrotime_clock_ns <= 1e9)) {
    throw InvalidArgument(fmt::format(
        "SPC macrotime_clock_ns {} is invalid (valid: 0 = from the file, or > 0 and <= 1e9 ns)",
        options.macrotime_clock_ns));
  }
  HeaderBytes in(path);
  const auto first = in.bytes(4, "the first record (macrotime clock and flags)");
  std::uint32_t first_word;
  std::memcpy(&first_word, first.data(), 4);

  VendorFile file;
  HeaderFields& fields = file.header;
  std::optional<SetFile> set;
  if (const auto set_path = setFilePath(path, options)) {
    set = readSetFile(*set_path);
    fields.add("set file", "path", *set_path);
  }
  const Module* module = set ? findModule(set->module_code) : nullptr;
  if (set) {
    fields.add("module", "text",
               module != nullptr ? fmt::format("{} (code 0x{:02X})", module->name, module->code)
                                 : fmt::format("unknown (code 0x{:02X})", set->module_code));
  }
  const Layout layout = chooseLayout(path, options.layout, module, set, first_word, fields);
  const LayoutInfo& info = layoutInfo(layout);
  const bool module_fits = module == nullptr ||
                           (module->family == Family::Spc130 && layout == Layout::Spc130) ||
                           (module->family == Family::Spc600 && layout != Layout::Spc130);
  if (!module_fits) {
    file.warnings.push_back(fmt::format(
        "'{}': the .set file names the module {}, whose records are not of the {} read as asked",
        path, module->name, info.name));
  }

  std::uint32_t clock_units;  // 0.1 ns
  std::uint32_t routing_bits;
  bool flagged;
  if (layout == Layout::Spc600Wide) {
    const auto third = in.bytes(2, "the first record (macrotime clock and flags)");
    clock_units = first_word >> 16;
    routing_bits = (first_word >> 8) & 0xF;
    flagged = (first_word & kInvalid48) != 0;
    fields.add("first record", "hex",
               fmt::format("0x{:02X}{:02X}{:08X}", third[1], third[0], first_word));
  } else {
    clock_units = first_word & 0xFFFFFF;
    routing_bits = (first_word >> 27) & 0xF;
    flagged = (first_word & kInvalid) != 0;
    fields.add("first record", "hex", fmt::format("0x{:08X}", first_word));
    if ((first_word & kRawFile) != 0) {
      throw DataError(fmt::format(
          "'{}': the first record 0x{:08X} flags a raw diagnostic-mode file (bit 26), whose "
          "records do not follow the FIFO format",
          path, first_word));
    }
    if (layout == Layout::Spc130) {
      fields.add("markers enabled", "bool", (first_word & kMarkerFile) != 0 ? "true" : "false");
    }
  }
  if (!flagged) {
    file.warnings.push_back(fmt::format(
        "'{}': the first record lacks the INVALID flag B&H software sets on it; the file may not "
        "be a FIFO file of the {}",
        path, info.name));
  }
  fields.add("routing bits", "int", std::to_string(routing_bits));

  // The macrotime clock: the option, the first record, or the internal clock the .set names.
  const std::optional<double> mtclk = setNumber(set, "SP_MTCLK");
  long double clock_ps = 0;
  std::string source;
  if (options.macrotime_clock_ns > 0) {
    clock_ps = static_cast<long double>(options.macrotime_clock_ns) * 1000;
    source = "SpcOptions::macrotime_clock_ns";
  } else if (clock_units != 0) {
    clock_ps = static_cast<long double>(clock_units) * 100;
    source = "first record";
  } else if (mtclk && *mtclk == 0 && module != nullptr && module->internal_clock_ns > 0) {
    clock_ps = static_cast<long double>(module->internal_clock_ns) * 1000;
    source = fmt::format(".set file: the internal clock of the {} (SP_MTCLK = 0)", module->name);
  } else {
    const std::string why =
        !set          ? "there is no .set file"
        : !mtclk      ? "the .set file has no SP_MTCLK"
        : *mtclk != 0 ? "the .set file's SP_MTCLK says the sync, whose period it lacks"
        : module == nullptr
            ? "the .set file's module type is unknown"
            : fmt::format("the {}'s internal clock depends on its FPGA version", module->name);
    throw DataError(fmt::format(
        "'{}': the macrotime clock is missing: the first record's clock field (bits 0-23 at byte "
        "offset 0) is 0 and {}; pass SpcOptions::macrotime_clock_ns (the clock period in ns)",
        path, why));
  }
  fields.add("macrotime clock", "float (ps)", doubleText(static_cast<double>(clock_ps)));
  fields.add("macrotime clock source", "text", source);

  // Sync tags where the macrotime clock is the sync itself.
  bool sync_tags = false;
  std::string sync_reason = "the macrotime is the module's internal clock (SPC-600/630 layout)";
  if (layout == Layout::Spc130) {
    if (mtclk) {
      sync_tags = *mtclk == 1;
      sync_reason =
          sync_tags
              ? "the macrotime clock is the sync (.set SP_MTCLK = 1)"
              : fmt::format("the macrotime clock is not the sync (.set SP_MTCLK = {})", *mtclk);
    } else {
      const long double units = clock_ps / 100;
      sync_tags = std::none_of(std::begin(kInternalClocks), std::end(kInternalClocks),
                               [&](std::uint32_t internal) { return units == internal; });
      sync_reason = sync_tags ? "the clock is none of the internal 50 ns and 25 ns: the sync"
                              : "the clock is an internal one (50 ns or 25 ns)";
    }
  }
  fields.add("sync tags", "bool", sync_tags ? "true" : "false");
  fields.add("sync tags reason", "text", sync_reason);

  // The microtime unit: the TAC range over its gain, spread over the ADC codes of the records.
  long double micro_ps = 0;
  FixedUnit micro(0.0L);
  const std::optional<double> tac_range = setNumber(set, "SP_TAC_R");
  const std::optional<double> tac_gain = setNumber(set, "SP_TAC_G");
  const std::optional<double> adc = setNumber(set, "SP_ADC_RE");
  if (tac_range && tac_gain) {
    if (!(*tac_range > 0) || !(*tac_range < 1)) {
      throw DataError(fmt::format("'{}': SP_TAC_R {} s is invalid (valid: > 0 and < 1 s)",
                                  set->path, *tac_range));
    }
    if (!(*tac_gain >= 1) || !(*tac_gain <= 1000)) {
      throw DataError(
          fmt::format("'{}': SP_TAC_G {} is invalid (valid: 1..1000)", set->path, *tac_gain));
    }
    const long double range_ps = static_cast<long double>(*tac_range) * 1e12L;
    micro_ps = range_ps / static_cast<long double>(*tac_gain) / info.codes;
    // The .set file states range and gain as decimals (5.0e-08, 4); when both are whole (the
    // range in ps) the unit is their exact ratio, so that a photon exactly halfway between two
    // picoseconds rounds up, as the decimals say, not as their binary approximations would
    // (5.0e-08 is 4.99999999999999977e-08 as a double).
    if (isWhole(range_ps) && isWhole(*tac_gain)) {
      micro = FixedUnit(static_cast<std::uint64_t>(std::round(range_ps)),
                        static_cast<std::uint64_t>(std::round(*tac_gain)) * info.codes);
    } else {
      micro = FixedUnit(micro_ps);
    }
    fields.add("microtime unit", "float (ps)", doubleText(static_cast<double>(micro_ps)));
    if (adc && *adc != info.codes) {
      file.warnings.push_back(fmt::format(
          "'{}': SP_ADC_RE is {} but the records hold {} ADC codes; the microtime unit assumes "
          "B&H's full-scale codes (TAC range / gain / {})",
          set->path, *adc, info.codes, info.codes));
    }
  } else {
    fields.add("microtime unit", "text", "unknown");
    file.warnings.push_back(fmt::format(
        "'{}': {}, so the microtime unit is unknown: photons are placed at their macrotime; "
        "SpcOptions::set_file names a .set file",
        path, set ? "the .set file lacks SP_TAC_R or SP_TAC_G" : "there is no .set file"));
  }

  file.path = path;
  file.format = fmt::format("B&H FIFO ({})", info.name);
  file.file_size = in.fileSize();
  file.data_offset = info.record_bytes;
  file.records = (file.file_size - file.data_offset) / info.record_bytes;
  if (set) {
    for (const auto& field : set->fields.fields()) {
      file.header.add(field.name, field.type, field.value);
    }
  }
  file.decoder =
      std::make_unique<SpcDecoder>(info, SpcTiming{clock_ps, micro_ps, micro, sync_tags}, channels);
  return file;
}

}  // namespace tagflow
