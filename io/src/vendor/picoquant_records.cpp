#include "tagflow/io/vendor/picoquant_records.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstring>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

constexpr std::uint64_t kPicoHarpT2Wrap = 210698240;
constexpr std::uint64_t kPicoHarpT3Wrap = 65536;
constexpr std::uint64_t kHydraHarpV1T2Wrap = 33552000;
constexpr std::uint64_t kGenericT2Wrap = 33554432;
constexpr std::uint64_t kHydraHarpT3Wrap = 1024;
// How far a T2 marker may lie before the photon recorded ahead of it: markers are stamped
// with a coarser resolution than photons (PicoHarp keeps the marker bits in the time's low
// bits).
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

// A count of units in picoseconds, the exact value rounded to the nearest picosecond. A unit
// within 1e-6 ps of a whole number is that whole number: headers store 4 ps as
// 4.000000000000001e-12 s, float noise of a whole value, and whole units need no rounding.
class UnitScale {
 public:
  UnitScale(double unit_s, std::string_view what) {
    if (!(unit_s > 0) || !std::isfinite(unit_s) || unit_s > 1e3) {
      throw InvalidArgument(
          fmt::format("{} {} s is invalid (valid: > 0 and <= 1000 s)", what, unit_s));
    }
    exact_ = static_cast<long double>(unit_s) * 1e12L;
    const long double nearest = std::round(exact_);
    if (std::fabs(exact_ - nearest) < 1e-6L && nearest >= 1) {
      whole_ = static_cast<std::int64_t>(nearest);
      exact_ = nearest;
    }
  }
  long double exact() const { return exact_; }
  std::int64_t whole() const { return whole_; }  // 0 when not whole
  timestamp_t operator()(std::uint64_t count) const {
    if (whole_ != 0) return static_cast<timestamp_t>(count) * whole_;
    return static_cast<timestamp_t>(std::llround(static_cast<long double>(count) * exact_));
  }

 private:
  long double exact_ = 0;
  std::int64_t whole_ = 0;
};

std::uint32_t wordAt(const std::uint8_t* record) {
  std::uint32_t word;
  std::memcpy(&word, record, sizeof word);
  return word;  // little-endian files on a little-endian host
}

class PicoQuantDecoder final : public RecordDecoder {
 public:
  PicoQuantDecoder(PicoQuantLayout layout, PicoQuantTiming timing, VendorChannelMap channels)
      : layout_(layout),
        channels_(channels),
        global_(timing.global_resolution_s, isT3(layout)
                                                ? "sync period (MeasDesc_GlobalResolution)"
                                                : "time resolution (MeasDesc_GlobalResolution)"),
        dtime_(isT3(layout) ? timing.resolution_s : timing.global_resolution_s,
               "dtime resolution (MeasDesc_Resolution)") {}

  std::size_t recordBytes() const override { return 4; }
  timestamp_t futureBound() const override { return bound_; }

  void decode(const std::uint8_t* records, std::size_t count, std::uint64_t first_index,
              timestamp_t floor, std::vector<Tag>& out) override {
    out_ = &out;
    floor_ = floor;
    for (std::size_t i = 0; i < count; ++i) {
      index_ = first_index + i;
      const std::uint32_t word = wordAt(records + 4 * i);
      switch (layout_) {
        case PicoQuantLayout::PicoHarpT2:
          picoHarpT2(word);
          break;
        case PicoQuantLayout::PicoHarpT3:
          picoHarpT3(word);
          break;
        case PicoQuantLayout::HydraHarpV1T2:
          hydraHarpT2(word, false);
          break;
        case PicoQuantLayout::HydraHarpV1T3:
          hydraHarpT3(word, false);
          break;
        case PicoQuantLayout::GenericT2:
          hydraHarpT2(word, true);
          break;
        case PicoQuantLayout::GenericT3:
          hydraHarpT3(word, true);
          break;
      }
    }
  }

