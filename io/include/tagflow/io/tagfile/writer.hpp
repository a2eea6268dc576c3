// TagFileWriter: writes a recording as a set of tag files (docs/formats.md), synchronously.
// Part 0 is `path`, part k is `path` with ".k" before its extension. A part ends with a
// part-end record that says whether the next part follows; the writer moves on to the next
// part before a record once the current one has reached max_file_size (so a part exceeds it
// by at most one record) or after split(). After every record the set on disk is complete and
// readable: the record goes to the file in one write together with a provisional part-end
// record, which the next record overwrites. A writer killed at any moment so leaves every
// record it wrote whole, except at most the one it was writing, cut short at the end (the
// reader names it as a damaged tail). A failed write cuts the part back to its last complete
// record, ends it there if it can, and throws IoError naming the file, the offset and the
// reason; every record written before stays readable, and the writer refuses further writes
// with the same error. A part that ends normally (close(), or the next part begins) ends with
// its time index, so a reader can start at any time without reading the part from its start.
// Every 8 MiB written, the writer asks the system to start writing them to the device
// (write-behind): the disk works while the recording goes on, rather than when the system's
// dirty-page thresholds or expiry (30 s by default) or a caller's fsync start it, and dirty
// pages stay few. Every `sync_every` bytes, and at the end of every part but the last, a
// thread of its own makes what was written durable (fdatasync, BackgroundSync): a power cut
// then loses at most about that much, and a caller's fsync at the end waits only for the rest.
// close() waits for those syncs; a sync that fails (EIO, ENOSPC) fails the writer like a write.
//
// Encoding (packing, compression, checksum) is split from writing, so that a recorder can
// encode and write away from the thread that hands it blocks: BlockPacker makes an EncodedBlock,
// TagFileWriter::write puts it into the file.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tagflow/io/tagfile/background_sync.hpp"
#include "tagflow/io/tagfile/codec.hpp"
#include "tagflow/io/tagfile/compressor.hpp"
#include "tagflow/io/tagfile/format.hpp"

namespace tagflow {

inline constexpr std::uint64_t kDefaultMaxFileSize = std::uint64_t{1} << 30;
inline constexpr std::uint64_t kMinMaxFileSize = 4096;
inline constexpr std::uint64_t kDefaultSyncEvery = std::uint64_t{16} << 20;

struct TagFileOptions {
  std::string path;
  std::uint64_t max_file_size = kDefaultMaxFileSize;
  tagfile::Compression compression = tagfile::Compression::None;
  std::string configuration;        // the source's configuration, stored in every part
  std::vector<channel_t> channels;  // recorded channels; empty: all
  // Bytes between background syncs of the current part; 0: none (the system's schedule).
  std::uint64_t sync_every = kDefaultSyncEvery;
  // False where the caller removes a failed output (a conversion): its errors then promise
  // nothing of what was written.
  bool partial_output_kept = true;
  // Makes a descriptor's data durable, returning 0 or an errno (tests inject failures).
  std::function<int(int)> sync = BackgroundSync::defaultSync;

  // Throws InvalidArgument naming a bad value and its valid range.
  void validate() const;
};

// A record ready to be written; the writer fills in its sequence number.
struct EncodedBlock {
  tagfile::RecordHeader header;
  std::vector<std::uint8_t> payload;
  bool in_overflow_at_begin = false;  // for the time index: a reader seeking here must know
};

class BlockPacker {
 public:
  explicit BlockPacker(tagfile::Compression compression)
      : compression_(compression), compressor_(compression) {}

  // The block [begin_time, end_time) holding `tags` (time-ordered, inside the interval).
  void pack(std::span<const Tag> tags, timestamp_t begin_time, timestamp_t end_time,
            EncodedBlock& out);

 private:
  tagfile::Compression compression_;
  bool in_overflow_ = false;  // at the end of the last block packed
  tagfile::TagBlockEncoder encoder_;
  tagfile::PayloadCompressor compressor_;
  std::vector<std::uint8_t> raw_;
};

class TagFileWriter {
 public:
  // Creates part 0; throws IoError naming the path when it cannot.
  explicit TagFileWriter(TagFileOptions options);
  ~TagFileWriter();
  TagFileWriter(const TagFileWriter&) = delete;
  TagFileWriter& operator=(const TagFileWriter&) = delete;

  void write(EncodedBlock& block);
  void writeMarker(std::string_view text, timestamp_t time);
  // The next record goes to a new part.
  void split();
  // Throws the error that stopped the writer, if any; the set on disk is complete after every
  // record anyway.
  void flush();
  // Ends the set for good and closes the file; later writes are refused.
  void close();

  // Bytes of the parts on disk (headers and complete records), over all parts.
  std::uint64_t bytesWritten() const { return bytes_written_; }
  std::uint64_t tagsWritten() const { return tags_written_; }
  std::uint32_t partCount() const { return part_ + 1; }
  const TagFileOptions& options() const { return options_; }

  // The file of part `part` of the set that begins at `path`.
  static std::string partPath(const std::string& path, std::uint32_t part);
  // The files of the parts after part `part` of the set that begins at `path`, as far as they
  // exist (links followed, as a reader follows them): partPath(path, part + 1), ...
  static std::vector<std::string> laterParts(const std::string& path, std::uint32_t part = 0);

 private:
  void openPart();
  void beginNextPart();
  void writeRecord(tagfile::RecordHeader header, std::span<const std::uint8_t> payload,
                   bool in_overflow_at_begin = false);
  // Writes `head`, `payload` and a provisional part end (carrying `sequence` and `time`) at
  // the end of the part and moves the end of the part behind `payload`.
  void appendEnded(std::span<const std::uint8_t> head, std::span<const std::uint8_t> payload,
                   std::uint64_t sequence, timestamp_t time);
  // Writes the final part end, with the part's time index, at the position of `fd`; 0, or the
  // reason it could not.
  int endPart(int fd, bool continues, const tagfile::PartIndex& index);
  static void encodePartEnd(bool continues, std::uint64_t sequence, timestamp_t time,
                            std::uint8_t* out);
  // Starts writing the part's complete records to the device once 8 MiB are waiting, and
  // asks for a background sync once `sync_every` bytes are; throws a failed sync's error.
  void writeBehind();
  void checkSynced();
  [[noreturn]] void fail(const std::string& what, int error_number);
  // Stops the recording as fail() does, for a background sync of `part` that failed.
  [[noreturn]] void failSync(int error_number, std::uint64_t part);
  void checkUsable() const;

  TagFileOptions options_;
  tagfile::FileHeader header_;
  int fd_ = -1;
  std::string part_path_;
  std::uint32_t part_ = 0;
  std::uint64_t offset_ = 0;          // end of the last complete record in the current part
  std::uint64_t written_behind_ = 0;  // where write-behind of the current part has reached
  std::uint64_t sync_asked_ = 0;      // the offset of the last background sync asked for
  std::uint64_t sequence_ = 0;
  std::uint64_t bytes_written_ = 0;
  std::uint64_t tags_written_ = 0;
  timestamp_t last_time_ = 0;  // end of the last record, for part-end records
  tagfile::PartIndex index_;   // of the current part
  bool split_pending_ = false;
  bool closed_ = false;
  std::string error_;  // set once a write failed
  BackgroundSync sync_;
};

}  // namespace tagflow
