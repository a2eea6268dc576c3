// libFuzzer target for the tag file reader: the input is read as a whole tag file (header,
// records, checksums, decompression, decoding), and inputs beginning with 'D' go straight to
// the block decoder (behind the checksum a mutated file rarely gets past). Any outcome but a
// clean read or DataError/IoError is a finding; decoded tags must keep the block contract.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "tagflow/core/error.hpp"
#include "tagflow/io/tagfile/codec.hpp"
#include "tagflow/io/tagfile/format.hpp"
#include "tagflow/io/tagfile/reader.hpp"

namespace {

void checkBlock(const std::vector<tagflow::Tag>& tags, std::size_t count,
                tagflow::timestamp_t begin, tagflow::timestamp_t end) {
  for (std::size_t i = 0; i < count; ++i) {
    if (tags[i].time < begin || tags[i].time >= end || (i > 0 && tags[i].time < tags[i - 1].time) ||
        static_cast<int>(tags[i].type) > 4) {
      std::abort();
    }
  }
}

void decodeBlock(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 21) return;
  const auto count =
      static_cast<std::uint32_t>(tagflow::tagfile::loadLittle(bytes.data() + 1, 4) % 65536);
  const auto begin =
      static_cast<tagflow::timestamp_t>(tagflow::tagfile::loadLittle(bytes.data() + 5, 8));
  auto end = static_cast<tagflow::timestamp_t>(tagflow::tagfile::loadLittle(bytes.data() + 13, 8));
  if (end < begin) end = begin;
  std::vector<tagflow::Tag> tags(count);
  std::vector<std::uint32_t> specials;
  tagflow::tagfile::TagBlockDecoder decoder;
  try {
    decoder.decode(bytes.subspan(21), count, begin, end, tags.data(), specials);
    checkBlock(tags, count, begin, end);
  } catch (const tagflow::DataError&) {
  }
}

void readFile(std::span<const std::uint8_t> bytes) {
  try {
    tagflow::TagFileReader reader(bytes, "fuzz input");
    tagflow::TagFileReader::Record record;
    std::vector<tagflow::Tag> tags;
    while (reader.next(record, tags)) {
      if (record.header.kind == tagflow::tagfile::RecordKind::Tags) {
        checkBlock(tags, record.header.tag_count, record.header.begin_time, record.header.end_time);
      }
    }
  } catch (const tagflow::DataError&) {
  } catch (const tagflow::IoError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  if (size > 0 && data[0] == 'D') {
    decodeBlock(bytes);
  } else {
    readFile(bytes);
  }
  return 0;
}
