#include "tagflow/io/tagfile/format.hpp"

#include "tagflow/core/error.hpp"

namespace tagflow::tagfile {

namespace {

void putFixed(std::vector<std::uint8_t>& out, std::uint64_t value, std::size_t bytes) {
  const std::size_t at = out.size();
  out.resize(at + bytes);
  storeLittle(out.data() + at, value, bytes);
}

void putText(std::vector<std::uint8_t>& out, const std::string& text) {
  putFixed(out, text.size(), 4);
  out.insert(out.end(), text.begin(), text.end());
}

std::string readText(ByteReader& in, const char* what) {
  const auto size = in.fixed(4, what);
  const auto bytes = in.take(size, what);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

std::uint64_t ByteReader::fixed(std::size_t size, const char* what) {
  return loadLittle(take(size, what).data(), size);
}

std::uint64_t ByteReader::varint(const char* what) {
  std::uint64_t value = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (position_ >= bytes_.size()) {
      throw DataError(std::string("payload ends inside the varint of ") + what);
    }
    const std::uint8_t byte = bytes_[position_++];
    value |= std::uint64_t{byte & 0x7Fu} << shift;
    if ((byte & 0x80) == 0) {
      if (shift == 63 && byte > 1) break;
      return value;
    }
  }
  throw DataError(std::string("the varint of ") + what + " is longer than 64 bits");
}

std::span<const std::uint8_t> ByteReader::take(std::size_t size, const char* what) {
  if (size > remaining()) {
    throw DataError(std::string("payload ends inside ") + what + " (needs " + std::to_string(size) +
                    " bytes, " + std::to_string(remaining()) + " left)");
  }
  const auto part = bytes_.subspan(position_, size);
  position_ += size;
  return part;
}

std::vector<std::uint8_t> encodeFileHeader(const FileHeader& header) {
  std::vector<std::uint8_t> out(kFileMagic.begin(), kFileMagic.end());
  putFixed(out, kFormatVersion, 2);
  putFixed(out, 0, 2);  // flags
  putFixed(out, 0, 4);  // total size, set below
  putFixed(out, header.recording_id, 8);
  putFixed(out, header.part, 4);
  putFixed(out, 0, 4);  // reserved
  putFixed(out, static_cast<std::uint64_t>(header.created_unix_ns), 8);
  putText(out, header.software);
  putText(out, header.configuration);
  putFixed(out, header.channels.size(), 4);
  for (channel_t channel : header.channels) putFixed(out, static_cast<std::uint32_t>(channel), 4);
  storeLittle(out.data() + 12, out.size() + 4, 4);
  putFixed(out, crc32c(out), 4);
  return out;
}

std::uint32_t fileHeaderSize(std::span<const std::uint8_t> prefix, const std::string& where) {
  if (prefix.size() < kFilePrefixSize ||
      !std::equal(kFileMagic.begin(), kFileMagic.end(), prefix.begin())) {
    throw DataError(where + " is not a tag file (its first bytes are not the tag file magic)");
  }
  const auto version = loadLittle(prefix.data() + 8, 2);
  if (version != kFormatVersion) {
    throw DataError(where + " has tag file format version " + std::to_string(version) +
                    " (this build reads version " + std::to_string(kFormatVersion) + ")");
  }
  const auto size = static_cast<std::uint32_t>(loadLittle(prefix.data() + 12, 4));
  if (size < kFilePrefixSize + 40 || size > kMaxFileHeaderSize) {
    throw DataError(where + ": file header size " + std::to_string(size) +
                    " bytes is invalid (valid: 56.." + std::to_string(kMaxFileHeaderSize) + ")");
  }
  return size;
}

FileHeader decodeFileHeader(std::span<const std::uint8_t> bytes, const std::string& where) {
  const std::uint32_t size = fileHeaderSize(bytes, where);
  if (bytes.size() != size) {
    throw DataError(where + ": file header is cut off at byte offset " +
                    std::to_string(bytes.size()) + " (its size is " + std::to_string(size) +
                    " bytes)");
  }
  const auto stored_crc = static_cast<std::uint32_t>(loadLittle(bytes.data() + size - 4, 4));
  if (crc32c(bytes.first(size - 4)) != stored_crc) {
    throw DataError(where + ": file header checksum mismatch (bytes 0.." +
                    std::to_string(size - 1) + " are corrupt)");
  }
  try {
    ByteReader in(bytes.subspan(kFilePrefixSize, size - kFilePrefixSize - 4));
    FileHeader header;
    header.recording_id = in.fixed(8, "the recording id");
    header.part = static_cast<std::uint32_t>(in.fixed(4, "the part number"));
    in.fixed(4, "the reserved field");
    header.created_unix_ns = static_cast<std::int64_t>(in.fixed(8, "the creation time"));
    header.software = readText(in, "the software text");
    header.configuration = readText(in, "the configuration text");
    const auto channels = in.fixed(4, "the channel count");
    if (channels > in.remaining() / 4)
      throw DataError("the channel list is longer than the header");
    for (std::uint64_t i = 0; i < channels; ++i) {
      header.channels.push_back(static_cast<channel_t>(in.fixed(4, "a channel")));
    }
    if (in.remaining() != 0) throw DataError("unexpected bytes after the channel list");
    return header;
  } catch (const DataError& error) {
    throw DataError(where + ": file header: " + error.what());
  }
}

std::vector<std::uint8_t> encodePartIndex(const PartIndex& index) {
  std::vector<std::uint8_t> out(index.entries.size() * kIndexEntrySize + kIndexTrailerSize);
  std::uint8_t* at = out.data();
  for (const IndexEntry& entry : index.entries) {
    storeLittle(at, entry.offset, 8);
    storeLittle(at + 8, entry.sequence, 8);
    storeLittle(at + 16, static_cast<std::uint64_t>(entry.begin_time), 8);
    storeLittle(at + 24, static_cast<std::uint64_t>(entry.end_time), 8);
    storeLittle(at + 32, entry.in_overflow_at_begin ? 1 : 0, 8);
    at += kIndexEntrySize;
  }
  storeLittle(at, index.first_sequence, 8);
  storeLittle(at + 8, out.size(), 8);
  storeLittle(at + 16, kIndexMagic, 4);
  storeLittle(at + 20, kIndexEntrySize, 4);
  return out;
}

PartIndex decodePartIndex(std::span<const std::uint8_t> payload) {
  if (payload.size() < kIndexTrailerSize ||
      (payload.size() - kIndexTrailerSize) % kIndexEntrySize != 0) {
    throw DataError("time index of " + std::to_string(payload.size()) +
                    " bytes is invalid (valid: 24 + 40 per entry)");
  }
  const std::uint8_t* trailer = payload.data() + payload.size() - kIndexTrailerSize;
  if (loadLittle(trailer + 16, 4) != kIndexMagic ||
      loadLittle(trailer + 20, 4) != kIndexEntrySize ||
      loadLittle(trailer + 8, 8) != payload.size()) {
    throw DataError("time index trailer is invalid");
  }
  PartIndex index;
  index.first_sequence = loadLittle(trailer, 8);
  const std::size_t count = (payload.size() - kIndexTrailerSize) / kIndexEntrySize;
  index.entries.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint8_t* at = payload.data() + i * kIndexEntrySize;
    IndexEntry& entry = index.entries[i];
    entry.offset = loadLittle(at, 8);
    entry.sequence = loadLittle(at + 8, 8);
    entry.begin_time = static_cast<timestamp_t>(loadLittle(at + 16, 8));
    entry.end_time = static_cast<timestamp_t>(loadLittle(at + 24, 8));
    const std::uint64_t flags = loadLittle(at + 32, 8);
    if (flags > 1) throw DataError("time index entry " + std::to_string(i) + " has unknown flags");
    entry.in_overflow_at_begin = flags == 1;
    const bool ordered = entry.end_time >= entry.begin_time &&
                         (i == 0 ? entry.sequence >= index.first_sequence
                                 : entry.offset > index.entries[i - 1].offset &&
                                       entry.sequence > index.entries[i - 1].sequence &&
                                       entry.begin_time >= index.entries[i - 1].end_time);
    if (!ordered) throw DataError("time index entry " + std::to_string(i) + " is out of order");
  }
  return index;
}

void encodeRecordHeader(const RecordHeader& header, std::uint8_t* out) {
  storeLittle(out, kRecordMagic, 4);
  out[4] = static_cast<std::uint8_t>(header.kind);
  out[5] = static_cast<std::uint8_t>(header.compression);
  storeLittle(out + 6, header.flags, 2);
  storeLittle(out + 8, header.sequence, 8);
  storeLittle(out + 16, header.tag_count, 4);
  storeLittle(out + 20, header.raw_size, 4);
  storeLittle(out + 24, header.stored_size, 4);
  storeLittle(out + 28, header.payload_crc, 4);
  storeLittle(out + 32, static_cast<std::uint64_t>(header.begin_time), 8);
  storeLittle(out + 40, static_cast<std::uint64_t>(header.end_time), 8);
  storeLittle(out + 48, 0, 4);
  storeLittle(out + 52, crc32c({out, 52}), 4);
}

RecordHeader decodeRecordHeader(const std::uint8_t* in) {
  if (loadLittle(in, 4) != kRecordMagic) throw DataError("no record magic (\"TBLK\") here");
  if (crc32c({in, 52}) != loadLittle(in + 52, 4))
    throw DataError("record header checksum mismatch");
  RecordHeader header;
  const std::uint8_t kind = in[4];
  const std::uint8_t compression = in[5];
  if (kind < 1 || kind > 3) {
    throw DataError("record kind " + std::to_string(kind) + " is unknown (valid: 1..3)");
  }
  if (compression > 2) {
    throw DataError("compression " + std::to_string(compression) + " is unknown (valid: 0..2)");
  }
  header.kind = static_cast<RecordKind>(kind);
  header.compression = static_cast<Compression>(compression);
  header.flags = static_cast<std::uint16_t>(loadLittle(in + 6, 2));
  header.sequence = loadLittle(in + 8, 8);
  header.tag_count = static_cast<std::uint32_t>(loadLittle(in + 16, 4));
  header.raw_size = static_cast<std::uint32_t>(loadLittle(in + 20, 4));
  header.stored_size = static_cast<std::uint32_t>(loadLittle(in + 24, 4));
  header.payload_crc = static_cast<std::uint32_t>(loadLittle(in + 28, 4));
  header.begin_time = static_cast<timestamp_t>(loadLittle(in + 32, 8));
  header.end_time = static_cast<timestamp_t>(loadLittle(in + 40, 8));
  if (header.tag_count > kMaxBlockTags) {
    throw DataError("tag count " + std::to_string(header.tag_count) + " is invalid (valid: 0.." +
                    std::to_string(kMaxBlockTags) + ")");
  }
  if (header.raw_size > kMaxPayloadBytes || header.stored_size > kMaxPayloadBytes) {
    throw DataError("payload size " +
                    std::to_string(std::max(header.raw_size, header.stored_size)) +
                    " bytes is invalid (valid: 0.." + std::to_string(kMaxPayloadBytes) + ")");
  }
  if (header.end_time < header.begin_time) {
    throw DataError("time range [" + std::to_string(header.begin_time) + ", " +
                    std::to_string(header.end_time) + ") ps ends before it begins");
  }
  if (header.kind != RecordKind::Tags &&
      (header.compression != Compression::None || header.tag_count != 0 ||
       header.raw_size != header.stored_size)) {
    throw DataError("a marker or part-end record must hold no tags and no compressed payload");
  }
  return header;
}

}  // namespace tagflow::tagfile
