// RecordDecoder: turns the fixed-size records of a vendor's time-tag file into tags, chunk by
// chunk, keeping what spans records (the overflow count, the last sync emitted). Tags come
// out in the order the records hold them, which is not always time order (a T3 photon is
// stamped after its sync period's start; some devices write stamps slightly out of order):
// futureBound() says how early a tag from a later record can still be, so that
// VendorFileSource can put the tags before it in order and hand them out.
//
// Channels follow VendorChannelMap: the input the vendor numbers k (from 0) becomes channel
// first_input + k, the sync becomes `sync`, marker bit b (from 0) becomes first_marker + b.
#pragma once

#include <cstddef>
#include <cstdint>
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
  virtual ~RecordDecoder() = default;

  virtual std::size_t recordBytes() const = 0;

  // Decodes `count` records at `records`, the first being record `first_index` of the file,
  // and appends their tags to `out`. A tag earlier than `floor` (what was already handed
  // out) is a disorder larger than the format allows: DataError naming the record.
  virtual void decode(const std::uint8_t* records, std::size_t count, std::uint64_t first_index,
                      timestamp_t floor, std::vector<Tag>& out) = 0;

  // No tag of a later record is earlier than this (ps); the largest time when none can be.
  virtual timestamp_t futureBound() const = 0;

 protected:
  // Throws the DataError of a tag at `time` from record `index`, earlier than `floor`.
  [[noreturn]] static void throwDisorder(std::uint64_t index, timestamp_t time, timestamp_t floor);
};

}  // namespace tagflow
