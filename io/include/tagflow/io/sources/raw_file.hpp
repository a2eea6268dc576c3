// Raw tag files: the 16-byte records of the Tag struct, little-endian, back to back, no
// header. RawFileSource reads one as a stream that begins at the first tag's time and ends
// just after the last one, checking every record (type known, times non-decreasing) and
// naming the index and byte offset of the first bad one. A file that ends inside a record
// (a writer killed mid-tag) yields every complete tag, then a TruncatedData naming the byte
// offset of the partial one. RawFileWriter writes one, in whole chunks of 4 MiB at offsets
// that are multiples of 4 MiB, whatever the sizes it is given: the page cache then holds the
// file in large pieces, which a later read copies out up to twice as fast as the same bytes
// written in small or unaligned pieces. Until close() (or the destructor) the last part of a
// chunk is only in memory: a process killed while writing loses at most those 4 MiB.
//
// Records are read (pread) straight into the block's own storage, the block and the record
// after it (where the block may end), and checked right after, while they are in cache:
// one copy per tag, from the page cache at memory speed. Blocks hold copies: a file cut
// shorter while it is read ends the read with an IoError naming the size it was cut to, and
// blocks already handed out stay valid. A block never splits one time: a run of more than
// 2^24 tags at one time is a DataError. (Mapping the file instead saves the copy but costs
// building the page tables, which on some virtual machines made the source three to seven
// times slower, and a cut under a mapping faults the process.) The records are those there at
// opening.
#pragma once

#include <cstddef>
#include <cstdint>
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
  // The block and the record after it; a run of equal times longer than block_size is read
  // whole and takes more (up to twice the run, at most 2^25 tags).
  std::size_t maxBlockTags() const override { return block_size_ + 1; }
  std::string describe() const override;

  std::uint64_t tagCount() const { return total_tags_; }

 private:
  // Reads records [read_, read_ + count) into `to` and checks them (known type, times in
  // order); throws IoError when the file was cut, DataError naming the first bad record.
  void readChecked(Tag* to, std::size_t count);
  [[noreturn]] void throwBadRecord(const Tag* records, std::size_t count) const;

  std::string path_;
  std::size_t block_size_;
  int descriptor_ = -1;
  std::size_t total_tags_ = 0;
  std::uint64_t tail_bytes_ = 0;  // of a last record cut short, until reported
  std::size_t position_ = 0;      // next record to hand out
  std::size_t read_ = 0;          // next record to read from the file
  timestamp_t last_read_time_ = 0;
  std::vector<Tag> ahead_;             // read and checked, not handed out yet
  std::vector<std::size_t> specials_;  // read special tags not handed out yet (record indices)
  timestamp_t next_begin_ = 0;         // the end of the last block
};

class RawFileWriter {
 public:
  static constexpr std::size_t kChunkBytes = std::size_t{4} << 20;

  // Creates or truncates `path`; throws IoError naming it.
  explicit RawFileWriter(std::string path);
  // Writes what is pending and closes, ignoring errors: call close() to hear of them.
  ~RawFileWriter();
  RawFileWriter(const RawFileWriter&) = delete;
  RawFileWriter& operator=(const RawFileWriter&) = delete;

  // Throws IoError (disk full, I/O error) naming the path and the bytes in the file so far.
  void write(std::span<const Tag> tags);
  // Writes what is pending and closes; throws IoError if the data could not be written.
  void close();

  // The bytes of the tags given to write().
  std::uint64_t bytesWritten() const { return bytes_given_; }

 private:
  void writeOut(std::span<const std::byte> bytes);
  // Closes the descriptor; false if the system reported an error (errno says which).
  bool closeDescriptor();

  std::string path_;
  int descriptor_ = -1;
  std::vector<std::byte> pending_;  // less than a chunk, not in the file yet
  std::uint64_t bytes_given_ = 0;
  std::uint64_t bytes_in_file_ = 0;
};

}  // namespace tagflow
