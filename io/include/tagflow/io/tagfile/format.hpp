// The tag file format, byte by byte (docs/formats.md, "Tag file"): a file header (magic,
// version, recording id, part number, creation time, software, the source's configuration as
// text, the recorded channels), then records, each a 56-byte header (magic, kind, sequence,
// tag count, time range, raw and stored sizes, checksums) and a payload. All integers are
// little-endian. This header holds the constants, the two header layouts with their checks,
// CRC-32C and the LEB128 varints the payloads use.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "tagflow/core/tag.hpp"
#include "tagflow/io/tagfile/crc32c.hpp"

namespace tagflow::tagfile {

inline constexpr std::array<std::uint8_t, 8> kFileMagic = {0x89, 'T',  'A',  'G',
                                                           'F',  '\r', '\n', 0x1A};
inline constexpr std::uint16_t kFormatVersion = 1;
inline constexpr std::size_t kFilePrefixSize = 16;  // magic, version, flags, header size
inline constexpr std::uint32_t kMaxFileHeaderSize = 16u << 20;

inline constexpr std::uint32_t kRecordMagic = 0x4B4C4254;  // "TBLK"
inline constexpr std::size_t kRecordHeaderSize = 56;
// A block never holds more tags than this; the writer's blocks hold about 16384.
inline constexpr std::uint32_t kMaxBlockTags = 1u << 20;
inline constexpr std::uint32_t kMaxPayloadBytes = 64u << 20;
inline constexpr std::uint32_t kMaxMarkerBytes = 1u << 20;

enum class RecordKind : std::uint8_t { Tags = 1, Marker = 2, PartEnd = 3 };

// The general compressor applied to a tags payload after packing.
enum class Compression : std::uint8_t { None = 0, Zstd = 1, Lz4 = 2 };

// PartEnd flag: the recording continues in the next part file.
inline constexpr std::uint16_t kPartContinues = 1;

struct FileHeader {
  std::uint64_t recording_id = 0;  // the same in every part of one recording
  std::uint32_t part = 0;          // 0 for the first part
  std::int64_t created_unix_ns = 0;
  std::string software;
  std::string configuration;        // the source's configuration, as text
  std::vector<channel_t> channels;  // recorded channels; empty: every channel of the stream
};

struct RecordHeader {
  RecordKind kind = RecordKind::Tags;
  Compression compression = Compression::None;
  std::uint16_t flags = 0;
  std::uint64_t sequence = 0;  // counts records of the recording from 0, across parts
  std::uint32_t tag_count = 0;
  std::uint32_t raw_size = 0;     // payload bytes before the general compressor
  std::uint32_t stored_size = 0;  // payload bytes in the file
  std::uint32_t payload_crc = 0;  // CRC-32C of the stored payload
  timestamp_t begin_time = 0;
  timestamp_t end_time = 0;
};

// The time index a complete part ends with, as the payload of its final part-end record: per
// tags record its byte offset, sequence number, time range and whether the stream is inside
// an overflow interval where it begins, in file order, then a 24-byte
// trailer (the part's first sequence number, the payload size, "TIDX", the entry size), so a
// reader finds it from the file's last bytes and seeks in O(log n). Provisional part ends
// (while recording, after a crash) carry none.
struct IndexEntry {
  std::uint64_t offset = 0;  // of the record header
  std::uint64_t sequence = 0;
  timestamp_t begin_time = 0;
  timestamp_t end_time = 0;
  bool in_overflow_at_begin = false;
};

struct PartIndex {
  std::uint64_t first_sequence = 0;  // of the part's first record
  std::vector<IndexEntry> entries;
  // From the part end that holds the index (not stored in the payload).
  bool continues = false;
  std::uint64_t next_sequence = 0;
};

inline constexpr std::uint32_t kIndexMagic = 0x58444954;  // "TIDX"
inline constexpr std::size_t kIndexEntrySize = 40;
inline constexpr std::size_t kIndexTrailerSize = 24;
inline constexpr std::size_t kMaxIndexEntries =
    (kMaxPayloadBytes - kIndexTrailerSize) / kIndexEntrySize;

std::vector<std::uint8_t> encodePartIndex(const PartIndex& index);
// Throws DataError (a short reason) for a wrong size, trailer or entries out of order.
PartIndex decodePartIndex(std::span<const std::uint8_t> payload);

std::vector<std::uint8_t> encodeFileHeader(const FileHeader& header);
// From the first kFilePrefixSize bytes: the total header size. Throws DataError naming `where`
// for a foreign magic, an unknown version or an impossible size.
std::uint32_t fileHeaderSize(std::span<const std::uint8_t> prefix, const std::string& where);
// Throws DataError naming `where` for a bad checksum or inconsistent lengths.
FileHeader decodeFileHeader(std::span<const std::uint8_t> bytes, const std::string& where);

void encodeRecordHeader(const RecordHeader& header, std::uint8_t* out);
// Throws DataError (a short reason; the caller adds file and offset) for a bad magic or
// checksum or a field out of range.
RecordHeader decodeRecordHeader(const std::uint8_t* in);

inline void storeLittle(std::uint8_t* out, std::uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) out[i] = static_cast<std::uint8_t>(value >> (8 * i));
}

inline std::uint64_t loadLittle(const std::uint8_t* in, std::size_t bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i) value |= std::uint64_t{in[i]} << (8 * i);
  return value;
}

inline void putVarint(std::vector<std::uint8_t>& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(value));
}

inline std::uint64_t zigzag(std::int64_t value) {
  return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}

inline std::int64_t unzigzag(std::uint64_t value) {
  return static_cast<std::int64_t>((value >> 1) ^ (~(value & 1) + 1));
}

// Reads little-endian fields and varints from a byte span; every read is bounds-checked and
// throws DataError naming what was being read.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}

  std::uint64_t fixed(std::size_t size, const char* what);
  std::uint64_t varint(const char* what);
  std::span<const std::uint8_t> take(std::size_t size, const char* what);

  std::size_t position() const { return position_; }
  std::size_t remaining() const { return bytes_.size() - position_; }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t position_ = 0;
};

}  // namespace tagflow::tagfile
