// Raw tag files: the 16-byte records of the Tag struct, little-endian, back to back, no
// header. RawFileSource reads one as a stream that begins at the first tag's time and ends
// just after the last one, checking every record (type known, times non-decreasing) and
// naming the index and byte offset of the first bad one. A file that ends inside a record
// (a writer killed mid-tag) yields every complete tag, then a TruncatedData naming the byte
// offset of the partial one. RawFileWriter writes one.
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
  // Reads more records into the look-ahead buffer; returns false at end of file.
  bool refill();

  std::string path_;
  std::size_t block_size_;
  std::FILE* file_ = nullptr;
  std::uint64_t total_tags_ = 0;
  std::uint64_t tail_bytes_ = 0;     // of a last record cut short, until reported
  std::uint64_t consumed_tags_ = 0;  // records handed out before lookahead_[position_]
  std::vector<Tag> lookahead_;
  std::size_t position_ = 0;
  bool end_of_file_ = false;
  bool started_ = false;
  timestamp_t next_begin_ = 0;
  timestamp_t last_time_ = 0;  // of the last record read, for the order check
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
