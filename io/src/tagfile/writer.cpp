#include "tagflow/io/tagfile/writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"

namespace tagflow {

using namespace tagfile;

void TagFileOptions::validate() const {
  if (path.empty()) throw InvalidArgument("tag file path must not be empty");
  if (max_file_size < kMinMaxFileSize || max_file_size > (std::uint64_t{1} << 62)) {
    throw InvalidArgument("max_file_size " + std::to_string(max_file_size) +
                          " bytes is invalid (valid: " + std::to_string(kMinMaxFileSize) +
                          "..2^62)");
  }
}

void BlockPacker::pack(std::span<const Tag> tags, timestamp_t begin_time, timestamp_t end_time,
                       EncodedBlock& out) {
  if (tags.size() > kMaxBlockTags) {
    throw DataError("a tag file block holds at most " + std::to_string(kMaxBlockTags) + " tags; " +
                    std::to_string(tags.size()) + " share one time");
  }
  RecordHeader& header = out.header;
  header = RecordHeader{};
  header.kind = RecordKind::Tags;
  if (compression_ == Compression::None) {
    encoder_.encode(tags, begin_time, out.payload);
    header.raw_size = static_cast<std::uint32_t>(out.payload.size());
  } else {
    encoder_.encode(tags, begin_time, raw_);
    header.compression = compressor_.compress(raw_, out.payload);
    header.raw_size = static_cast<std::uint32_t>(raw_.size());
  }
  header.tag_count = static_cast<std::uint32_t>(tags.size());
  header.stored_size = static_cast<std::uint32_t>(out.payload.size());
  header.payload_crc = crc32c(out.payload);
  header.begin_time = begin_time;
  header.end_time = end_time;
}

std::string TagFileWriter::partPath(const std::string& path, std::uint32_t part) {
  if (part == 0) return path;
  const std::filesystem::path base(path);
  std::filesystem::path name = base.stem();
  name += ".";
  name += std::to_string(part);
  name += base.extension();
  return (base.parent_path() / name).string();
}

TagFileWriter::TagFileWriter(TagFileOptions options) : options_(std::move(options)) {
  options_.validate();
  header_.recording_id = std::random_device{}() * 0x100000000ull + std::random_device{}();
  header_.created_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
  header_.software = "tagflow " + tagflowVersion();
  header_.configuration = options_.configuration;
  header_.channels = options_.channels;
  openPart();
}

TagFileWriter::~TagFileWriter() {
  try {
    close();
  } catch (const std::exception&) {
    // A destructor cannot report; close() explicitly to see the error.
  }
}

void TagFileWriter::checkUsable() const {
  if (!error_.empty()) throw IoError(error_);
  if (closed_) throw IoError("tag file '" + options_.path + "' is already closed");
}

void TagFileWriter::fail(const std::string& what, int error_number) {
  error_ = what + " tag file '" + part_path_ + "' failed at byte offset " +
           std::to_string(offset_) + ": " + std::strerror(error_number) + "; the " +
           std::to_string(offset_) + " bytes before it (" + std::to_string(part_) +
           " earlier part(s) complete) remain readable";
  if (fd_ >= 0) {
    // Best effort: drop the partial record and end the part cleanly where it was complete.
    if (ftruncate(fd_, static_cast<off_t>(offset_)) == 0 &&
        lseek(fd_, static_cast<off_t>(offset_), SEEK_SET) >= 0) {
      std::uint8_t bytes[kRecordHeaderSize];
      RecordHeader end;
      end.kind = RecordKind::PartEnd;
      end.sequence = sequence_;
      end.begin_time = end.end_time = last_time_;
      encodeRecordHeader(end, bytes);
      [[maybe_unused]] const auto ignored = ::write(fd_, bytes, sizeof bytes);
    }
    ::close(fd_);
    fd_ = -1;
  }
  throw IoError(error_);
}

void TagFileWriter::writeBytes(std::span<const std::uint8_t> bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t wrote = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) fail("writing", wrote == 0 ? ENOSPC : errno);
    done += static_cast<std::size_t>(wrote);
  }
}

void TagFileWriter::openPart() {
  part_path_ = partPath(options_.path, part_);
  fd_ = ::open(part_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int error_number = errno;
    error_ = "cannot create tag file '" + part_path_ + "': " + std::strerror(error_number);
    throw IoError(error_);
  }
  offset_ = 0;
  header_.part = part_;
  const std::vector<std::uint8_t> bytes = encodeFileHeader(header_);
  writeBytes(bytes);
  offset_ = bytes.size();
  bytes_written_ += bytes.size();
}

void TagFileWriter::writeRecord(RecordHeader header, std::span<const std::uint8_t> payload) {
  checkUsable();
  if (split_pending_ || offset_ >= options_.max_file_size) {
    writePartEnd(true, false);
    if (::close(fd_) != 0) {
      const int error_number = errno;
      fd_ = -1;
      fail("closing", error_number);
    }
    fd_ = -1;
    ++part_;
    split_pending_ = false;
    openPart();
  }
  header.sequence = sequence_;
  std::uint8_t bytes[kRecordHeaderSize];
  encodeRecordHeader(header, bytes);
  writeBytes({bytes, sizeof bytes});
  writeBytes(payload);
  ++sequence_;
  offset_ += sizeof bytes + payload.size();
  bytes_written_ += sizeof bytes + payload.size();
  last_time_ = header.end_time;
}

void TagFileWriter::write(EncodedBlock& block) {
  writeRecord(block.header, block.payload);
  tags_written_ += block.header.tag_count;
}

void TagFileWriter::writeMarker(std::string_view text, timestamp_t time) {
  if (text.size() > kMaxMarkerBytes) {
    throw InvalidArgument("marker of " + std::to_string(text.size()) +
                          " bytes is too long (valid: up to " + std::to_string(kMaxMarkerBytes) +
                          " bytes)");
  }
  const std::span<const std::uint8_t> payload(reinterpret_cast<const std::uint8_t*>(text.data()),
                                              text.size());
  RecordHeader header;
  header.kind = RecordKind::Marker;
  header.raw_size = header.stored_size = static_cast<std::uint32_t>(text.size());
  header.payload_crc = crc32c(payload);
  header.begin_time = header.end_time = time;
  writeRecord(header, payload);
}

void TagFileWriter::split() {
  checkUsable();
  split_pending_ = true;
}

// A part-end record carries the sequence number of the record that follows it and does not
// use it up, so a provisional one can be overwritten without leaving a gap.
void TagFileWriter::writePartEnd(bool continues, bool provisional) {
  RecordHeader header;
  header.kind = RecordKind::PartEnd;
  header.flags = continues ? kPartContinues : 0;
  header.sequence = sequence_;
  header.begin_time = header.end_time = last_time_;
  std::uint8_t bytes[kRecordHeaderSize];
  encodeRecordHeader(header, bytes);
  writeBytes({bytes, sizeof bytes});
  if (provisional) {
    if (lseek(fd_, static_cast<off_t>(offset_), SEEK_SET) < 0) fail("seeking in", errno);
  } else {
    offset_ += sizeof bytes;
    bytes_written_ += sizeof bytes;
  }
}

void TagFileWriter::flush() {
  checkUsable();
  writePartEnd(false, true);
}

void TagFileWriter::close() {
  if (!error_.empty()) throw IoError(error_);
  if (closed_) return;
  writePartEnd(false, false);
  const int result = ::close(fd_);
  fd_ = -1;
  closed_ = true;
  if (result != 0) fail("closing", errno);
}

}  // namespace tagflow
