#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <random>

#include "support/temp_dir.hpp"
#include "tagfile/tagfile_streams.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/reader.hpp"
#include "tagflow/io/tagfile/writer.hpp"
#include "tagflow/io/truncated_data.hpp"

using namespace tagflow;
using namespace tagflow::tagfile;

namespace {

struct Recording {
  std::vector<std::uint8_t> bytes;
  std::vector<test::TestBlock> blocks;
  std::vector<std::uint64_t> record_ends;  // byte offset after each tags record
};

// A one-part recording of a few small blocks, written to a file and read back as bytes.
Recording makeRecording(const test::TempDir& dir, Compression compression) {
  Recording recording;
  const auto tags = test::featureStream(21, 600, {1, 2, 3});
  recording.blocks = test::randomBlocks(22, tags, 150);
  TagFileOptions options;
  options.path = dir.file("damage.tags");
  options.compression = compression;
  {
    TagFileWriter writer(options);
    BlockPacker packer(compression);
    EncodedBlock encoded;
    for (const auto& block : recording.blocks) {
      packer.pack(block.tags, block.begin, block.end, encoded);
      writer.write(encoded);
      recording.record_ends.push_back(writer.bytesWritten());
    }
  }
  std::ifstream in(options.path, std::ios::binary);
  recording.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return recording;
}

}  // namespace

TEST_CASE(
    "damage: a file cut at any byte yields every complete block, then names the offset "
    "(a cut inside the part's time index only loses the index)",
    "[tagfile]") {
  test::TempDir dir;
  const Recording recording = makeRecording(dir, Compression::None);
  // The part ends with its time index, the payload of the part-end record: the trailer's
  // size field says how long it is. A cut inside it leaves every record and the part end.
  const std::size_t index_size = static_cast<std::size_t>(
      loadLittle(recording.bytes.data() + recording.bytes.size() - kIndexTrailerSize + 8, 8));
  const std::size_t index_begin = recording.bytes.size() - index_size;
  for (std::size_t cut = 0; cut < recording.bytes.size(); ++cut) {
    if (cut >= index_begin) {
      TagFileReader reader(std::span<const std::uint8_t>(recording.bytes.data(), cut), "cut");
      TagFileReader::Record record;
      std::vector<Tag> tags;
      std::size_t blocks = 0;
      while (reader.next(record, tags)) blocks += record.header.kind == RecordKind::Tags;
      CHECK(blocks == recording.blocks.size());
      CHECK_FALSE(reader.readIndex().has_value());
      continue;
    }
    const std::span<const std::uint8_t> part(recording.bytes.data(), cut);
    std::size_t complete = 0;
    while (complete < recording.record_ends.size() && recording.record_ends[complete] <= cut) {
      ++complete;
    }
    try {
      TagFileReader reader(part, "cut");
      TagFileReader::Record record;
      std::vector<Tag> tags;
      std::size_t blocks = 0;
      try {
        while (reader.next(record, tags)) {
          if (record.header.kind != RecordKind::Tags) continue;
          const auto& expected = recording.blocks[blocks++].tags;
          REQUIRE(std::equal(expected.begin(), expected.end(), tags.begin()));
        }
        FAIL("a cut file read to its end without an error (cut at " << cut << ")");
      } catch (const TruncatedData& error) {
        CHECK(blocks == complete);
        CHECK_THAT(error.what(),
                   Catch::Contains("truncated at byte offset " + std::to_string(cut)));
      }
    } catch (const TruncatedData& error) {
      // Cut inside the file header (an empty file too: a writer cut before it wrote one).
      CHECK(complete == 0);
      CHECK_THAT(error.what(),
                 Catch::Contains("cut") &&
                     Catch::Contains("truncated at byte offset " + std::to_string(cut)) &&
                     Catch::Contains("inside its file header"));
    }
  }
}

