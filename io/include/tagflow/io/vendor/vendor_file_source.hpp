// VendorFileSource: a vendor's time-tag file (PicoQuant, Becker & Hickl, quTAG) read as a
// stream, in bounded memory whatever the file's size. Records are read a chunk at a time
// (pread, 64-bit offsets) and decoded by the format's RecordDecoder straight into the block
// being filled, a run of records at a time (each run in time order, merged with the tags before
// it only where it reaches back among them), until more than block_size tags lie before the
// decoder's futureBound(); those are handed out, at most block_size tags a block, and the rest
// carried to the next block. The stream begins at 0 (the acquisition's start) and ends after
// the last tag (headers state the acquisition time asked for, not the time recorded).
//
// The header's record count is not trusted: the records are what the file holds. A trailing
// partial record is an error (TruncatedData), raised after every complete record was handed
// out, naming the byte offset where it starts; so is a file that holds fewer records than its
// header counts (cut off between two records).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tagflow/core/parameters.hpp"
#include "tagflow/core/source.hpp"
#include "tagflow/io/vendor/header_fields.hpp"
#include "tagflow/io/vendor/record_decoder.hpp"

namespace tagflow {

// A vendor file opened and its header read: where the records are and how to decode them.
struct VendorFile {
  std::string path;
  std::string format;  // "PTU", "SPC", ...: what the header says the file is
  std::uint64_t file_size = 0;
  std::uint64_t data_offset = 0;  // first byte of the first record
  std::uint64_t records = 0;      // complete records the file holds
  // Records the header counts beyond `records`: the file was cut off, which is a TruncatedData
  // after the last record.
  std::uint64_t missing_records = 0;
  HeaderFields header;                // every header entry, for `tagflow info` and provenance
  std::vector<std::string> warnings;  // what the header gets wrong that reading works around
  // The header values the tags depend on (record type, resolutions, sync period), under their
  // header names, for the results file's provenance.
  Parameters provenance;
  std::unique_ptr<RecordDecoder> decoder;
};

class VendorFileSource : public Source {
 public:
  // Throws InvalidArgument for a block size outside 1..2^26.
  VendorFileSource(VendorFile file, std::size_t block_size);
  ~VendorFileSource() override;
  VendorFileSource(const VendorFileSource&) = delete;
  VendorFileSource& operator=(const VendorFileSource&) = delete;

  bool next(BlockBuffer& out) override;
  // A block's tags, and room to decode a run of records past them.
  std::size_t maxBlockTags() const override;
  std::string describe() const override;

  const VendorFile& file() const { return file_; }

 private:
  // Decodes up to `records` records into `tags` from `filled` on, reading the next chunk of the
  // file when the last one is used up, and keeps tags[0, filled) in time order; returns the new
  // `filled`.
  std::size_t decodeRun(std::vector<Tag>& tags, std::size_t filled, std::size_t records);

  VendorFile file_;
  std::size_t block_size_;
  std::size_t record_bytes_;
  int fd_ = -1;
  std::vector<std::uint8_t> chunk_;   // records read from the file
  std::size_t chunk_records_ = 0;     // how many chunk_ holds
  std::size_t chunk_decoded_ = 0;     // how many of them were decoded
  std::uint64_t next_record_ = 0;     // the file's first record not decoded yet
  std::uint64_t decoded_tags_ = 0;    // what the records decoded so far gave
  std::vector<Tag> carried_;          // decoded and in order, not handed out yet
  timestamp_t handed_out_until_ = 0;  // the end of the last block
  bool ended_ = false;
};

}  // namespace tagflow
