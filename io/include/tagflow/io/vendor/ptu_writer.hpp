// PtuWriter: writes a stream as a PTU file of PicoQuant's generic T2 record type (0x00010207,
// MultiHarp / PicoHarp 330), 1 ps per unit, which PicoQuant's software and every PTU reader
// open. The tags map back the way the readers map them in: channel first_input + k becomes
// input k (0..63), the sync channel a sync record, first_marker + b a marker record with bit b
// (0..3); counted overflow records carry time across the 25-bit time field. Other tags (a
// channel outside those ranges, overflow marks, missed events, errors) have no PTU record: a
// TimeTag on another channel is refused with InvalidArgument naming it, the special tags are
// left out and counted (leftOut()). The header's record count is written at close().
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "tagflow/core/tag.hpp"
#include "tagflow/io/vendor/record_decoder.hpp"

namespace tagflow {

class PtuWriter {
 public:
  // Creates `path` and writes the header; IoError naming the path when it cannot.
  explicit PtuWriter(std::string path, std::string comment = "", VendorChannelMap channels = {});
  ~PtuWriter();
  PtuWriter(const PtuWriter&) = delete;
  PtuWriter& operator=(const PtuWriter&) = delete;

  // Tags in time order, times >= 0.
  void write(std::span<const Tag> tags);
  // The stream's end (ps): the acquisition time in the header. Then writes the record count
  // and closes; IoError when the data could not be written.
  void close(timestamp_t end_time);

  std::uint64_t records() const { return records_; }
  std::uint64_t leftOut() const { return left_out_; }

 private:
  void put(std::uint32_t word);
  void flush();

  std::string path_;
  VendorChannelMap channels_;
  std::FILE* file_ = nullptr;
  std::uint64_t record_count_offset_ = 0;
  std::uint64_t acquisition_offset_ = 0;
  std::uint64_t overflows_ = 0;  // of 2^25 ps written so far
  timestamp_t last_time_ = 0;
  std::uint64_t records_ = 0;
  std::uint64_t left_out_ = 0;
  std::vector<std::uint32_t> buffer_;
};

}  // namespace tagflow
