#include "tagflow/io/sources/raw_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

// Blocks are checked and advised ahead in steps of at least this many records.
constexpr std::size_t kMinCheckStep = std::size_t{1} << 16;

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
  if (total_tags_ == 0) return;
  void* mapping = mmap(nullptr, total_tags_ * sizeof(Tag), PROT_READ, MAP_SHARED, descriptor_, 0);
  if (mapping == MAP_FAILED) {
    const std::string reason = systemError();
    ::close(descriptor_);
    throw IoError("cannot map raw tag file '" + path_ + "': " + reason);
  }
  // Read front to back once: the kernel reads ahead and may drop pages behind.
  madvise(mapping, total_tags_ * sizeof(Tag), MADV_SEQUENTIAL);
  records_ = static_cast<const Tag*>(mapping);
}

RawFileSource::~RawFileSource() {
  if (records_ != nullptr) munmap(const_cast<Tag*>(records_), total_tags_ * sizeof(Tag));
  if (descriptor_ >= 0) ::close(descriptor_);
}

std::string RawFileSource::describe() const {
  return "raw path=" + path_ + " tags=" + std::to_string(total_tags_) +
         " block_size=" + std::to_string(block_size_);
}

void RawFileSource::checkStillThere() const {
  struct stat info {};
  if (fstat(descriptor_, &info) != 0 ||
      static_cast<std::uint64_t>(info.st_size) < total_tags_ * sizeof(Tag)) {
    throw IoError("raw tag file '" + path_ + "' was cut to " + std::to_string(info.st_size) +
                  " bytes while being read (it held " + std::to_string(total_tags_ * sizeof(Tag)) +
                  " bytes of records when opened)");
  }
}

void RawFileSource::checkUpTo(std::size_t end) {
  if (end <= checked_) return;
  // Maps the step's pages in one call rather than a page fault every few pages; a kernel
  // without MADV_POPULATE_READ (before 5.14) faults them in as they are read.
  const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto from = reinterpret_cast<std::uintptr_t>(records_ + checked_) & ~(page - 1);
  const auto to = reinterpret_cast<std::uintptr_t>(records_ + end);
  madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_READ);
  // One pass: the order and type checks without a branch (the rare bad record is then found
  // again with its details) and the positions of the special tags for the blocks' index.
  bool bad = false;
  timestamp_t previous = checked_ > 0 ? records_[checked_ - 1].time : records_[0].time;
  for (std::size_t i = checked_; i < end; ++i) {
    const Tag& tag = records_[i];
    const auto type = static_cast<std::uint8_t>(tag.type);
    bad |= (type > kMaxTagType) | (tag.time < previous);
    previous = tag.time;
    if (type != 0) specials_.push_back(i);
  }
  if (bad) {
    for (std::size_t i = checked_; i < end; ++i) {
      const Tag& tag = records_[i];
      if (static_cast<std::uint8_t>(tag.type) > kMaxTagType) {
        throw DataError("raw tag file '" + path_ + "': tag " + std::to_string(i) +
                        " (byte offset " + std::to_string(i * sizeof(Tag)) + ") has type " +
                        std::to_string(static_cast<int>(tag.type)) + " (valid: 0..4)");
      }
      if (i > 0 && tag.time < records_[i - 1].time) {
        throw DataError("raw tag file '" + path_ + "': tag " + std::to_string(i) +
                        " (byte offset " + std::to_string(i * sizeof(Tag)) + ") at " +
                        std::to_string(tag.time) + " ps is earlier than the tag before it at " +
                        std::to_string(records_[i - 1].time) + " ps (tags must be sorted by time)");
      }
    }
  }
  checked_ = end;
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
  checkStillThere();
  // The block and the record after it (where the block may end) must be checked; checking in
  // larger steps keeps the per-step costs small.
  const std::size_t wanted = std::min(total_tags_, position_ + block_size_ + 1);
  if (wanted > checked_) {
    checkUpTo(std::min(total_tags_, std::max(wanted, checked_ + kMinCheckStep)));
  }
  const std::span<const Tag> rest(records_ + position_, total_tags_ - position_);
  if (!started_) {
    next_begin_ = rest.front().time;
    started_ = true;
  }
  const std::size_t count = blockSplitPoint(rest, block_size_);
  checkUpTo(std::min(total_tags_, position_ + count + 1));  // a run of equal times may reach on
  out.tags = rest.first(count);
  out.special.clear();
  while (next_special_ < specials_.size() && specials_[next_special_] < position_ + count) {
    out.special.push_back(static_cast<std::uint32_t>(specials_[next_special_++] - position_));
  }
  if (next_special_ == specials_.size()) {
    specials_.clear();
    next_special_ = 0;
  }
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
