// FileReader: replays a recording as a Source. Given the first part of a set it reads the
// whole set in order (following each part-end record to the next part, checking the
// recording id, part numbers and record sequence); given a later part, from there to the end.
// The stream has the recorded time range: it begins where the first recorded block began and
// ends where the last one ended, and a pause in the recording becomes a stretch without tags.
// File blocks larger than block_size are served in pieces (never between tags of one time).
// Replay speed: negative replays as fast as possible; s > 0 paces blocks so that stream time
// advances s times as fast as wall-clock time (1.0: real time; valid: >= 0.1 or negative).
// Every error (a missing part, a truncated or corrupt file) is thrown by next() after the
// blocks before it were served; a set that ends early (a damaged tail, a missing next part) is
// a TruncatedData.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tagflow/core/source.hpp"
#include "tagflow/io/tagfile/reader.hpp"

namespace tagflow {

// FileWriter records blocks of at most 32767 tags: with room for a whole file block, replay
// hands each decoded block over without copying it.
inline constexpr std::size_t kDefaultReplayBlockSize = 32768;

class FileReader : public Source {
 public:
  // Opens `path` and reads its file header; throws IoError or DataError naming it, or
  // InvalidArgument for a bad block size or speed.
  explicit FileReader(std::string path, std::size_t block_size = kDefaultReplayBlockSize,
                      double speed = -1);

  bool next(BlockBuffer& out) override;
  std::size_t maxBlockTags() const override { return block_size_; }
  std::vector<channel_t> channels() const override { return header_.channels; }
  std::string describe() const override;
  // From the time indexes of the set's parts (the last bytes of each): nullopt when a part has
  // none. seekTo() walks the parts' indexes and starts at the tags record holding `time`
  // (markers before it are skipped); false, and nothing moved, without indexes. Only before
  // the first block: afterwards InvalidArgument (a second range run needs a new reader).
  std::optional<StreamSpan> timeSpan() override;
  bool seekTo(timestamp_t time) override;
  bool startsInOverflow() const override { return starts_in_overflow_; }

  // Whether another block follows (reads ahead up to the next tags record).
  bool hasData();
  // The source's configuration text stored by the writer.
  const std::string& getConfiguration() const { return header_.configuration; }
  // The recorded channels; empty when the recording holds every channel of its stream.
  const std::vector<channel_t>& getChannelList() const { return header_.channels; }
  // The last marker read so far ("" before the first).
  const std::string& getLastMarker() const { return last_marker_; }
  void setReplaySpeed(double speed);
  double getReplaySpeed() const { return speed_; }
  const tagfile::FileHeader& header() const { return header_; }

 private:
  // Reads records until a tags record is loaded (true) or the set has ended (false).
  bool loadBlock();
  void openNextPart();
  // The reader of the part after the one `reader` reads, expecting `sequence` first.
  std::unique_ptr<TagFileReader> nextPartReader(const TagFileReader& reader,
                                                std::uint64_t sequence) const;
  void pace(timestamp_t end_time);

  std::string path_;
  std::string base_path_;  // part 0 of the set, for finding the next parts
  std::size_t block_size_;
  double speed_ = -1;
  std::unique_ptr<TagFileReader> reader_;
  tagfile::FileHeader header_;
  TagFileReader::Record record_;
  std::vector<Tag> pending_;
  std::size_t pending_count_ = 0;
  std::size_t position_ = 0;
  bool loaded_ = false;  // a tags record is loaded and not fully served
  bool ended_ = false;
  bool started_ = false;
  bool starts_in_overflow_ = false;  // where seekTo() put the stream
  timestamp_t next_begin_ = 0;
  std::string last_marker_;
  // Pacing: stream time `stream_anchor_` is due at `wall_anchor_`.
  timestamp_t stream_anchor_ = 0;
  std::chrono::steady_clock::time_point wall_anchor_;
};

// The files a FileReader opened at `path` reads after it: the parts of its set after the part
// its header names, as far as they exist (TagFileWriter::laterParts). None where `path` is no
// readable tag file or its name does not follow the part naming: the reader stops there.
std::vector<std::string> partsReadAfter(const std::string& path);

}  // namespace tagflow
