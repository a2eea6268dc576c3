#include "tagflow/io/vendor/vendor_file_source.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "tagflow/core/error.hpp"
#include "tagflow/io/truncated_data.hpp"

namespace tagflow {

namespace {

constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
// The most decoded tags that may wait for the decoder's bound to pass them (see next()).
constexpr std::size_t kMostWaitingTags = std::size_t{1} << 24;
// The fewest records a run decodes: fewer would spend more on the run than on its records.
constexpr std::size_t kMinRun = 64;

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
  record_bytes_ = file_.decoder->recordBytes();
  chunk_.resize(kChunkBytes / record_bytes_ * record_bytes_);
  carried_.reserve(maxBlockTags());
}

VendorFileSource::~VendorFileSource() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t VendorFileSource::maxBlockTags() const {
  return block_size_ + block_size_ / 8 + RecordDecoder::kMaxTagsPerRecord * kMinRun;
}

std::string VendorFileSource::describe() const {
  return fmt::format("{} path={} records={} block_size={}", file_.format, file_.path, file_.records,
                     block_size_);
}

std::size_t VendorFileSource::decodeRun(std::vector<Tag>& tags, std::size_t filled,
                                        std::size_t records) {
  if (chunk_decoded_ == chunk_records_) {
    const std::uint64_t count =
        std::min<std::uint64_t>(file_.records - next_record_, chunk_.size() / record_bytes_);
    const std::uint64_t offset = file_.data_offset + next_record_ * record_bytes_;
    const std::size_t wanted = static_cast<std::size_t>(count) * record_bytes_;
    std::size_t got = 0;
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
    chunk_records_ = static_cast<std::size_t>(count);
    chunk_decoded_ = 0;
  }
  const std::size_t count = std::min(records, chunk_records_ - chunk_decoded_);
  Tag* const begin = tags.data() + filled;
  Tag* end = begin;
  try {
    end = file_.decoder->decode(chunk_.data() + chunk_decoded_ * record_bytes_, count, next_record_,
                                handed_out_until_, begin);
    if (next_record_ + count == file_.records) end = file_.decoder->finish(end);
  } catch (const DataError& error) {
    // The decoders know records, not files: the message names the file here.
    throw DataError(fmt::format("'{}': {}", file_.path, error.what()));
  }
  chunk_decoded_ += count;
  next_record_ += count;
  decoded_tags_ += static_cast<std::uint64_t>(end - begin);
  // The run is in order; a run that reaches back before the tags already there is merged in.
  if (filled > 0 && begin != end && begin->time < begin[-1].time) {
    std::inplace_merge(tags.data(), begin, end, byTime);
  }
  return filled + static_cast<std::size_t>(end - begin);
}

bool VendorFileSource::next(BlockBuffer& out) {
  if (ended_) {
    const std::uint64_t complete_end = file_.data_offset + file_.records * record_bytes_;
    const std::uint64_t missing = file_.missing_records;
    file_.missing_records = 0;  // reported once
    const std::string counted =
        missing == 0 ? std::string()
                     : fmt::format("; the header counts {} records, the file holds {}",
                                   file_.records + missing, file_.records);
    if (file_.file_size > complete_end) {
      const std::uint64_t trailing = file_.file_size - complete_end;
      file_.file_size = complete_end;  // reported once
      throw TruncatedData(fmt::format(
          "'{}': the last record is truncated: {} byte(s) at byte offset {} where a record "
          "takes {} (every complete record before it was read){}",
          file_.path, trailing, complete_end, record_bytes_, counted));
    }
    if (missing != 0) {
      throw TruncatedData(fmt::format(
          "'{}': the file is truncated at byte offset {}: it holds {} records, the header "
          "counts {} (every record it holds was read)",
          file_.path, complete_end, file_.records, file_.records + missing));
    }
    return false;
  }
  // The block is decoded in place: the tags carried from the last block, then runs of records.
  std::vector<Tag>& tags = out.storage;
  constexpr std::size_t kRunRoom = RecordDecoder::kMaxTagsPerRecord * kMinRun;
  if (tags.size() < std::max(maxBlockTags(), carried_.size() + kRunRoom)) {
    tags.resize(std::max(maxBlockTags(), carried_.size() + kRunRoom));
  }
  std::copy(carried_.begin(), carried_.end(), tags.begin());
  std::size_t filled = carried_.size();
  std::size_t ready = 0;  // tags before the bound: in order for good
  bool all_decoded = false;
  timestamp_t bound = 0;
  for (;;) {
    all_decoded = next_record_ >= file_.records;
    bound = all_decoded ? std::numeric_limits<timestamp_t>::max() : file_.decoder->futureBound();
    const auto end = tags.begin() + static_cast<std::ptrdiff_t>(filled);
    ready = static_cast<std::size_t>(
        std::lower_bound(tags.begin(), end, bound,
                         [](const Tag& tag, timestamp_t time) { return tag.time < time; }) -
        tags.begin());
    if (ready > block_size_ || all_decoded) break;
    // Tags that cannot be handed out yet wait in memory; a file whose times stop advancing
    // (millions of tags at one time, or disorder past the format's bound) would otherwise
    // take it all, since a block never splits tags of one time.
    if (filled > kMostWaitingTags) {
      throw DataError(fmt::format(
          "'{}': more than {} tags wait to be put in time order at record {} (time {} ps): a "
          "run of tags at one time, or disorder beyond what the format allows, too long to cut "
          "into blocks",
          file_.path, kMostWaitingTags, next_record_, tags[filled - 1].time));
    }
    // As many records as the missing tags take at the rate seen so far; within the room left,
    // which grows only when more than the slack lies beyond the bound.
    const std::uint64_t missing = block_size_ + 1 - ready;
    const std::uint64_t estimate =
        decoded_tags_ == 0 ? missing : missing * next_record_ / decoded_tags_ + 1;
    if (tags.size() - filled < kRunRoom) tags.resize(2 * tags.size());
    const std::size_t records = static_cast<std::size_t>(
        std::min<std::uint64_t>(std::max<std::uint64_t>(estimate, kMinRun),
                                (tags.size() - filled) / RecordDecoder::kMaxTagsPerRecord));
    filled = decodeRun(tags, filled, records);
  }
  const std::size_t count =
      ready == 0 ? 0 : blockSplitPoint(std::span<const Tag>(tags.data(), ready), block_size_);
  carried_.assign(tags.begin() + static_cast<std::ptrdiff_t>(count),
                  tags.begin() + static_cast<std::ptrdiff_t>(filled));
  out.tags = std::span<const Tag>(tags.data(), count);
  if (file_.decoder->wroteSpecialTags()) {
    out.indexSpecialTags();
  } else {
    out.special.clear();
  }
  out.begin_time = handed_out_until_;
  if (count < ready) {
    out.end_time = tags[count].time;
  } else if (!all_decoded) {
    out.end_time = std::max(bound, handed_out_until_ + 1);
  } else {
    const timestamp_t last = count > 0 ? tags[count - 1].time + 1 : handed_out_until_;
    out.end_time = std::max(last, handed_out_until_ + 1);
    ended_ = true;
  }
  handed_out_until_ = out.end_time;
  return true;
}

}  // namespace tagflow
