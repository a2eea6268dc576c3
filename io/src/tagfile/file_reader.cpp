#include "tagflow/io/tagfile/file_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <thread>

#include "tagflow/core/error.hpp"
#include "tagflow/io/tagfile/writer.hpp"
#include "tagflow/io/truncated_data.hpp"

namespace tagflow {

using namespace tagfile;

namespace {

// The path of part 0 of the set `path` belongs to, if its name follows the part naming.
std::string basePathOf(const std::string& path, std::uint32_t part) {
  if (part == 0) return path;
  const std::filesystem::path file(path);
  const std::string stem = file.stem().string();
  std::string suffix = std::to_string(part);
  suffix.insert(suffix.begin(), '.');
  if (stem.size() <= suffix.size() || !stem.ends_with(suffix)) return "";
  const std::filesystem::path base =
      file.parent_path() /
      (stem.substr(0, stem.size() - suffix.size()) + file.extension().string());
  return TagFileWriter::partPath(base.string(), part) == path ? base.string() : "";
}

}  // namespace

std::vector<std::string> partsReadAfter(const std::string& path) {
  std::error_code error;
  // A pipe would block the open until something writes to it.
  if (!std::filesystem::is_regular_file(path, error)) return {};
  std::uint32_t part = 0;
  try {
    part = TagFileReader(path).header().part;
  } catch (const DataError&) {
    return {};
  } catch (const IoError&) {
    return {};
  }
  const std::string base = basePathOf(path, part);
  return base.empty() ? std::vector<std::string>{} : TagFileWriter::laterParts(base, part);
}

FileReader::FileReader(std::string path, std::size_t block_size, double speed)
    : path_(std::move(path)), block_size_(block_size) {
  if (block_size_ < 1 || block_size_ > kMaxBlockTags) {
    throw InvalidArgument("tag file source: block_size " + std::to_string(block_size_) +
                          " is invalid (valid: 1.." + std::to_string(kMaxBlockTags) + ")");
  }
  setReplaySpeed(speed);
  reader_ = std::make_unique<TagFileReader>(path_);
  header_ = reader_->header();
  base_path_ = basePathOf(path_, header_.part);
}

void FileReader::setReplaySpeed(double speed) {
  if (!(speed < 0 || speed >= 0.1)) {
    throw InvalidArgument("replay speed " + std::to_string(speed) +
                          " is invalid (valid: negative for as fast as possible, or >= 0.1; "
                          "1.0 is real time)");
  }
  speed_ = speed;
  stream_anchor_ = next_begin_;
  wall_anchor_ = std::chrono::steady_clock::now();
}

std::string FileReader::describe() const {
  return "tagfile path=" + path_ + " part=" + std::to_string(header_.part) +
         " block_size=" + std::to_string(block_size_) +
         (speed_ < 0 ? std::string(" speed=max") : " speed=" + std::to_string(speed_)) +
         " recorded by " + header_.software;
}

void FileReader::openNextPart() {
  reader_ = nextPartReader(*reader_, record_.header.sequence);
}

std::unique_ptr<TagFileReader> FileReader::nextPartReader(const TagFileReader& reader,
                                                          std::uint64_t sequence) const {
  const std::uint32_t part = reader.header().part + 1;
  const std::string where = "tag file '" + reader.path() + "'";
  if (base_path_.empty()) {
    throw DataError(where + " continues in part " + std::to_string(part) +
                    ", but its name does not follow the part naming, so the next part cannot be "
                    "found");
  }
  const std::string next_path = TagFileWriter::partPath(base_path_, part);
  if (!std::filesystem::exists(next_path)) {
    // The set ends early, as when its writer was cut between two parts.
    throw TruncatedData(where + " continues in part " + std::to_string(part) + ", but '" +
                        next_path + "' does not exist");
  }
  auto next = std::make_unique<TagFileReader>(next_path);
  if (next->header().recording_id != header_.recording_id || next->header().part != part) {
    throw DataError("tag file '" + next_path + "' is part " + std::to_string(next->header().part) +
                    " of another recording, not part " + std::to_string(part) +
                    " of the recording in '" + path_ + "'");
  }
  next->expectSequence(sequence);
  return next;
}

std::optional<StreamSpan> FileReader::timeSpan() {
  std::optional<StreamSpan> span;
  TagFileReader first(path_);
  std::unique_ptr<TagFileReader> following;
  for (TagFileReader* part = &first;;) {
    const std::optional<PartIndex> index = part->readIndex();
    if (!index) return std::nullopt;
    if (!index->entries.empty()) {
      if (!span) span = StreamSpan{index->entries.front().begin_time, 0};
      span->end = index->entries.back().end_time;
    }
    if (!index->continues) return span;
    following = nextPartReader(*part, index->next_sequence);
    part = following.get();
  }
}

bool FileReader::seekTo(timestamp_t time) {
  if (started_) {
    throw InvalidArgument("tag file " + path_ + ": cannot seek to " + std::to_string(time) +
                          " ps after its stream has begun (valid: before the first block; a "
                          "source streams once, open it again for another range)");
  }
  std::unique_ptr<TagFileReader> part = std::make_unique<TagFileReader>(path_);
  for (;;) {
    const std::optional<PartIndex> index = part->readIndex();
    if (!index) return false;
    const auto& entries = index->entries;
    const bool inside = !entries.empty() && (time < entries.back().end_time || !index->continues);
    if (inside) {
      // The last record that begins at or before `time` holds it (or the gap after it).
      const auto after = std::upper_bound(
          entries.begin(), entries.end(), time,
          [](timestamp_t t, const IndexEntry& entry) { return t < entry.begin_time; });
      const auto entry =
          static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, after - entries.begin() - 1));
      part->seek(*index, entry);
      starts_in_overflow_ = entries[entry].in_overflow_at_begin;
      reader_ = std::move(part);
      return true;
    }
    if (!index->continues) {  // an empty last part: the stream ends here
      reader_ = std::move(part);
      ended_ = true;
      return true;
    }
    part = nextPartReader(*part, index->next_sequence);
  }
}

