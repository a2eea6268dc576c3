// quTAG binary time-tag files (qutools' FORMAT_BINARY, written by TDC_writeTimestamps): a
// 40-byte header, then records of 10 bytes, a little-endian 64-bit timestamp in ps and a 16-bit
// channel. qutools document the records and keep the header for their own reader; tagflow
// checks its signature (the bytes 87 B3 91 FA) and keeps the rest, undecoded, in the header
// fields. The compressed and headerless raw formats are not read.
//
// Tags: channels 0..31 are the inputs (first_input + k); 100..103 are marker inputs 0..3,
// rising edge (first_marker + b), 105..108 the same, falling edge (-(first_marker + b)); 104 is
// the device's millisecond tick (first_marker + 4). Some devices write stamps slightly out of
// order: a record may be up to reorder_window_ps earlier than the latest before it and is put
// in order; an earlier one is a DataError naming the record.
#pragma once

#include <string>

#include "tagflow/io/vendor/vendor_file_source.hpp"

namespace tagflow {

// Throws InvalidArgument for a negative reorder window, IoError when the file cannot be read,
// DataError naming the file and the byte offset for a header cut short or without the
// signature.
VendorFile openQutagFile(const std::string& path, VendorChannelMap channels = {},
                         timestamp_t reorder_window_ps = 100'000);

}  // namespace tagflow
