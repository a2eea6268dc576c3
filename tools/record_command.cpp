// `tagflow record CONFIG OUT`: the configured source's stream (up to [run] duration_ps) to a
// tag file set when OUT ends in .tags, else to a raw tag file. Each is written as the stream
// comes, so a recording killed at any moment keeps everything written before on disk, whole
// up to at most one record cut short at the end, which the readers name as a damaged tail.
#include <atomic>
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "damaged_tail.hpp"
#include "interrupts.hpp"
#include "output_guard.hpp"
#include "path_plan.hpp"
#include "run_config.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/tag_block.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/raw_file.hpp"
#include "tagflow/io/tagfile/writer.hpp"

namespace tagflow::cli {

namespace {

// Fewest tags per tag file record, as the FileWriter: a source's small blocks would each cost
// a 56-byte record header.
constexpr std::size_t kRecordTags = 16384;

class Output {
 public:
  virtual ~Output() = default;
  // The stream's next stretch [begin, end) and its tags.
  virtual void write(std::span<const Tag> tags, timestamp_t begin, timestamp_t end) = 0;
  virtual void close() = 0;
  virtual std::uint64_t bytesWritten() const = 0;
};

class RawOutput : public Output {
 public:
  explicit RawOutput(const std::string& path) : writer_(path) {}
  void write(std::span<const Tag> tags, timestamp_t, timestamp_t) override { writer_.write(tags); }
  void close() override { writer_.close(); }
  std::uint64_t bytesWritten() const override { return writer_.bytesWritten(); }

 private:
  RawFileWriter writer_;
};

// Gathers the stream into records of kRecordTags to kMaxBlockTags tags; every record covers
// its stretch of stream time exactly, so a replay has the recorded time range.
class TagFileOutput : public Output {
 public:
  explicit TagFileOutput(TagFileOptions options)
      : writer_(std::move(options)), packer_(tagfile::Compression::None) {}

  void write(std::span<const Tag> tags, timestamp_t begin, timestamp_t end) override {
    if (!started_) begin_ = begin;
    started_ = true;
    pending_.insert(pending_.end(), tags.begin(), tags.end());
    end_ = end;
    if (pending_.size() >= kRecordTags) writePending();
  }

  void close() override {
    if (started_ && (end_ > begin_ || !pending_.empty())) writePending();
    writer_.close();
  }

  std::uint64_t bytesWritten() const override { return writer_.bytesWritten(); }

 private:
  void writePending() {
    std::span<const Tag> rest = pending_;
    while (rest.size() > tagfile::kMaxBlockTags) {
      // Never between tags of one time; a run of one time too long for a record is refused
      // by the packer, naming its length.
      const std::size_t count = blockSplitPoint(rest, tagfile::kMaxBlockTags);
      if (count == rest.size()) break;
      writeRecord(rest.first(count), rest[count].time);
      rest = rest.subspan(count);
    }
    writeRecord(rest, end_);
    pending_.clear();
  }

  void writeRecord(std::span<const Tag> tags, timestamp_t end) {
    packer_.pack(tags, begin_, end, encoded_);
    writer_.write(encoded_);
    begin_ = end;
  }

  TagFileWriter writer_;
  BlockPacker packer_;
  EncodedBlock encoded_;
  std::vector<Tag> pending_;
  bool started_ = false;
  timestamp_t begin_ = 0;  // of the pending stretch
  timestamp_t end_ = 0;
};

bool isTagFile(const std::string& path) {
  return std::filesystem::path(path).extension() == ".tags";
}

std::unique_ptr<Output> openOutput(const std::string& path, const Source& source,
                                   bool kept_on_failure) {
  if (!isTagFile(path)) return std::make_unique<RawOutput>(path);
  TagFileOptions options;
  options.path = path;
  options.configuration = "recorded from " + source.describe();
  options.partial_output_kept = kept_on_failure;
  return std::make_unique<TagFileOutput>(std::move(options));
}

}  // namespace

int recordCommand(const std::string& config_path, const std::string& output) {
  const RunConfig config = loadRunConfig(config_path, false);
  PathPlan paths;
  paths.reads(config_path, "the configuration");
  planSourceReads(config.source, paths);
  if (isTagFile(output)) {
    paths.writesTagFileSet(output, "the recording");
  } else {
    paths.writes(output, "the recording");
  }
  paths.check();
  std::unique_ptr<Source> input = makeSource(config.source);
  if (config.duration_ps < 0 && config.source.kind == "synthetic" &&
      !config.source.parameters.contains("duration_ps")) {
    throw InvalidArgument(
        "recording an endless synthetic source needs [run] duration_ps or "
        "[source] duration_ps");
  }
  // A file source's damaged tail ends the recording: what comes before it is recorded.
  DamagedTailGuard source(*input);
  // A stream that comes once is kept up to a failure (a full disk), readable; another is
  // recorded whole or not at all. A second Ctrl-C ends a recording as a kill would: what it
  // wrote stays, the earlier files it replaces go.
  const bool kept_on_failure = comesOnce(config.source);
  const OutputGuard guard(
      output, isTagFile(output),
      kept_on_failure ? OutputGuard::OnFailure::Keep : OutputGuard::OnFailure::Remove);
  std::unique_ptr<Output> writer = openOutput(output, *input, kept_on_failure);
  std::atomic<bool> stop{false};
  // A source waiting for data (a UDP stream before its sender starts) stops waiting.
  Interrupts interrupts([&] {
    stop.store(true);
    input->requestStop();
  });
  Interrupts::abandon(guard.movedAside());
  BlockBuffer block;
  block.storage.reserve(source.maxBlockTags());
  std::uint64_t tags = 0;
  bool first = true;
  timestamp_t start = 0;
  while (!stop.load() && source.next(block)) {
    if (first) start = block.begin_time;
    first = false;
    auto span = block.tags;
    timestamp_t end = block.end_time;
    const bool last = config.duration_ps > 0 && block.end_time - start >= config.duration_ps;
    if (last) {
      std::size_t keep = 0;
      while (keep < span.size() && span[keep].time < start + config.duration_ps) ++keep;
      span = span.first(keep);
      end = start + config.duration_ps;
    }
    writer->write(span, block.begin_time, end);
    tags += span.size();
    if (last) break;
  }
  writer->close();
  std::cout << "recorded " << tags << " tags (" << writer->bytesWritten() << " bytes) to " << output
            << (interrupts.interrupted() ? " (interrupted)" : "") << "\n";
  const int damaged = source.report(output);
  return interrupts.interrupted() ? interrupts.exitCode() : damaged;
}

}  // namespace tagflow::cli
