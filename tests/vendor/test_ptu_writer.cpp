// PtuWriter: a synthetic stream written as PTU and read back gives the same tags, sync and
// marker channels included; gaps longer than one counted overflow record can hold are split
// over several; tags PTU cannot hold are refused (a channel) or left out and counted (special
// tags); the header's record count and acquisition time are written at close.
#include <catch2/catch.hpp>

#include "support/drain.hpp"
#include "support/temp_dir.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/io/vendor/picoquant_files.hpp"
#include "tagflow/io/vendor/ptu_writer.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

std::vector<Tag> readBack(const std::string& path) {
  VendorFileSource source(openPtuFile(path), 4096);
  return drain(source).tags;
}

bool sameTags(const std::vector<Tag>& a, const std::vector<Tag>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].time != b[i].time || a[i].channel != b[i].channel || a[i].type != b[i].type) {
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("A synthetic stream written as PTU reads back unchanged", "[vendor][ptu_writer]") {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 2e6),
                     SyntheticChannel::partner(2, 1, 700, 30, 0.5),
                     SyntheticChannel::clock(100, 1e5, 5), SyntheticChannel::poisson(64, 1e4),
                     SyntheticChannel::poisson(202, 1e3)};
  config.duration_ps = 200'000'000'000;  // 0.2 s: about 6000 wraps of the 25-bit time field
  config.block_size = 5000;
  SyntheticSource source(config);
  const DrainedStream stream = drain(source);
  TempDir dir;
  const std::string path = dir.file("synthetic.ptu");
  PtuWriter writer(path, "test");
  for (const auto& block : stream.blocks) writer.write(block.tags);
  writer.close(stream.end());
  CHECK(writer.leftOut() == 0);
  const VendorFile file = openPtuFile(path);
  CHECK(file.warnings.empty());
  CHECK(file.records == writer.records());
  CHECK(file.header.find("MeasDesc_AcquisitionTime")->value == "200");
  CHECK(file.header.find("File_Comment")->value == "test");
  CHECK(sameTags(readBack(path), stream.tags));
}

TEST_CASE("PtuWriter splits long gaps over counted overflow records", "[vendor][ptu_writer]") {
  TempDir dir;
  const std::string path = dir.file("gap.ptu");
  // 2^25 - 1 overflows of 2^25 ps fit one record: 1.1e15 ps; jump three times that.
  const timestamp_t far =
      timestamp_t{3} * ((timestamp_t{1} << 25) - 1) * (timestamp_t{1} << 25) + 17;
  const std::vector<Tag> tags{makeTimeTag(1, 5), makeTimeTag(3, far), makeTimeTag(200, far + 1)};
  PtuWriter writer(path);
  writer.write(tags);
  writer.close(far + 2);
  CHECK(writer.records() == 3 + 3);  // three tags, three overflow records
  CHECK(sameTags(readBack(path), tags));
}

TEST_CASE("PtuWriter refuses channels PTU cannot hold and counts special tags left out",
          "[vendor][ptu_writer]") {
  TempDir dir;
  PtuWriter writer(dir.file("refused.ptu"));
  const std::vector<Tag> bad{makeTimeTag(-1, 10)};
  CHECK_THROWS_WITH(writer.write(bad), Contains("channel -1") && Contains("inputs 1..64") &&
                                           Contains("markers 200..203"));
  const std::vector<Tag> special{makeTimeTag(1, 10), Tag{TagType::OverflowBegin, 0, 0, 0, 20},
                                 Tag{TagType::OverflowEnd, 0, 0, 0, 30}, makeTimeTag(2, 40)};
  writer.write(special);
  writer.close(50);
  CHECK(writer.leftOut() == 2);
  CHECK(writer.records() == 2);
  CHECK_THROWS_AS(PtuWriter("/nonexistent-folder/x.ptu"), IoError);
}
