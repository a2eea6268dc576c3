#include "tagflow/io/tagfile/writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <system_error>

#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "write_fully.hpp"

namespace tagflow {

using namespace tagfile;

namespace {

// Whether a file already at `path` is open in this process: the input of a graph, or the file
// of another writer. Opening it for writing would empty it under its reader.
bool openInThisProcess(const std::string& path) {
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0 || !S_ISREG(target.st_mode)) return false;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    struct stat open {};
    if (::stat(entry.path().c_str(), &open) == 0 && open.st_dev == target.st_dev &&
        open.st_ino == target.st_ino) {
      return true;
    }
  }
  return false;
}

}  // namespace

void TagFileOptions::validate() const {
  if (path.empty()) throw InvalidArgument("tag file path must not be empty");
  if (max_file_size < kMinMaxFileSize || max_file_size > (std::uint64_t{1} << 62)) {
    throw InvalidArgument("max_file_size " + std::to_string(max_file_size) +
                          " bytes is invalid (valid: " + std::to_string(kMinMaxFileSize) +
                          "..2^62)");
  }
  // Every part opens with the configuration and the channel list: a header beyond the
  // readers' bound would make the whole recording unreadable.
  FileHeader header;
  header.software = "tagflow " + tagflowVersion();
  header.configuration = configuration;
  header.channels = channels;
  if (const std::size_t size = encodeFileHeader(header).size(); size > kMaxFileHeaderSize) {
    throw InvalidArgument(
        "tag file header of " + std::to_string(size) + " bytes, with a configuration of " +
        std::to_string(configuration.size()) + " bytes and " + std::to_string(channels.size()) +
        " channels, is too large (valid: up to " + std::to_string(kMaxFileHeaderSize) + " bytes)");
  }
  if (sync_every != 0 && (sync_every < kMinMaxFileSize || sync_every > (std::uint64_t{1} << 62))) {
    throw InvalidArgument("sync_every " + std::to_string(sync_every) +
                          " bytes is invalid (valid: 0 for none, or " +
                          std::to_string(kMinMaxFileSize) + "..2^62)");
  }
}

