// The records of PicoQuant's time-tagging files (PTU and the legacy .pt2/.pt3/.ht2/.ht3): one
// 32-bit word each, in six layouts that cover the twelve record types of PTU files.
//
// T2: a tag's time is the record's time field plus the overflows counted so far, in units of
// the global resolution. T3: a record holds a sync count (plus overflows) and a start-stop time
// `dtime`; the photon's time is nsync * sync period + dtime * resolution, each time the exact
// value rounded to the nearest picosecond, and one sync tag is emitted at nsync * sync period
// for every sync period that holds a photon. Markers carry a bit mask: one tag per bit set.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "tagflow/io/vendor/record_decoder.hpp"

namespace tagflow {

enum class PicoQuantLayout {
  PicoHarpT2,     // 4-bit channel, 28-bit time, overflow every 210698240 units
  PicoHarpT3,     // 4-bit channel, 12-bit dtime, 16-bit nsync
  HydraHarpV1T2,  // special bit, 6-bit channel, 25-bit time, one overflow per record
  HydraHarpV1T3,  // special bit, 6-bit channel, 15-bit dtime, 10-bit nsync
  GenericT2,      // HydraHarp V2, TimeHarp 260 N/P, MultiHarp, PicoHarp 330: counted overflows
  GenericT3,
};

bool isT3(PicoQuantLayout layout);
std::string_view layoutName(PicoQuantLayout layout);

// The layout of a PTU record type (TTResultFormat_TTTRRecType) and the instrument's name;
// false for a type that is none of the twelve.
struct PicoQuantRecordType {
  std::uint32_t code;
  PicoQuantLayout layout;
  std::string_view instrument;  // "PicoHarp 300 T2", ...
};
const PicoQuantRecordType* findPicoQuantRecordType(std::uint32_t code);

struct PicoQuantTiming {
  double global_resolution_s;  // T2: the time unit; T3: the sync period
  double resolution_s;         // T3: the dtime unit
  // When not 0, the global unit is exactly 1 / global_rate_hz s: the legacy T3 headers give
  // the sync rate, a whole number, and its reciprocal as a double is not the period.
  std::uint32_t global_rate_hz = 0;
};

// Throws InvalidArgument naming a resolution that is not positive and finite.
std::unique_ptr<RecordDecoder> makePicoQuantDecoder(PicoQuantLayout layout, PicoQuantTiming timing,
                                                    VendorChannelMap channels);

}  // namespace tagflow
