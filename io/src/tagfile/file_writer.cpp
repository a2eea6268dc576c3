#include "tagflow/io/tagfile/file_writer.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

// Fewest tags per recorded block: the graph's default block, small enough to stay in cache
// while it is packed, large enough that the 56-byte record header costs nothing.
constexpr std::size_t kBlockTags = 16384;
// Tag buffers in circulation between the node and the recorder's thread: enough that the
// node rarely waits while the recorder is off its core on a machine with fewer cores than
// threads (to disk with fsync, six gave 128 to 160 MTags/s where sixteen gave 160 to 179).
constexpr std::size_t kBuffers = 16;

// Copies four tags to `out` (16-byte aligned) past the caches. The recorder's thread reads the
// buffer on another core; an ordinary store would first fetch each line back from that core
// (it read the buffer's previous contents), which made this copy a third of its speed while
// the recorder ran. The recorder then reads the tags from memory instead of from this core's
// cache, which is slower for it: worth it only while the recorder keeps up, so that the copy
// is what the graph waits for. The caller fences before the buffer changes hands.
void copyFourPastCache(const Tag* in, Tag* out) {
  for (std::size_t k = 0; k < 4; ++k) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + k),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + k)));
  }
}

}  // namespace

const ParameterSchema& FileWriter::schema() {
  static const ParameterSchema schema(
      "FileWriter",
      "records the tags of the channels (and all overflow, missed-events, error tags) to a tag "
      "file",
      {ParameterSpec::text("path").help(
           "tag file to write; further parts get .1, .2, ... before the extension"),
       ParameterSpec::channels("channels").sizeBetween(1, SIZE_MAX).help("channels to record"),
       ParameterSpec::integer("max_file_size")
           .unit("bytes")
           .atLeast(static_cast<double>(kMinMaxFileSize))
           .byDefault(static_cast<std::int64_t>(kDefaultMaxFileSize))
           .help("size after which a new part begins"),
       ParameterSpec::text("compression")
           .oneOf({"none", "zstd", "lz4"})
           .byDefault(std::string("none"))
           .help("general compressor behind the packed blocks"),
       ParameterSpec::text("configuration")
           .byDefault(std::string())
           .help("text stored in the file as the source's configuration"),
       ParameterSpec::integer("sync_every")
           .unit("bytes")
           .atLeast(0)
           .byDefault(static_cast<std::int64_t>(kDefaultSyncEvery))
           .help("bytes between the background syncs that make the recording durable while it "
                 "runs (0: none, else at least 4096)")});
  return schema;
}

MeasurementKind fileWriterKind() {
  return {.schema = &FileWriter::schema(),
          .make =
              [](const std::string& name, const Parameters& p) {
                return std::make_unique<FileWriter>(
                    name, p.getString("path"), channelListArgument(p, "channels"),
                    static_cast<std::uint64_t>(p.getInt("max_file_size")),
                    p.getString("configuration"),
                    tagfile::compressionFromName(p.getString("compression")),
                    static_cast<std::uint64_t>(p.getInt("sync_every")));
              },
          .splits_by_time = false};
}

FileWriter::FileWriter(std::string name, std::string path, std::vector<channel_t> channels,
                       std::uint64_t max_file_size, std::string configuration,
                       tagfile::Compression compression, std::uint64_t sync_every)
    : Measurement(
          schema(), std::move(name),
          Parameters{{"path", path},
                     {"channels", std::vector<std::int64_t>(channels.begin(), channels.end())},
                     {"max_file_size", static_cast<std::int64_t>(max_file_size)},
                     {"compression", std::string(tagfile::compressionName(compression))},
                     {"configuration", configuration},
                     {"sync_every", static_cast<std::int64_t>(sync_every)}}),
      index_(channels, "FileWriter '" + this->name() + "'"),
      max_file_size_(max_file_size) {
  options_.path = std::move(path);
  options_.max_file_size = max_file_size;
  options_.compression = compression;
  options_.configuration = std::move(configuration);
  options_.channels = std::move(channels);
  options_.sync_every = sync_every;
  recorder_ = std::make_unique<TagFileRecorder>(options_, kBuffers);
  chunk_ = recorder_->takeBuffer();
  chunk_.resize(2 * kBlockTags);
}