 private:
  void emit(channel_t channel, timestamp_t time) {
    if (time < floor_) throwDisorder(index_, time, floor_);
    out_->push_back(makeTimeTag(channel, time));
  }
  void emitMarkers(std::uint32_t bits, timestamp_t time) {
    for (channel_t bit = 0; bits != 0; ++bit, bits >>= 1) {
      if ((bits & 1) != 0) emit(channels_.first_marker + bit, time);
    }
  }
  void t2Event(channel_t channel, std::uint64_t units) {
    const timestamp_t time = global_(units);
    emit(channel, time);
    bound_ = time - kT2MarkerSlackPs;
  }
  void t2Marker(std::uint32_t bits, std::uint64_t units) { emitMarkers(bits, global_(units)); }
  timestamp_t syncTime(std::uint64_t nsync) const { return global_(nsync); }
  void t3Photon(channel_t channel, std::uint64_t nsync, std::uint32_t dtime) {
    const timestamp_t sync = syncTime(nsync);
    if (nsync != last_sync_) {
      emit(channels_.sync, sync);
      last_sync_ = nsync;
      bound_ = sync;
    }
    timestamp_t time;
    if (global_.whole() != 0 && dtime_.whole() != 0) {
      time = sync + static_cast<timestamp_t>(dtime) * dtime_.whole();
    } else {
      time =
          static_cast<timestamp_t>(std::llround(static_cast<long double>(nsync) * global_.exact() +
                                                static_cast<long double>(dtime) * dtime_.exact()));
    }
    emit(channel, time);
  }
  void t3Marker(std::uint32_t bits, std::uint64_t nsync) {
    const timestamp_t sync = syncTime(nsync);
    emitMarkers(bits, sync);
    bound_ = std::max(bound_, sync);
  }

  void picoHarpT2(std::uint32_t word) {
    const std::uint32_t time = word & 0x0FFFFFFF;
    const std::uint32_t channel = word >> 28;
    if (channel == 0xF) {
      const std::uint32_t markers = time & 0xF;
      if (markers == 0) {
        overflow_ += kPicoHarpT2Wrap;
      } else {
        t2Marker(markers, overflow_ + time);
      }
      return;
    }
    // Input 0 of a PicoHarp is its sync input; the detector inputs are numbered from 1.
    t2Event(
        channel == 0 ? channels_.sync : channels_.first_input + static_cast<channel_t>(channel) - 1,
        overflow_ + time);
  }
  void picoHarpT3(std::uint32_t word) {
    const std::uint32_t nsync = word & 0xFFFF;
    const std::uint32_t dtime = (word >> 16) & 0xFFF;
    const std::uint32_t channel = word >> 28;
    if (channel == 0xF) {
      const std::uint32_t markers = dtime & 0xF;
      if (markers == 0) {
        overflow_ += kPicoHarpT3Wrap;
      } else {
        t3Marker(markers, overflow_ + nsync);
      }
      return;
    }
    // PicoHarp numbers its inputs 1..4 in T3 records.
    t3Photon(channels_.first_input + static_cast<channel_t>(channel) - 1, overflow_ + nsync, dtime);
  }
  void hydraHarpT2(std::uint32_t word, bool counted_overflows) {
    const std::uint32_t time = word & 0x1FFFFFF;
    const std::uint32_t channel = (word >> 25) & 0x3F;
    if ((word >> 31) == 0) {
      t2Event(channels_.first_input + static_cast<channel_t>(channel), overflow_ + time);
      return;
    }
    if (channel == 0x3F) {
      if (!counted_overflows) {
        overflow_ += kHydraHarpV1T2Wrap;
      } else {
        overflow_ += kGenericT2Wrap * (time == 0 ? 1 : time);
      }
    } else if (channel == 0) {
      t2Event(channels_.sync, overflow_ + time);
    } else if (channel <= 15) {
      t2Marker(channel, overflow_ + time);
    }
  }
  void hydraHarpT3(std::uint32_t word, bool counted_overflows) {
    const std::uint32_t nsync = word & 0x3FF;
    const std::uint32_t dtime = (word >> 10) & 0x7FFF;
    const std::uint32_t channel = (word >> 25) & 0x3F;
    if ((word >> 31) == 0) {
      t3Photon(channels_.first_input + static_cast<channel_t>(channel), overflow_ + nsync, dtime);
      return;
    }
    if (channel == 0x3F) {
      overflow_ += kHydraHarpT3Wrap * (counted_overflows && nsync != 0 ? nsync : 1);
    } else if (channel >= 1 && channel <= 15) {
      t3Marker(channel, overflow_ + nsync);
    }
  }

  PicoQuantLayout layout_;
  VendorChannelMap channels_;
  UnitScale global_;
  UnitScale dtime_;
  std::uint64_t overflow_ = 0;  // in time units (T2) or sync periods (T3)
  std::uint64_t last_sync_ = ~std::uint64_t{0};
  timestamp_t bound_ = std::numeric_limits<timestamp_t>::min();
  std::vector<Tag>* out_ = nullptr;
  timestamp_t floor_ = 0;
  std::uint64_t index_ = 0;
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
