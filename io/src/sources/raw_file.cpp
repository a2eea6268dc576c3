#include "tagflow/io/sources/raw_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "tagflow/core/error.hpp"
#include "tagflow/io/truncated_data.hpp"

namespace tagflow {

static_assert(std::endian::native == std::endian::little,
              "raw tag files are little-endian records read in place");

namespace {

constexpr std::size_t kMinLookaheadTags = 1 << 16;

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
  file_ = std::fopen(path_.c_str(), "rb");
  if (file_ == nullptr) {
    throw IoError("cannot open raw tag file '" + path_ + "': " + systemError());
  }
  struct stat info {};
  if (fstat(fileno(file_), &info) != 0 || !S_ISREG(info.st_mode)) {
    std::fclose(file_);
    throw IoError("raw tag file '" + path_ + "' is not a readable regular file");
  }
  const auto size = static_cast<std::uint64_t>(info.st_size);
  total_tags_ = size / sizeof(Tag);
  tail_bytes_ = size % sizeof(Tag);
  lookahead_.reserve(std::max(kMinLookaheadTags, 2 * block_size_ + 1));
}

RawFileSource::~RawFileSource() {
  if (file_ != nullptr) std::fclose(file_);
}

std::string RawFileSource::describe() const {
  return "raw path=" + path_ + " tags=" + std::to_string(total_tags_) +
         " block_size=" + std::to_string(block_size_);
}

bool RawFileSource::refill() {
  if (end_of_file_) return false;
  // Keep the unconsumed tail, then read behind it.
  lookahead_.erase(lookahead_.begin(), lookahead_.begin() + static_cast<std::ptrdiff_t>(position_));
  consumed_tags_ += position_;
  position_ = 0;
  const std::size_t old_size = lookahead_.size();
  // Up to the size seen at opening, so that the records read and the damaged tail named agree.
  const std::size_t room = static_cast<std::size_t>(std::min<std::uint64_t>(
      lookahead_.capacity() - old_size, total_tags_ - consumed_tags_ - old_size));
  lookahead_.resize(lookahead_.capacity());
  const std::size_t got = std::fread(lookahead_.data() + old_size, sizeof(Tag), room, file_);
  if (got < room && std::ferror(file_)) {
    throw IoError("reading raw tag file '" + path_ + "' failed at byte offset " +
                  std::to_string((consumed_tags_ + old_size + got) * sizeof(Tag)) + ": " +
                  systemError());
  }
  lookahead_.resize(old_size + got);
  for (std::size_t i = old_size; i < lookahead_.size(); ++i) {
    const Tag& tag = lookahead_[i];
    const std::uint64_t index = consumed_tags_ + i;
    if (static_cast<std::uint8_t>(tag.type) > kMaxTagType) {
      throw DataError("raw tag file '" + path_ + "': tag " + std::to_string(index) +
                      " (byte offset " + std::to_string(index * sizeof(Tag)) + ") has type " +
                      std::to_string(static_cast<int>(tag.type)) + " (valid: 0..4)");
    }
    if (index > 0 && tag.time < last_time_) {
      throw DataError("raw tag file '" + path_ + "': tag " + std::to_string(index) +
                      " (byte offset " + std::to_string(index * sizeof(Tag)) + ") at " +
                      std::to_string(tag.time) + " ps is earlier than the tag before it at " +
                      std::to_string(last_time_) + " ps (tags must be sorted by time)");
    }
    last_time_ = tag.time;
  }
  if (got < room || consumed_tags_ + lookahead_.size() == total_tags_) end_of_file_ = true;
  return got > 0;
}

bool RawFileSource::next(BlockBuffer& out) {
  while (!end_of_file_ && lookahead_.size() - position_ <= block_size_) refill();
  const std::span<const Tag> rest = std::span<const Tag>(lookahead_).subspan(position_);
  if (rest.empty()) {
    if (tail_bytes_ == 0) return false;
    const std::uint64_t tail = tail_bytes_;
    tail_bytes_ = 0;  // reported once
    throw TruncatedData("raw tag file '" + path_ + "': the record at byte offset " +
                        std::to_string(total_tags_ * sizeof(Tag)) +
                        " is truncated (the file ends " + std::to_string(tail) +
                        " bytes into it, where a record takes 16); every tag before it was read");
  }
  if (!started_) {
    next_begin_ = rest.front().time;
    started_ = true;
  }
  const std::size_t count = blockSplitPoint(rest, block_size_);
  out.storage.assign(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(count));
  out.publishStorage();
  out.begin_time = next_begin_;
  out.end_time = count < rest.size() ? rest[count].time : rest[count - 1].time + 1;
  position_ += count;
  next_begin_ = out.end_time;
  return true;
}

RawFileWriter::RawFileWriter(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr)
    throw IoError("cannot create raw tag file '" + path_ + "': " + systemError());
}

RawFileWriter::~RawFileWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void RawFileWriter::write(std::span<const Tag> tags) {
  if (file_ == nullptr) throw IoError("raw tag file '" + path_ + "' is already closed");
  const std::size_t written = std::fwrite(tags.data(), sizeof(Tag), tags.size(), file_);
  bytes_written_ += written * sizeof(Tag);
  if (written != tags.size()) {
    throw IoError("writing raw tag file '" + path_ + "' failed after " +
                  std::to_string(bytes_written_) + " bytes: " + systemError());
  }
}

void RawFileWriter::close() {
  if (file_ == nullptr) return;
  const bool flushed = std::fflush(file_) == 0;
  const int saved_errno = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    errno = flushed ? errno : saved_errno;
    throw IoError("closing raw tag file '" + path_ + "' failed after " +
                  std::to_string(bytes_written_) + " bytes: " + systemError());
  }
}

}  // namespace tagflow
