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

TEST_CASE("damage: a file cut at any byte yields every complete block, then names the offset",
          "[tagfile]") {
  test::TempDir dir;
  const Recording recording = makeRecording(dir, Compression::None);
  for (std::size_t cut = 0; cut < recording.bytes.size(); ++cut) {
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
      } catch (const DataError& error) {
        CHECK(blocks == complete);
        CHECK_THAT(error.what(),
                   Catch::Contains("truncated at byte offset " + std::to_string(cut)));
      }
    } catch (const DataError& error) {
      // Cut inside the file header.
      CHECK(complete == 0);
      CHECK_THAT(error.what(), Catch::Contains("cut") && (Catch::Contains("truncated") ||
                                                          Catch::Contains("not a tag file")));
    }
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
