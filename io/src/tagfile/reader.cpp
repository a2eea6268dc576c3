#include "tagflow/io/tagfile/reader.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tagflow/core/error.hpp"
#include "tagflow/io/truncated_data.hpp"

namespace tagflow {

using namespace tagfile;

TagFileReader::TagFileReader(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "rb");
  if (file_ == nullptr) {
    throw IoError("cannot open tag file '" + path_ + "': " + std::strerror(errno));
  }
  struct stat info {};
  if (fstat(fileno(file_), &info) != 0 || !S_ISREG(info.st_mode)) {
    std::fclose(file_);
    throw IoError("tag file '" + path_ + "' is not a readable regular file");
  }
  try {
    readHeader();
  } catch (...) {
    std::fclose(file_);
    throw;
  }
}

TagFileReader::TagFileReader(std::span<const std::uint8_t> bytes, std::string name)
    : path_(std::move(name)), memory_(bytes), from_memory_(true) {
  readHeader();
}

TagFileReader::~TagFileReader() {
  if (file_ != nullptr) std::fclose(file_);
}

std::string TagFileReader::where(std::uint64_t offset) const {
  return "tag file '" + path_ + "', record " + std::to_string(record_index_) + " at byte offset " +
         std::to_string(offset);
}

bool TagFileReader::atEnd() const {
  if (from_memory_) return offset_ >= memory_.size();
  struct stat info {};
  return fstat(fileno(file_), &info) == 0 && static_cast<std::uint64_t>(info.st_size) <= offset_;
}

bool TagFileReader::readExactly(std::uint8_t* out, std::size_t size, std::size_t& got) {
  if (from_memory_) {
    got = std::min<std::uint64_t>(
        size, memory_.size() - std::min<std::uint64_t>(offset_, memory_.size()));
    if (got > 0) std::memcpy(out, memory_.data() + offset_, got);
  } else {
    got = std::fread(out, 1, size, file_);
    if (got < size && std::ferror(file_)) {
      throw IoError("reading tag file '" + path_ + "' failed at byte offset " +
                    std::to_string(offset_ + got) + ": " + std::strerror(errno));
    }
  }
  offset_ += got;
  return got == size;
}

bool TagFileReader::readAt(std::uint64_t offset, std::uint8_t* out, std::size_t size) {
  if (from_memory_) {
    if (offset > memory_.size() || size > memory_.size() - offset) return false;
    std::memcpy(out, memory_.data() + offset, size);
    return true;
  }
  if (fseeko(file_, static_cast<off_t>(offset), SEEK_SET) != 0) return false;
  const bool whole = std::fread(out, 1, size, file_) == size;
  // Back to where sequential reading stands.
  if (fseeko(file_, static_cast<off_t>(offset_), SEEK_SET) != 0) {
    throw IoError("seeking in tag file '" + path_ + "' failed: " + std::strerror(errno));
  }
  return whole;
}

std::optional<PartIndex> TagFileReader::readIndex() {
  std::uint64_t size = memory_.size();
  if (!from_memory_) {
    struct stat info {};
    if (fstat(fileno(file_), &info) != 0) return std::nullopt;
    size = static_cast<std::uint64_t>(info.st_size);
  }
  std::uint8_t trailer[kIndexTrailerSize];
  if (size < kRecordHeaderSize + kIndexTrailerSize ||
      !readAt(size - kIndexTrailerSize, trailer, sizeof trailer) ||
      loadLittle(trailer + 16, 4) != kIndexMagic) {
    return std::nullopt;
  }
  const std::uint64_t payload_size = loadLittle(trailer + 8, 8);
  if (payload_size > kMaxPayloadBytes || payload_size + kRecordHeaderSize > size) {
    return std::nullopt;
  }
  const std::uint64_t at = size - payload_size - kRecordHeaderSize;
  std::uint8_t bytes[kRecordHeaderSize];
  std::vector<std::uint8_t> payload(payload_size);
  if (!readAt(at, bytes, sizeof bytes) ||
      !readAt(at + kRecordHeaderSize, payload.data(), payload.size())) {
    return std::nullopt;
  }
  // From here on the bytes claim to be an index: a damaged one is an error, not a missing one.
  try {
    const RecordHeader header = decodeRecordHeader(bytes);
    if (header.kind != RecordKind::PartEnd || header.stored_size != payload_size ||
        crc32c(payload) != header.payload_crc) {
      throw DataError("the time index does not match its part-end record");
    }
    PartIndex index = decodePartIndex(payload);
    index.continues = (header.flags & kPartContinues) != 0;
    index.next_sequence = header.sequence;
    for (const IndexEntry& entry : index.entries) {
      if (entry.offset >= at) throw DataError("a time index entry points past the part end");
    }
    return index;
  } catch (const DataError& error) {
    throw DataError("tag file '" + path_ + "', time index at byte offset " + std::to_string(at) +
                    ": " + error.what());
  }
}

void TagFileReader::seek(const PartIndex& index, std::size_t entry) {
  const IndexEntry& target = index.entries.at(entry);
  offset_ = target.offset;
  if (!from_memory_ && fseeko(file_, static_cast<off_t>(offset_), SEEK_SET) != 0) {
    throw IoError("seeking in tag file '" + path_ + "' failed: " + std::strerror(errno));
  }
  record_index_ = target.sequence - index.first_sequence;
  expectSequence(target.sequence);
  ended_ = false;
}