TEST_CASE("damage: a record header torn where the provisional part end was is a damaged tail",
          "[tagfile]") {
  // A writer cut while it overwrote the provisional part end behind record n with record n + 1
  // leaves the file's last 56 bytes part new header, part old part end.
  test::TempDir dir;
  const auto tags = test::featureStream(31, 400, {1, 2});
  const auto blocks = test::randomBlocks(32, tags, 100);
  REQUIRE(blocks.size() >= 3);
  TagFileOptions options;
  options.path = dir.file("torn.tags");
  TagFileWriter writer(options);
  BlockPacker packer(Compression::None);
  EncodedBlock encoded;
  const auto snapshot = [&] {
    std::ifstream in(options.path, std::ios::binary);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in),
                                     std::istreambuf_iterator<char>());
  };
  for (std::size_t i = 0; i + 1 < blocks.size(); ++i) {
    packer.pack(blocks[i].tags, blocks[i].begin, blocks[i].end, encoded);
    writer.write(encoded);
  }
  const std::vector<std::uint8_t> before = snapshot();  // ends with the provisional part end
  const std::uint64_t at = writer.bytesWritten();
  REQUIRE(before.size() == at + kRecordHeaderSize);
  packer.pack(blocks.back().tags, blocks.back().begin, blocks.back().end, encoded);
  writer.write(encoded);
  const std::vector<std::uint8_t> after = snapshot();
  // From byte 5 on: the first four (the magic) are the same in both.
  for (std::size_t torn = 5; torn < kRecordHeaderSize; torn += 5) {
    std::vector<std::uint8_t> bytes(after.begin(), after.begin() + at + torn);
    bytes.insert(bytes.end(), before.begin() + at + torn, before.end());
    TagFileReader reader(bytes, "torn");
    TagFileReader::Record record;
    std::vector<Tag> read;
    std::size_t delivered = 0;
    try {
      while (reader.next(record, read)) delivered += record.header.kind == RecordKind::Tags;
      FAIL("a torn last header went unnoticed (torn after " << torn << " bytes)");
    } catch (const TruncatedData& error) {
      CHECK(delivered == blocks.size() - 1);
      CHECK_THAT(error.what(), Catch::Contains("checksum") &&
                                   Catch::Contains("byte offset " + std::to_string(at)));
    }
  }
  // The same bytes with more after them are damage inside the file, not a damaged tail.
  std::vector<std::uint8_t> inside = after;
  inside[at + 20] ^= 1;
  TagFileReader reader(inside, "inside");
  TagFileReader::Record record;
  std::vector<Tag> read;
  try {
    while (reader.next(record, read)) {
    }
    FAIL("a bad record header inside the file went unnoticed");
  } catch (const TruncatedData&) {
    FAIL("a bad record header inside the file was taken for a damaged tail");
  } catch (const DataError& error) {
    CHECK_THAT(error.what(), Catch::Contains("checksum"));
  }
}

TEST_CASE("damage: a flipped bit is caught by a checksum and named", "[tagfile]") {
  test::TempDir dir;
  const Compression compression = GENERATE(Compression::None, Compression::Zstd);
  const Recording recording = makeRecording(dir, compression);
  std::mt19937_64 random(3);
  for (int trial = 0; trial < 300; ++trial) {
    auto damaged = recording.bytes;
    const std::size_t at = random() % damaged.size();
    damaged[at] ^= static_cast<std::uint8_t>(1u << (random() % 8));
    const std::string path = dir.file("flipped.tags");
    dir.writeBytes("flipped.tags", damaged.data(), damaged.size());
    try {
      FileReader reader(path);
      BlockBuffer buffer;
      while (reader.next(buffer)) {
      }
      FAIL("a flipped bit at byte " << at << " went unnoticed");
    } catch (const DataError& error) {
      const std::string message = error.what();
      CHECK_THAT(message, Catch::Contains("flipped.tags"));
      CHECK_THAT(message, Catch::Contains("checksum") || Catch::Contains("not a tag file") ||
                              Catch::Contains("magic") || Catch::Contains("version") ||
                              Catch::Contains("file header"));
      if (message.find("record") != std::string::npos) {
        CHECK_THAT(message, Catch::Contains("byte offset"));
      }
    }
  }
}

TEST_CASE("damage: a file of another format is refused by its magic", "[tagfile]") {
  test::TempDir dir;
  const std::vector<Tag> raw = {makeTimeTag(1, 10), makeTimeTag(2, 20)};
  dir.writeBytes("raw.bin", raw.data(), raw.size() * sizeof(Tag));
  CHECK_THROWS_WITH(FileReader(dir.file("raw.bin")),
                    Catch::Contains("raw.bin") && Catch::Contains("not a tag file"));
  const std::string hdf5_signature = "\x89HDF\r\n\x1a\n0000000000000000";
  dir.writeBytes("results.h5", hdf5_signature.data(), hdf5_signature.size());
  CHECK_THROWS_WITH(FileReader(dir.file("results.h5")), Catch::Contains("not a tag file"));
  CHECK_THROWS_AS(FileReader(dir.file("missing.tags")), IoError);
}