void BlockPacker::pack(std::span<const Tag> tags, timestamp_t begin_time, timestamp_t end_time,
                       EncodedBlock& out) {
  if (tags.size() > kMaxBlockTags) {
    throw DataError("a tag file block holds at most " + std::to_string(kMaxBlockTags) + " tags; " +
                    std::to_string(tags.size()) + " share one time");
  }
  // A record the readers would refuse is not written: the block's range in order and within
  // the stream times, its first and last tags inside it.
  const bool range_valid =
      begin_time <= end_time && begin_time >= -kStreamTimeLimit && end_time <= kStreamTimeLimit + 1;
  if (!range_valid ||
      (!tags.empty() && (tags.front().time < begin_time || tags.back().time >= end_time))) {
    throw DataError("a tag file block [" + std::to_string(begin_time) + ", " +
                    std::to_string(end_time) + ") ps " +
                    (range_valid
                         ? "does not hold its tags (from " + std::to_string(tags.front().time) +
                               " to " + std::to_string(tags.back().time) + " ps)"
                         : std::string("is invalid (valid: -2^62 <= begin <= end <= "
                                       "2^62 + 1 ps)")));
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
  out.in_overflow_at_begin = in_overflow_;
  // Only the special tags can change it: the encoder found them, no second pass over all.
  for (const std::uint32_t index : encoder_.specials()) {
    if (tags[index].type == TagType::OverflowBegin) in_overflow_ = true;
    if (tags[index].type == TagType::OverflowEnd) in_overflow_ = false;
  }
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

std::vector<std::string> TagFileWriter::laterParts(const std::string& path, std::uint32_t part) {
  std::vector<std::string> parts;
  for (std::uint32_t next = part + 1;; ++next) {
    std::string next_path = partPath(path, next);
    std::error_code error;
    if (!std::filesystem::exists(next_path, error)) return parts;
    parts.push_back(std::move(next_path));
  }
}

TagFileWriter::TagFileWriter(TagFileOptions options)
    : options_(std::move(options)), sync_(options_.sync) {
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
           std::to_string(offset_) + ": " + std::strerror(error_number);
  if (options_.partial_output_kept) {
    error_ += "; the " + std::to_string(offset_) + " bytes before it (" + std::to_string(part_) +
              " earlier part(s) complete) remain readable";
  }
  // Not even the part's header landed: an empty file no reader accepts, left behind as if it
  // were a recording. The earlier parts still read as a complete set without it.
  struct stat status {};
  if (offset_ == 0 && fd_ >= 0 && fstat(fd_, &status) == 0 && S_ISREG(status.st_mode) &&
      ::unlink(part_path_.c_str()) == 0) {
    error_ = what + " tag file '" + part_path_ +
             "' failed at its start: " + std::strerror(error_number) +
             "; nothing was written, the empty file was removed" +
             (part_ == 0 || !options_.partial_output_kept
                  ? std::string()
                  : ", and the " + std::to_string(part_) + " earlier part(s) remain readable");
    ::close(fd_);
    fd_ = -1;
    throw IoError(error_);
  }
  if (fd_ >= 0) {
    // Best effort: drop the partial record and end the part cleanly where it was complete.
    if (ftruncate(fd_, static_cast<off_t>(offset_)) == 0 &&
        lseek(fd_, static_cast<off_t>(offset_), SEEK_SET) >= 0) {
      std::uint8_t bytes[kRecordHeaderSize];
      encodePartEnd(false, sequence_, last_time_, bytes);
      [[maybe_unused]] const auto ignored = ::write(fd_, bytes, sizeof bytes);
    }
    ::close(fd_);
    fd_ = -1;
  }
  throw IoError(error_);
}

// One write puts the bytes and a provisional part end behind them, and the position goes back
// before the part end, which the next record overwrites: the part on disk reads as complete
// after every record, and a writer killed at any moment leaves every record whole except at
// most the one it was writing, at the end.
void TagFileWriter::appendEnded(std::span<const std::uint8_t> head,
                                std::span<const std::uint8_t> payload, std::uint64_t sequence,
                                timestamp_t time) {
  std::uint8_t end[kRecordHeaderSize];
  encodePartEnd(false, sequence, time, end);
  iovec pieces[] = {{const_cast<std::uint8_t*>(head.data()), head.size()},
                    {const_cast<std::uint8_t*>(payload.data()), payload.size()},
                    {end, sizeof end}};
  if (const int error_number = writeFully(fd_, pieces); error_number != 0) {
    fail("writing", error_number);
  }
  const std::uint64_t written = head.size() + payload.size();
  if (lseek(fd_, static_cast<off_t>(offset_ + written), SEEK_SET) < 0) fail("seeking in", errno);
  offset_ += written;
  bytes_written_ += written;
  writeBehind();
}

void TagFileWriter::writeBehind() {
  checkSynced();
  if (options_.sync_every != 0 && offset_ - sync_asked_ >= options_.sync_every) {
    // A descriptor that cannot be duplicated only leaves the data to the system's schedule.
    sync_.request(fd_, part_);
    sync_asked_ = offset_;
  }
  constexpr std::uint64_t kWriteBehindBytes = std::uint64_t{8} << 20;
  if (offset_ - written_behind_ < kWriteBehindBytes) return;
  // Only starts the device's writes (it waits only where the device's queue is full). It is a
  // hint: where it is refused (a file system or sandbox without it) the system's own schedule
  // stays; only the errors of the data themselves (EIO, ENOSPC) stop the recording.
  if (sync_file_range(fd_, static_cast<off_t>(written_behind_),
                      static_cast<off_t>(offset_ - written_behind_), SYNC_FILE_RANGE_WRITE) != 0 &&
      (errno == EIO || errno == ENOSPC)) {
    fail("writing back", errno);
  }
  written_behind_ = offset_;
}

void TagFileWriter::checkSynced() {
  if (const int error_number = sync_.error(); error_number != 0) {
    failSync(error_number, sync_.failedFile());
  }
}

void TagFileWriter::failSync(int error_number, std::uint64_t part) {
  const std::string synced = partPath(options_.path, static_cast<std::uint32_t>(part));
  try {
    fail("writing", error_number);
  } catch (const IoError&) {
    // The sync's part, which may be an earlier one, is the part at risk; the current part is
    // ended where it stands.
    error_ = "syncing tag file '" + synced + "' failed: " + std::strerror(error_number) +
             ": what was written to it may not be on the device; the recording stopped at byte "
             "offset " +
             std::to_string(offset_) + " of '" + part_path_ + "'";
    throw IoError(error_);
  }
}

void TagFileWriter::openPart() {
  part_path_ = partPath(options_.path, part_);
  if (openInThisProcess(part_path_)) {
    error_ = "tag file '" + part_path_ +
             "' is open in this process (a graph's input, or another writer's file): writing it "
             "would destroy it (valid: another path)";
    throw InvalidArgument(error_);
  }
  fd_ = ::open(part_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int error_number = errno;
    error_ = "cannot create tag file '" + part_path_ + "': " + std::strerror(error_number);
    throw IoError(error_);
  }
  offset_ = 0;
  written_behind_ = 0;
  sync_asked_ = 0;
  header_.part = part_;
  index_ = PartIndex{};
  index_.first_sequence = sequence_;
  appendEnded(encodeFileHeader(header_), {}, sequence_, last_time_);
}

// The next part is complete on disk before this one says that the set continues there, so a
// writer killed in between leaves this part ending cleanly (and a next part nothing reads),
// never a set whose next part is missing or cut inside its file header.
void TagFileWriter::beginNextPart() {
  const int previous = fd_;
  const std::string previous_path = part_path_;
  fd_ = -1;
  ++part_;
  split_pending_ = false;
  const PartIndex previous_index = std::move(index_);
  try {
    openPart();
  } catch (...) {
    ::close(previous);  // it keeps its provisional part end: the set reads as complete
    throw;
  }
  int error_number = endPart(previous, true, previous_index);
  if (error_number == 0 && options_.sync_every != 0) sync_.request(previous, part_ - 1);
  if (::close(previous) != 0 && error_number == 0) error_number = errno;
  if (error_number != 0) {
    error_ = "ending tag file '" + previous_path + "' failed: " + std::strerror(error_number) +
             (options_.partial_output_kept ? "; its records remain readable" : "");
    ::close(fd_);
    fd_ = -1;
    throw IoError(error_);
  }
}

void TagFileWriter::writeRecord(RecordHeader header, std::span<const std::uint8_t> payload,
                                bool in_overflow_at_begin) {
  checkUsable();
  if (split_pending_ || offset_ >= options_.max_file_size) beginNextPart();
  header.sequence = sequence_;
  if (header.kind == RecordKind::Tags) {
    index_.entries.push_back(
        {offset_, sequence_, header.begin_time, header.end_time, in_overflow_at_begin});
  }
  std::uint8_t bytes[kRecordHeaderSize];
  encodeRecordHeader(header, bytes);
  appendEnded(bytes, payload, sequence_ + 1, header.end_time);
  ++sequence_;
  last_time_ = header.end_time;
}

void TagFileWriter::write(EncodedBlock& block) {
  writeRecord(block.header, block.payload, block.in_overflow_at_begin);
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
void TagFileWriter::encodePartEnd(bool continues, std::uint64_t sequence, timestamp_t time,
                                  std::uint8_t* out) {
  RecordHeader header;
  header.kind = RecordKind::PartEnd;
  header.flags = continues ? kPartContinues : 0;
  header.sequence = sequence;
  header.begin_time = header.end_time = time;
  encodeRecordHeader(header, out);
}

int TagFileWriter::endPart(int fd, bool continues, const PartIndex& index) {
  std::uint8_t bytes[kRecordHeaderSize];
  encodePartEnd(continues, sequence_, last_time_, bytes);
  // A part of more records than an index can hold (parts over about 30 GiB) ends without one.
  std::vector<std::uint8_t> payload;
  if (index.entries.size() <= kMaxIndexEntries) {
    payload = encodePartIndex(index);
    RecordHeader header = decodeRecordHeader(bytes);
    header.raw_size = header.stored_size = static_cast<std::uint32_t>(payload.size());
    header.payload_crc = crc32c(payload);
    encodeRecordHeader(header, bytes);
  }
  iovec pieces[] = {{bytes, sizeof bytes}, {payload.data(), payload.size()}};
  const int error_number = writeFully(fd, pieces);
  if (error_number == 0) bytes_written_ += sizeof bytes + payload.size();
  return error_number;
}

// Every record already left the set complete on disk (appendEnded()).
void TagFileWriter::flush() {
  checkUsable();
}

void TagFileWriter::close() {
  if (!error_.empty()) throw IoError(error_);
  if (closed_) return;
  if (const int error_number = endPart(fd_, false, index_); error_number != 0) {
    fail("writing", error_number);
  }
  offset_ += kRecordHeaderSize;
  const int result = ::close(fd_);
  fd_ = -1;
  closed_ = true;
  if (result != 0) fail("closing", errno);
  sync_.wait();
  checkSynced();
}

}  // namespace tagflow
