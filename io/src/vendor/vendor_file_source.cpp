#include "tagflow/io/vendor/vendor_file_source.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

bool byTime(const Tag& a, const Tag& b) {
  return a.time < b.time;
}

}  // namespace

VendorFileSource::VendorFileSource(VendorFile file, std::size_t block_size)
    : file_(std::move(file)), block_size_(block_size) {
  if (block_size_ < 1 || block_size_ > (std::size_t{1} << 26)) {
    throw InvalidArgument(fmt::format("{} source: block_size {} is invalid (valid: 1..67108864)",
                                      file_.format, block_size_));
  }
  fd_ = ::open(file_.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    throw IoError(fmt::format("cannot open '{}': {}", file_.path, std::strerror(errno)));
  }
  const std::size_t record_bytes = file_.decoder->recordBytes();
  chunk_.resize(kChunkBytes / record_bytes * record_bytes);
  pending_.reserve(2 * (chunk_.size() / record_bytes) + block_size_);
}

VendorFileSource::~VendorFileSource() {
  if (fd_ >= 0) ::close(fd_);
}

std::string VendorFileSource::describe() const {
  return fmt::format("{} path={} records={} block_size={}", file_.format, file_.path, file_.records,
                     block_size_);
}

bool VendorFileSource::decodeChunk() {
  if (next_record_ >= file_.records) return false;
  const std::size_t record_bytes = file_.decoder->recordBytes();
  const std::uint64_t count =
      std::min<std::uint64_t>(file_.records - next_record_, chunk_.size() / record_bytes);
  const std::uint64_t offset = file_.data_offset + next_record_ * record_bytes;
  std::size_t got = 0;
  const std::size_t wanted = static_cast<std::size_t>(count) * record_bytes;
  while (got < wanted) {
    const ssize_t n =
        ::pread(fd_, chunk_.data() + got, wanted - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw IoError(fmt::format("reading '{}' failed at byte offset {}: {}", file_.path,
                                offset + got, n < 0 ? std::strerror(errno) : "the file shrank"));
    }
    got += static_cast<std::size_t>(n);
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(position_));
  position_ = 0;
  const std::size_t old_size = pending_.size();
  file_.decoder->decode(chunk_.data(), static_cast<std::size_t>(count), next_record_,
                        handed_out_until_, pending_);
  const auto fresh = pending_.begin() + static_cast<std::ptrdiff_t>(old_size);
  if (!std::is_sorted(fresh, pending_.end(), byTime)) {
    std::stable_sort(fresh, pending_.end(), byTime);
  }
  if (old_size > 0 && fresh != pending_.end() && fresh->time < fresh[-1].time) {
    std::inplace_merge(pending_.begin(), fresh, pending_.end(), byTime);
  }
  next_record_ += count;
  return true;
}

bool VendorFileSource::next(BlockBuffer& out) {
  if (ended_) {
    const std::uint64_t record_bytes = file_.decoder->recordBytes();
    const std::uint64_t complete_end = file_.data_offset + file_.records * record_bytes;
    if (file_.file_size > complete_end) {
      const std::uint64_t trailing = file_.file_size - complete_end;
      file_.file_size = complete_end;  // reported once
      throw DataError(fmt::format(
          "'{}': the last record is truncated: {} byte(s) at byte offset {} where a record "
          "takes {} (every complete record before it was read)",
          file_.path, trailing, complete_end, record_bytes));
    }
    return false;
  }
  std::size_t available = 0;
  bool all_decoded = false;
  timestamp_t bound = 0;
  for (;;) {
    all_decoded = next_record_ >= file_.records;
    bound = all_decoded ? std::numeric_limits<timestamp_t>::max() : file_.decoder->futureBound();
    const auto first = pending_.begin() + static_cast<std::ptrdiff_t>(position_);
    available = static_cast<std::size_t>(
        std::lower_bound(first, pending_.end(), bound,
                         [](const Tag& tag, timestamp_t time) { return tag.time < time; }) -
        first);
    if (available > block_size_ || all_decoded) break;
    if (!decodeChunk()) continue;
  }
  const std::span<const Tag> ready = std::span<const Tag>(pending_).subspan(position_, available);
  const std::size_t count = ready.empty() ? 0 : blockSplitPoint(ready, block_size_);
  out.storage.assign(ready.begin(), ready.begin() + static_cast<std::ptrdiff_t>(count));
  out.publishStorage();
  out.begin_time = handed_out_until_;
  if (count < available) {
    out.end_time = ready[count].time;
  } else if (!all_decoded) {
    out.end_time = std::max(bound, handed_out_until_ + 1);
  } else {
    const timestamp_t last = count > 0 ? ready[count - 1].time + 1 : handed_out_until_;
    out.end_time = std::max(last, handed_out_until_ + 1);
    ended_ = true;
  }
  started_ = true;
  position_ += count;
  handed_out_until_ = out.end_time;
  return true;
}

}  // namespace tagflow
