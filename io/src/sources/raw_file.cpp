#include "tagflow/io/sources/raw_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "sources/record_check.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/tagfile/format.hpp"
#include "tagflow/io/truncated_data.hpp"
#include "write_fully.hpp"

namespace tagflow {

static_assert(std::endian::native == std::endian::little,
              "raw tag files are little-endian records used as they are read");

namespace {

// The most tags of one time a block may hold: a block never splits one time, so a longer run
// (a file of zero bytes reads as tags all at time 0) would otherwise take the memory.
constexpr std::size_t kMostTagsAtOneTime = std::size_t{1} << 24;

std::string systemError() {
  return std::strerror(errno);
}

}  // namespace

RawFileSource::RawFileSource(std::string path, std::size_t block_size)
    : path_(std::move(path)), block_size_(block_size) {
  if (block_size_ < 1 || block_size_ > (std::size_t{1} << 26)) {
    throw InvalidArgument("raw source: block_size " + std::to_string(block_size_) +
                          " is invalid (valid: 1..67108864)");
  }
  descriptor_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor_ < 0) {
    throw IoError("cannot open raw tag file '" + path_ + "': " + systemError());
  }
  struct stat info {};
  if (fstat(descriptor_, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(descriptor_);
    throw IoError("raw tag file '" + path_ + "' is not a readable regular file");
  }
  const auto size = static_cast<std::uint64_t>(info.st_size);
  total_tags_ = static_cast<std::size_t>(size / sizeof(Tag));
  tail_bytes_ = size % sizeof(Tag);
  // Read front to back once: the kernel reads ahead.
  posix_fadvise(descriptor_, 0, 0, POSIX_FADV_SEQUENTIAL);
}

RawFileSource::~RawFileSource() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

std::string RawFileSource::describe() const {
  return "raw path=" + path_ + " tags=" + std::to_string(total_tags_) +
         " block_size=" + std::to_string(block_size_);
}

void RawFileSource::readChecked(Tag* to, std::size_t count) {
  const std::size_t bytes = count * sizeof(Tag);
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::pread(descriptor_, reinterpret_cast<char*>(to) + got, bytes - got,
                              static_cast<off_t>(read_ * sizeof(Tag) + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw IoError("reading raw tag file '" + path_ + "' failed at byte offset " +
                    std::to_string(read_ * sizeof(Tag) + got) + ": " + systemError());
    }
    if (n == 0) {
      struct stat info {};
      const std::string size =
          fstat(descriptor_, &info) == 0 ? std::to_string(info.st_size) : "fewer";
      throw IoError("raw tag file '" + path_ + "' was cut to " + size +
                    " bytes while being read (it held " +
                    std::to_string(total_tags_ * sizeof(Tag)) + " bytes of records when opened)");
    }
    got += static_cast<std::size_t>(n);
  }
  // Checked and indexed while they are in cache (a bad record is then found again with its
  // details).
  if (read_ == 0 && count > 0) last_read_time_ = to[0].time;
  const std::size_t specials_before = specials_.size();
  if (!checkRecords(std::span<const Tag>(to, count), last_read_time_, read_, specials_)) {
    specials_.resize(specials_before);
    throwBadRecord(to, count);
  }
  // Sorted: the file's first tag and each run's last bound the range of stream times.
  if (count > 0 &&
      (to[count - 1].time > kStreamTimeLimit || (read_ == 0 && to[0].time < -kStreamTimeLimit))) {
    std::size_t bad = to[0].time < -kStreamTimeLimit ? 0 : count - 1;
    while (bad > 0 && to[bad - 1].time > kStreamTimeLimit) --bad;
    const std::size_t index = read_ + bad;
    throw DataError("raw tag file '" + path_ + "': tag " + std::to_string(index) +
                    " (byte offset " + std::to_string(index * sizeof(Tag)) + ") at " +
                    std::to_string(to[bad].time) +
                    " ps is invalid (valid: -2^62..2^62 ps, about +-53 days)");
  }
  if (count > 0) last_read_time_ = to[count - 1].time;
  read_ += count;
}

void RawFileSource::throwBadRecord(const Tag* records, std::size_t count) const {
  timestamp_t previous = last_read_time_;
  for (std::size_t i = 0; i < count; ++i) {
    const Tag& tag = records[i];
    const std::size_t index = read_ + i;
    if (static_cast<std::uint8_t>(tag.type) > kMaxTagType) {
      // A tag file (or any file that is not raw tags) fails here at its first bytes.
      const bool tag_file = index == 0 && std::memcmp(&tag, tagfile::kFileMagic.data(),
                                                      tagfile::kFileMagic.size()) == 0;
      throw DataError("raw tag file '" + path_ + "': tag " + std::to_string(index) +
                      " (byte offset " + std::to_string(index * sizeof(Tag)) + ") has type " +
                      std::to_string(static_cast<int>(tag.type)) + " (valid: 0..4)" +
                      (tag_file ? "; the file begins as a tagflow tag file: read it as one (a "
                                  "name ending in .tags, or source kind 'tagfile')"
                                : ""));
    }
    if (tag.time < previous) {
      throw DataError("raw tag file '" + path_ + "': tag " + std::to_string(index) +
                      " (byte offset " + std::to_string(index * sizeof(Tag)) + ") at " +
                      std::to_string(tag.time) + " ps is earlier than the tag before it at " +
                      std::to_string(previous) + " ps (tags must be sorted by time)");
    }
    previous = tag.time;
  }
  throw std::logic_error("raw tag file check: no bad record found again");
}

bool RawFileSource::next(BlockBuffer& out) {
  if (position_ == total_tags_) {
    if (tail_bytes_ == 0) return false;
    const std::uint64_t tail = tail_bytes_;
    tail_bytes_ = 0;  // reported once
    throw TruncatedData("raw tag file '" + path_ + "': the record at byte offset " +
                        std::to_string(total_tags_ * sizeof(Tag)) +
                        " is truncated (the file ends " + std::to_string(tail) +
                        " bytes into it, where a record takes 16); every tag before it was read");
  }
  // The block and the record after it (where the block may end); a run of equal times that
  // reaches past them makes the block longer, since a block never splits one time.
  std::vector<Tag>& storage = out.storage;
  std::size_t filled = ahead_.size();
  std::size_t wanted = std::min(total_tags_ - position_, block_size_ + 1);
  if (storage.size() < std::max(wanted, filled)) storage.resize(std::max(wanted, filled));
  std::copy(ahead_.begin(), ahead_.end(), storage.begin());
  std::size_t count = 0;
  for (;;) {
    if (wanted > filled) {
      readChecked(storage.data() + filled, wanted - filled);
      filled = wanted;
    }
    count = blockSplitPoint(std::span<const Tag>(storage.data(), filled), block_size_);
    if (count < filled || position_ + filled == total_tags_) break;
    if (filled > kMostTagsAtOneTime) {
      throw DataError("raw tag file '" + path_ + "': more than " +
                      std::to_string(kMostTagsAtOneTime) + " tags from tag " +
                      std::to_string(position_) + " (byte offset " +
                      std::to_string(position_ * sizeof(Tag)) + ") on share the time " +
                      std::to_string(storage[0].time) +
                      " ps, too many for one block (a block never splits one time)");
    }
    wanted = std::min(total_tags_ - position_, 2 * filled);
    if (storage.size() < wanted) storage.resize(wanted);
  }
  out.tags = std::span<const Tag>(storage.data(), count);
  out.special.clear();
  std::size_t handed = 0;
  while (handed < specials_.size() && specials_[handed] < position_ + count) {
    out.special.push_back(static_cast<std::uint32_t>(specials_[handed++] - position_));
  }
  specials_.erase(specials_.begin(), specials_.begin() + static_cast<std::ptrdiff_t>(handed));
  ahead_.assign(storage.begin() + static_cast<std::ptrdiff_t>(count),
                storage.begin() + static_cast<std::ptrdiff_t>(filled));
  out.begin_time = position_ == 0 ? storage[0].time : next_begin_;  // begins at the first tag
  out.end_time = count < filled ? storage[count].time : storage[count - 1].time + 1;
  position_ += count;
  next_begin_ = out.end_time;
  return true;
}

RawFileWriter::RawFileWriter(std::string path) : path_(std::move(path)) {
  descriptor_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (descriptor_ < 0) {
    throw IoError("cannot create raw tag file '" + path_ + "': " + systemError());
  }
  pending_.reserve(kChunkBytes);
}

RawFileWriter::~RawFileWriter() {
  try {
    close();
  } catch (const IoError&) {
    // A destructor cannot report it; callers that need to know call close().
  }
}

void RawFileWriter::write(std::span<const Tag> tags) {
  if (descriptor_ < 0) throw IoError("raw tag file '" + path_ + "' is already closed");
  std::span<const std::byte> bytes = std::as_bytes(tags);
  bytes_given_ += bytes.size();
  while (!bytes.empty()) {
    if (pending_.empty() && bytes.size() >= kChunkBytes) {
      writeOut(bytes.first(kChunkBytes));
      bytes = bytes.subspan(kChunkBytes);
      continue;
    }
    const std::size_t taken = std::min(kChunkBytes - pending_.size(), bytes.size());
    pending_.insert(pending_.end(), bytes.begin(),
                    bytes.begin() + static_cast<std::ptrdiff_t>(taken));
    bytes = bytes.subspan(taken);
    if (pending_.size() == kChunkBytes) {
      writeOut(pending_);
      pending_.clear();
    }
  }
}

void RawFileWriter::writeOut(std::span<const std::byte> bytes) {
  // writev does not write through its pieces: the cast only fits its signature.
  iovec piece{const_cast<std::byte*>(bytes.data()), bytes.size()};
  if (const int error_number = writeFully(descriptor_, {&piece, 1}); error_number != 0) {
    closeDescriptor();
    throw IoError("writing raw tag file '" + path_ + "' failed after " +
                  std::to_string(bytes_in_file_) + " bytes: " + std::strerror(error_number));
  }
  bytes_in_file_ += bytes.size();
}

void RawFileWriter::close() {
  if (descriptor_ < 0) return;
  writeOut(pending_);
  pending_.clear();
  if (!closeDescriptor()) {
    throw IoError("closing raw tag file '" + path_ + "' failed after " +
                  std::to_string(bytes_in_file_) + " bytes: " + systemError());
  }
}

bool RawFileWriter::closeDescriptor() {
  const bool closed = ::close(descriptor_) == 0;
  descriptor_ = -1;
  return closed;
}

}  // namespace tagflow
