#include "tagflow/io/vendor/record_decoder.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "tagflow/core/error.hpp"

namespace tagflow {

void RecordDecoder::sortRun(Tag* begin, Tag* end) {
  std::stable_sort(begin, end, [](const Tag& a, const Tag& b) { return a.time < b.time; });
}

void RecordDecoder::throwDisorder(std::uint64_t index, timestamp_t time, timestamp_t floor) {
  throw DataError(fmt::format(
      "record {} holds a tag at {} ps, before {} ps, which earlier records already reached: the "
      "records are out of time order by more than the format allows",
      index, time, floor));
}

}  // namespace tagflow
