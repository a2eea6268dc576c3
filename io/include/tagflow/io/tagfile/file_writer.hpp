// FileWriter: records the tags of the chosen channels, and every overflow, missed-events and
// error tag, to a tag file set (docs/formats.md, docs/recording.md) while other measurements
// run. The node only filters and copies tags into bounded buffers; packing, compression and
// writing happen on the recorder's thread, so they hold up no other measurement on the
// same block, and a full set of buffers makes the node wait, which is the graph's
// back-pressure. Blocks of 16384 to 32767 tags keep the recorded time range exactly: a replay
// begins where the capture began and ends where it ended. Recording starts at construction,
// pauses while stopped (the pause replays as a stretch without tags; a capture that starts
// inside an overflow interval records an OverflowBegin at its start, one that starts after an
// overflow that was open at the pause and ended during it an OverflowEnd) and ends at destruction
// or close(). At the end of every capture (stream end, stop, a finished startFor) the files
// are brought up to date and read as complete. An error of the writer (a full disk, an I/O
// error) is thrown as IoError from the next block (so from the graph's run), from flush(),
// close(), setMarker(), split() and getResults(); the parts written before stay readable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tagflow/core/channel_index.hpp"
#include "tagflow/core/kind_registry.hpp"
#include "tagflow/core/measurement.hpp"
#include "tagflow/io/tagfile/recorder.hpp"

namespace tagflow {

class FileWriter : public Measurement {
 public:
  // Creates the first part now: an unwritable path throws IoError here.
  static const ParameterSchema& schema();

  FileWriter(std::string name, std::string path, std::vector<channel_t> channels,
             std::uint64_t max_file_size = kDefaultMaxFileSize, std::string configuration = "",
             tagfile::Compression compression = tagfile::Compression::None,
             std::uint64_t sync_every = kDefaultSyncEvery);
  ~FileWriter() override;

  std::optional<std::vector<channel_t>> inputChannels() const override { return index_.channels(); }

  // Tags recorded so far (handed to the files or on their way).
  std::uint64_t getTotalEvents() const;
  // Bytes in the files so far, over all parts (and the sets split(new_path) closed).
  std::uint64_t getTotalSize() const;
  std::uint64_t getMaxFileSize() const { return max_file_size_; }
  // Stores `text` at the current stream position; FileReader::getLastMarker() returns it once
  // replay has passed it.
  void setMarker(std::string text);
  // The next block goes to a new part.
  void split();
  // The recording goes on in a new tag file set at `new_path` (its part 0 first), as the
  // reference software's split(new_filename): the current set is completed and closed, and
  // the new one begins at the current stream time, inside an overflow interval if one is open.
  // An empty path is split(). The new set is created first: an unwritable path throws IoError
  // and the recording stays where it was; the current set's own path is refused. A write error
  // of the set that ends is thrown once the recording has moved on.
  void split(const std::string& new_path);
  // The path of the set being written.
  std::string getPath() const;
  // Waits until everything recorded so far is in the files.
  void flush();
  // Ends the recording and closes the files.
  void close();

 protected:
  void processTimeTags(std::span<const Tag> tags) override;
  void advanceTime(timestamp_t time) override { last_time_ = time; }
  void onCaptureStart(timestamp_t time, bool fresh) override;
  void onCaptureEnd() override;
  void onOverflowBegin(const Tag& tag) override;
  void onOverflowEnd(const Tag& tag) override;
  void onMissedEvents(const Tag& tag) override { appendOne(tag); }
  void onError(const Tag& tag) override { appendOne(tag); }
  // Recorded tags stay recorded: clear() resets only the capture duration.
  void clearData() override {}
  void collectResults(ResultSet& out) const override;

 private:
  // Copies the selected tags of `tags` behind the chunk; returns how many.
  std::size_t filter(std::span<const Tag> tags, Tag* out) const;
  void appendOne(const Tag& tag);
  // Hands full chunks to the recorder, cut where the next tag is later than the last.
  void cutFullChunks();
  // Hands the chunk [chunk_begin_, end) to the recorder and starts the next at `end`.
  void handOver(std::size_t count, timestamp_t end);
  void flushLocked();

  ChannelIndex index_;
  std::uint64_t max_file_size_;
  TagFileOptions options_;  // of the set being written
  std::unique_ptr<TagFileRecorder> recorder_;
  // Bytes and parts of the sets that split(new_path) closed.
  std::uint64_t closed_sets_bytes_ = 0;
  std::uint64_t closed_sets_parts_ = 0;
  std::vector<Tag> chunk_;  // its size is its capacity; count_ tags are in use
  std::size_t count_ = 0;
  // The chunk is written past the caches (filter()) while the recorder keeps up.
  bool copy_past_cache_ = false;
  timestamp_t chunk_begin_ = 0;
  timestamp_t last_time_ = 0;
  bool capturing_ = false;
  // The recording's last overflow tag opened an interval (a pause may hide its end).
  bool recorded_overflow_open_ = false;
  std::uint64_t total_events_ = 0;
};

// FileWriter by name, for configuration files and Python.
MeasurementKind fileWriterKind();

}  // namespace tagflow
