// TruncatedData: the input ends inside a record, the damaged tail a recording leaves when its
// writer is killed, the disk fills up or a copy stops early. The file sources (raw tag files,
// tag files, vendor files) throw it after delivering every complete record before the tail, so
// a caller may keep what it read; its message names the file and the byte offset of the tail.
// Any other damage (a changed bit, a record out of order) stays a plain DataError.
#pragma once

#include "tagflow/core/error.hpp"

namespace tagflow {

class TruncatedData : public DataError {
 public:
  using DataError::DataError;
};

}  // namespace tagflow
