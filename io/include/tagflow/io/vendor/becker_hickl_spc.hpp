// Becker & Hickl FIFO files (.spc): the first record holds the macrotime clock in units of
// 0.1 ns and flags; every later record is a photon, an invalid photon, a marker or a count of
// macrotime overflows. The .set file written beside the .spc gives the module type, the TAC
// range and gain (the microtime unit) and the macrotime clock's source. Opening one reads both,
// checks them, and returns the VendorFile that VendorFileSource streams.
//
// Tags:
// - a photon at macrotime * clock + (codes - 1 - ADC) * TAC range / TAC gain / codes (codes =
//   4096, or 256 in the SPC-600/630 256-channel layout), each time exact and rounded to the
//   nearest ps. B&H measure reversed start-stop (the photon starts the TAC, the next sync
//   stops it), so the ADC code counts down; codes - 1 - ADC is B&H's "real microtime", the
//   photon's delay after the sync that began its macrotime period. On channel first_input +
//   the routing field as stored, as phconvert reads every layout. Without a .set file the
//   unit is unknown: photons sit at their macrotime (a warning says so).
// - a sync tag at macrotime * clock for every macrotime period holding a photon, where the
//   macrotime clock is the sync itself (SPC-130 layout; the .set's SP_MTCLK = 1, or without
//   one a clock other than the internal 50 ns and 25 ns). Otherwise no sync tags.
// - a marker record: one tag per marker bit b on first_marker + b, at its macrotime.
// - GAP (the module's FIFO overflowed before this record, data were lost): an OverflowBegin
//   after the last tag before the gap and an OverflowEnd at the record's macrotime; the record
//   itself is read as usual. Overflows lost in the gap cannot be counted: when the macrotime
//   after a gap is below the one before it, whole overflow periods are added until it is not.
//   A GAP on a record without a time (an invalid photon, an overflow count) is marked at the
//   next record with one; on the last records, from after the last tag to the stream's end.
#pragma once

#include <string>

#include "tagflow/io/vendor/vendor_file_source.hpp"

namespace tagflow {

struct SpcOptions {
  // "auto" (from the .set file's module type, else the first record's flags), "130"
  // (SPC-130/132/134/140/150/160/180/830, 4-byte records), "600-4096" (SPC-600/630 4096-channel
  // mode, 6-byte records) or "600-256" (SPC-600/630 256-channel mode, 4-byte records).
  std::string layout = "auto";
  // The macrotime clock period in ns; 0: from the file's first record, else from the .set file.
  double macrotime_clock_ns = 0;
  // The .set file; "": the .spc's path with the extension .set (or .SET) when it exists.
  std::string set_file;
};

// Throws InvalidArgument for an option outside its range, IoError when a file cannot be read,
// DataError naming the file, the value and its byte offset for a file that is not a FIFO file
// of the layout (a first record cut short, no macrotime clock and none given, a module type
// with another record format, a raw diagnostic-mode file, a .set file without settings).
VendorFile openSpcFile(const std::string& path, const SpcOptions& options = {},
                       VendorChannelMap channels = {});

}  // namespace tagflow