void TagFileReader::readHeader() {
  std::vector<std::uint8_t> bytes(kFilePrefixSize);
  std::size_t got = 0;
  if (!readExactly(bytes.data(), bytes.size(), got)) {
    // What there is begins like a tag file (an empty file too): a writer cut before its header
    // was complete.
    const std::size_t magic = std::min(got, kFileMagic.size());
    if (!std::equal(kFileMagic.begin(), kFileMagic.begin() + magic, bytes.begin())) {
      throw DataError("tag file '" + path_ + "' is not a tag file (it is " + std::to_string(got) +
                      " bytes long, shorter than a file header)");
    }
    throw TruncatedData("tag file '" + path_ + "' is truncated at byte offset " +
                        std::to_string(got) + ", inside its file header");
  }
  const std::uint32_t size = fileHeaderSize(bytes, "tag file '" + path_ + "'");
  bytes.resize(size);
  if (!readExactly(bytes.data() + kFilePrefixSize, size - kFilePrefixSize, got)) {
    throw TruncatedData("tag file '" + path_ + "' is truncated at byte offset " +
                        std::to_string(kFilePrefixSize + got) + ", inside its file header of " +
                        std::to_string(size) + " bytes");
  }
  header_ = decodeFileHeader(bytes, "tag file '" + path_ + "'");
  if (header_.part == 0) expectSequence(0);
}

bool TagFileReader::next(Record& record, std::vector<Tag>& tags) {
  if (ended_) return false;
  const std::uint64_t at = offset_;
  std::uint8_t bytes[kRecordHeaderSize];
  std::size_t got = 0;
  if (!readExactly(bytes, sizeof bytes, got)) {
    throw TruncatedData(where(at) + ": the file is truncated at byte offset " +
                        std::to_string(at + got) +
                        (got == 0 ? " (no part-end record)" : " (inside a record header)") +
                        "; every record before it is complete");
  }
  try {
    record.header = decodeRecordHeader(bytes);
  } catch (const DataError& error) {
    // A writer overwrites its provisional part end with the next record; cut during that write,
    // it leaves a torn header as the file's last bytes, with nothing after it.
    if (atEnd()) {
      throw TruncatedData(where(at) + ": " + error.what() +
                          ", and the file ends with this header: a record cut while it was "
                          "written; every record before it is complete");
    }
    throw DataError(where(at) + ": " + error.what());
  }
  const RecordHeader& header = record.header;
  if (!sequence_known_) expectSequence(header.sequence);
  if (header.sequence != expected_sequence_) {
    throw DataError(where(at) + ": sequence number " + std::to_string(header.sequence) + " where " +
                    std::to_string(expected_sequence_) +
                    " was expected (a record or part is missing)");
  }
  if (from_memory_ && header.kind != RecordKind::PartEnd &&
      header.stored_size > memory_.size() - offset_) {
    throw TruncatedData(where(at) + ": the file is truncated at byte offset " +
                        std::to_string(memory_.size()) + ", inside the payload of " +
                        std::to_string(header.stored_size) +
                        " bytes; every record before it is complete");
  }
  stored_.resize(header.stored_size);
  const bool whole = readExactly(stored_.data(), stored_.size(), got);
  if (!whole && header.kind == RecordKind::PartEnd) {
    // A part end's payload is only its time index: cut short (a writer killed while it ended
    // the part), the part still ends here, without one.
    ended_ = true;
    ++record_index_;
    return true;
  }
  if (!whole) {
    throw TruncatedData(where(at) + ": the file is truncated at byte offset " +
                        std::to_string(at + kRecordHeaderSize + got) + ", inside the payload of " +
                        std::to_string(header.stored_size) +
                        " bytes; every record before it is complete");
  }
  if (crc32c(stored_) != header.payload_crc) {
    throw DataError(
        where(at) + ": payload checksum mismatch (bytes " + std::to_string(at + kRecordHeaderSize) +
        ".." + std::to_string(at + kRecordHeaderSize + header.stored_size - 1) + " are corrupt)");
  }
  try {
    switch (header.kind) {
      case RecordKind::Tags: {
        std::span<const std::uint8_t> raw = stored_;
        if (header.compression != Compression::None || header.raw_size != header.stored_size) {
          raw_.resize(header.raw_size);
          decompressor_.decompress(header.compression, stored_, raw_);
          raw = raw_;
        }
        if (tags.size() < header.tag_count) tags.resize(header.tag_count);
        decoder_.decode(raw, header.tag_count, header.begin_time, header.end_time, tags.data(),
                        record.specials);
        ++expected_sequence_;
        break;
      }
      case RecordKind::Marker:
        record.marker.assign(stored_.begin(), stored_.end());
        ++expected_sequence_;
        break;
      case RecordKind::PartEnd:
        if (!stored_.empty()) decodePartIndex(stored_);  // checked like any other payload
        ended_ = true;
        break;
    }
  } catch (const DataError& error) {
    throw DataError(where(at) + ": " + error.what());
  }
  ++record_index_;
  return true;
}

}  // namespace tagflow