FileWriter::~FileWriter() {
  auto lock = lockData();
  try {
    if (capturing_) handOver(count_, last_time_);
    recorder_->close();
  } catch (const std::exception&) {
    // A destructor cannot report; close() explicitly to see the error.
  }
}

std::size_t FileWriter::filter(std::span<const Tag> tags, Tag* out) const {
  // A tag at a time, each store's address waits for the previous tag's verdict (2 ns a tag).
  // Four at a time, four recorded tags, as in a stream of only the recorded channels, go as
  // one copy whose address is known ahead.
  const ChannelIndex::Lookup slot = index_.lookup();
  const std::uint32_t discard = index_.discardSlot();
  // 1 or 0, summed over a group without a branch per tag.
  const auto recorded = [&](const Tag& tag) {
    return static_cast<unsigned>(slot(tag.channel) != discard);
  };
  const Tag* const in = tags.data();
  // The buffers come from operator new, 16-byte aligned for a 16-byte Tag; kept as a check.
  const bool past_cache = copy_past_cache_ && reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  std::size_t kept = 0;
  std::size_t i = 0;
  for (; i + 4 <= tags.size(); i += 4) {
    prefetchAhead(in + i);
    if (recorded(in[i]) + recorded(in[i + 1]) + recorded(in[i + 2]) + recorded(in[i + 3]) == 4) {
      if (past_cache) {
        copyFourPastCache(in + i, out + kept);
      } else {
        std::memcpy(static_cast<void*>(out + kept), in + i, 4 * sizeof(Tag));
      }
      kept += 4;
      continue;
    }
    for (std::size_t k = i; k < i + 4; ++k) {
      out[kept] = in[k];
      kept += recorded(in[k]);
    }
  }
  for (; i < tags.size(); ++i) {
    out[kept] = in[i];
    kept += recorded(in[i]);
  }
  // The streaming stores are weakly ordered: complete them before the buffer is handed over.
  _mm_sfence();
  return kept;
}

void FileWriter::processTimeTags(std::span<const Tag> tags) {
  while (!tags.empty()) {
    const std::size_t take = std::min(tags.size(), chunk_.size() - count_);
    const std::size_t kept = filter(tags.first(take), chunk_.data() + count_);
    count_ += kept;
    total_events_ += kept;
    tags = tags.subspan(take);
    cutFullChunks();
  }
}

void FileWriter::appendOne(const Tag& tag) {
  if (count_ == chunk_.size()) chunk_.resize(2 * chunk_.size());
  chunk_[count_++] = tag;
  ++total_events_;
  cutFullChunks();
}

// A full chunk is handed over up to the run of equal times it ends with (usually one tag):
// those stay for the next block, which may get more tags of the same time. Blocks so hold
// between kBlockTags and twice that, and almost nothing is copied twice.
void FileWriter::cutFullChunks() {
  if (count_ < kBlockTags) return;
  std::size_t cut = count_ - 1;
  while (cut > 0 && chunk_[cut - 1].time == chunk_[cut].time) --cut;
  if (cut == 0) {
    // One time shared by the whole chunk: let it grow.
    if (count_ == chunk_.size()) chunk_.resize(2 * chunk_.size());
    return;
  }
  handOver(cut, chunk_[cut].time);
}

void FileWriter::handOver(std::size_t count, timestamp_t end) {
  if (count == 0 && end <= chunk_begin_) return;
  std::vector<Tag> next = recorder_->takeBuffer();
  copy_past_cache_ = recorder_->freeBufferCount() >= kBuffers / 2;
  if (next.size() < chunk_.size()) next.resize(chunk_.size());
  std::copy(chunk_.begin() + static_cast<std::ptrdiff_t>(count),
            chunk_.begin() + static_cast<std::ptrdiff_t>(count_), next.begin());
  std::swap(chunk_, next);
  count_ -= count;
  recorder_->submit(std::move(next), count, chunk_begin_, end);
  chunk_begin_ = end;
}

