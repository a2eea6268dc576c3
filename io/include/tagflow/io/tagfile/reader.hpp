// TagFileReader: reads the records of one tag file (one part of a set) in order, checking
// everything: the file magic and header checksum, each record's magic, header checksum and
// fields, the gap-free sequence numbers, the payload checksum, the decoded tags (order and
// interval), and that the file ends with a part-end record. Every error is a DataError (or
// IoError) naming the file, the record and its byte offset; everything read before it was
// complete and valid. A damaged tail (the file ends inside its header or a record, or without
// a part end, or with a torn record header as its last bytes: what a writer killed while it
// wrote leaves) is a TruncatedData. The bytes come from a file or from memory (the fuzz
// target).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tagflow/io/tagfile/codec.hpp"
#include "tagflow/io/tagfile/compressor.hpp"
#include "tagflow/io/tagfile/format.hpp"

namespace tagflow {

class TagFileReader {
 public:
  // Opens `path` and reads its header; throws IoError or DataError naming it.
  explicit TagFileReader(std::string path);
  // Reads from memory; `name` stands for the file in messages.
  TagFileReader(std::span<const std::uint8_t> bytes, std::string name);
  ~TagFileReader();
  TagFileReader(const TagFileReader&) = delete;
  TagFileReader& operator=(const TagFileReader&) = delete;

  const tagfile::FileHeader& header() const { return header_; }
  const std::string& path() const { return path_; }

  struct Record {
    tagfile::RecordHeader header;
    std::string marker;                   // the text of a Marker record
    std::vector<std::uint32_t> specials;  // indices of the tags that are not TimeTags
  };

  // Reads the next record. A Tags record's header.tag_count tags are decoded into the front
  // of `tags`, which grows when it is too small and is never shrunk (no clearing per block).
  // Returns the part-end record last, then false.
  bool next(Record& record, std::vector<Tag>& tags);
  // The sequence number the next record must carry (a set's reader knows it from the previous
  // part); part 0 starts at 0, a later part opened alone at whatever its first record says.
  void expectSequence(std::uint64_t sequence) {
    expected_sequence_ = sequence;
    sequence_known_ = true;
  }
  std::uint64_t offset() const { return offset_; }

  // The time index this part ends with, read from its last bytes only; nullopt when it has
  // none (cut short while recording, or a part too large for one). A damaged index is a
  // DataError naming the file and the offset.
  std::optional<tagfile::PartIndex> readIndex();
  // Continues at entry `entry` of `index` (from readIndex()): the next record is that tags
  // record, checked as usual.
  void seek(const tagfile::PartIndex& index, std::size_t entry);

 private:
  void readHeader();
  // Reads exactly `size` bytes at the current offset into `out`; false if the file ends first
  // (then `got` tells how many were there).
  bool readExactly(std::uint8_t* out, std::size_t size, std::size_t& got);
  // Reads `size` bytes at `offset` without moving the sequential position; false if the file
  // is shorter.
  bool readAt(std::uint64_t offset, std::uint8_t* out, std::size_t size);
  // Whether everything up to the current offset was all there is.
  bool atEnd() const;
  std::string where(std::uint64_t offset) const;

  std::string path_;
  std::FILE* file_ = nullptr;
  std::span<const std::uint8_t> memory_;
  bool from_memory_ = false;
  tagfile::FileHeader header_;
  std::uint64_t offset_ = 0;
  std::uint64_t record_index_ = 0;
  std::uint64_t expected_sequence_ = 0;
  bool sequence_known_ = false;
  bool ended_ = false;
  std::vector<std::uint8_t> stored_;
  std::vector<std::uint8_t> raw_;
  tagfile::PayloadDecompressor decompressor_;
  tagfile::TagBlockDecoder decoder_;
};

}  // namespace tagflow
