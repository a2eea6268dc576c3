// Raw tag files: the 16-byte records of the Tag struct, little-endian, back to back, no
// header. RawFileSource reads one as a stream that begins at the first tag's time and ends
// just after the last one, checking every record (type known, times non-decreasing) and
// naming the index and byte offset of the first bad one. A file that ends inside a record
// (a writer killed mid-tag) yields every complete tag, then a TruncatedData naming the byte
// offset of the partial one. RawFileWriter writes one.
//
// The file is mapped read-only and blocks point into the mapping (no copy per tag), checked
// block by block just before they are handed out: from the page cache a source then runs at
// memory speed. The records are those there at opening. A file cut shorter while it is read
// ends the read with an IoError at the next block; a cut into blocks already handed out (a
// few, in flight in the graph) would fault the process, so the file must not shrink under a
// running source: recordings only grow.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "tagflow/core/source.hpp"

namespace tagflow {

class RawFileSource : public Source {
 public:
  // Throws IoError (missing, unreadable); reads the records there are at opening.
  RawFileSource(std::string path, std::size_t block_size);
  ~RawFileSource() override;
  RawFileSource(const RawFileSource&) = delete;
  RawFileSource& operator=(const RawFileSource&) = delete;

  bool next(BlockBuffer& out) override;
  std::size_t maxBlockTags() const override { return block_size_; }
  std::string describe() const override;

  std::uint64_t tagCount() const { return total_tags_; }

 private:
  // Checks records [checked_, end): known type, times in order; throws DataError naming the
  // first bad one.
  void checkUpTo(std::size_t end);
  // Throws IoError if the file no longer holds every record mapped at opening.
  void checkStillThere() const;

  std::string path_;
  std::size_t block_size_;
  int descriptor_ = -1;
  const Tag* records_ = nullptr;  // the mapping, total_tags_ records
  std::size_t total_tags_ = 0;
  std::uint64_t tail_bytes_ = 0;       // of a last record cut short, until reported
  std::size_t position_ = 0;           // next record to hand out
  std::size_t checked_ = 0;            // records before this one passed the checks
  std::vector<std::size_t> specials_;  // checked special tags not yet handed out
  std::size_t next_special_ = 0;
  bool started_ = false;
  timestamp_t next_begin_ = 0;
};

class RawFileWriter {
 public:
  // Creates or truncates `path`; throws IoError naming it.
  explicit RawFileWriter(std::string path);
  ~RawFileWriter();
  RawFileWriter(const RawFileWriter&) = delete;
  RawFileWriter& operator=(const RawFileWriter&) = delete;

  // Throws IoError (disk full, I/O error) naming the path and the bytes written so far.
  void write(std::span<const Tag> tags);
  // Flushes and closes; throws IoError if the data could not be written.
  void close();

  std::uint64_t bytesWritten() const { return bytes_written_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::uint64_t bytes_written_ = 0;
};

}  // namespace tagflow