void FileWriter::onCaptureStart(timestamp_t time, bool /*fresh*/) {
  chunk_begin_ = time;
  last_time_ = time;
  capturing_ = true;
  // A replay must know that it resumes inside an overflow interval, and that one open when
  // the capture paused ended during the pause (else it would stay inside it for good).
  if (inOverflow() != recorded_overflow_open_) {
    const TagType type = inOverflow() ? TagType::OverflowBegin : TagType::OverflowEnd;
    appendOne(Tag{type, 0, 0, 0, time});
    recorded_overflow_open_ = inOverflow();
  }
}

void FileWriter::onOverflowBegin(const Tag& tag) {
  appendOne(tag);
  recorded_overflow_open_ = true;
}

void FileWriter::onOverflowEnd(const Tag& tag) {
  appendOne(tag);
  recorded_overflow_open_ = false;
}

void FileWriter::onCaptureEnd() {
  capturing_ = false;
  try {
    handOver(count_, last_time_);
    recorder_->flush();
  } catch (const std::exception&) {
    // Kept by the recorder; thrown by the next call that can throw.
  }
}

void FileWriter::flushLocked() {
  if (capturing_) handOver(count_, last_time_);
  recorder_->flush();
}

std::uint64_t FileWriter::getTotalEvents() const {
  auto lock = lockData();
  return total_events_;
}

std::uint64_t FileWriter::getTotalSize() const {
  auto lock = lockData();
  return closed_sets_bytes_ + recorder_->bytesWritten();
}

std::string FileWriter::getPath() const {
  auto lock = lockData();
  return options_.path;
}

void FileWriter::setMarker(std::string text) {
  // Refused here: the recorder writes markers on its own thread, whose errors reach the caller
  // only at the next call.
  if (text.size() > tagfile::kMaxMarkerBytes) {
    throw InvalidArgument("FileWriter '" + name() + "': marker of " + std::to_string(text.size()) +
                          " bytes is too long (valid: up to " +
                          std::to_string(tagfile::kMaxMarkerBytes) + " bytes)");
  }
  auto lock = lockData();
  if (capturing_) handOver(count_, last_time_);
  recorder_->marker(std::move(text), last_time_);
}

void FileWriter::split() {
  auto lock = lockData();
  if (capturing_) handOver(count_, last_time_);
  recorder_->split();
}

void FileWriter::split(const std::string& new_path) {
  if (new_path.empty()) return split();
  auto lock = lockData();
  if (new_path == options_.path) {
    throw InvalidArgument("FileWriter '" + name() + "': split to '" + new_path +
                          "' is invalid: that is the set being written (valid: another path)");
  }
  TagFileOptions options = options_;
  options.path = new_path;
  auto next = std::make_unique<TagFileRecorder>(options, kBuffers);
  if (capturing_) handOver(count_, last_time_);
  std::swap(recorder_, next);
  options_ = std::move(options);
  closed_sets_bytes_ += next->bytesWritten();
  closed_sets_parts_ += next->partCount();
  // The new set knows nothing of the stream before it: an interval still open begins again
  // at its start (a paused capture does this when it resumes).
  if (capturing_) {
    if (recorded_overflow_open_) appendOne(Tag{TagType::OverflowBegin, 0, 0, 0, last_time_});
  } else {
    recorded_overflow_open_ = false;
  }
  try {
    next->close();
  } catch (const IoError& error) {
    throw IoError("FileWriter '" + name() + "': the recording moved on to '" + options_.path +
                  "', but the set it ended failed: " + error.what());
  }
}

void FileWriter::flush() {
  auto lock = lockData();
  flushLocked();
}

void FileWriter::close() {
  auto lock = lockData();
  if (capturing_) handOver(count_, last_time_);
  capturing_ = false;
  recorder_->close();
}

void FileWriter::collectResults(ResultSet& out) const {
  const std::string error = recorder_->error();
  if (!error.empty()) throw IoError("FileWriter '" + name() + "': " + error);
  out.facts.set("total_events", static_cast<std::int64_t>(total_events_));
  out.facts.set("total_size_bytes",
                static_cast<std::int64_t>(closed_sets_bytes_ + recorder_->bytesWritten()));
  out.facts.set("parts", static_cast<std::int64_t>(closed_sets_parts_ + recorder_->partCount()));
}

}  // namespace tagflow