bool FileReader::loadBlock() {
  while (!loaded_ && !ended_) {
    if (!reader_->next(record_, pending_)) {
      ended_ = true;
      break;
    }
    const RecordHeader& header = record_.header;
    switch (header.kind) {
      case RecordKind::Tags:
        if (started_ && header.begin_time < next_begin_) {
          throw DataError(
              "tag file '" + reader_->path() + "': block " + std::to_string(header.sequence) +
              " begins at " + std::to_string(header.begin_time) +
              " ps, before the previous block ended (" + std::to_string(next_begin_) + " ps)");
        }
        if (!started_) {
          next_begin_ = header.begin_time;
          stream_anchor_ = next_begin_;
          wall_anchor_ = std::chrono::steady_clock::now();
          started_ = true;
        }
        pending_count_ = header.tag_count;
        position_ = 0;
        loaded_ = true;
        break;
      case RecordKind::Marker:
        last_marker_ = record_.marker;
        break;
      case RecordKind::PartEnd:
        if ((header.flags & kPartContinues) != 0) {
          openNextPart();
        } else {
          ended_ = true;
        }
        break;
    }
  }
  return loaded_;
}

bool FileReader::hasData() {
  return loadBlock();
}

void FileReader::pace(timestamp_t end_time) {
  if (speed_ < 0) return;
  const double seconds = static_cast<double>(end_time - stream_anchor_) * 1e-12 / speed_;
  std::this_thread::sleep_until(wall_anchor_ +
                                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(seconds)));
}

bool FileReader::next(BlockBuffer& out) {
  if (!loadBlock()) return false;
  const timestamp_t block_end = record_.header.end_time;
  const std::span<const Tag> rest =
      std::span<const Tag>(pending_).subspan(position_, pending_count_ - position_);
  if (position_ == 0 && pending_count_ <= block_size_) {
    // The whole file block: hand over the decoded buffer, take the pool's in exchange.
    out.storage.swap(pending_);
    out.tags = std::span<const Tag>(out.storage.data(), pending_count_);
    out.special.assign(record_.specials.begin(), record_.specials.end());
    out.end_time = block_end;
    position_ = pending_count_;
  } else {
    const std::size_t count = blockSplitPoint(rest, block_size_);
    out.storage.assign(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(count));
    out.publishStorage();
    out.end_time = count < rest.size() ? rest[count].time : block_end;
    position_ += count;
  }
  out.begin_time = next_begin_;
  next_begin_ = out.end_time;
  if (position_ == pending_count_) loaded_ = false;
  pace(out.end_time);
  return true;
}

}  // namespace tagflow
