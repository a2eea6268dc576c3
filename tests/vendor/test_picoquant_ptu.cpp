// PTU files: every record type, overflows (single and counted), markers, sync records, T3
// sync tags and exact rounding of a sync period that is not a whole number of picoseconds,
// on files written here with tags worked out by hand; the real files of tests/data/vendor
// against an independent decode of their records written out in this file; bad headers, header
// entries of the wrong type, a wrong record count, a file cut off between or inside records,
// channels the format does not define, records that go back in time and disorder beyond what
// a format allows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>

#include "ptu_builder.hpp"
#include "support/drain.hpp"
#include "support/temp_dir.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/truncated_data.hpp"
#include "tagflow/io/vendor/picoquant_files.hpp"
#include "tagflow/io/vendor/picoquant_records.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

struct Event {
  channel_t channel;
  timestamp_t time;
  bool operator==(const Event&) const = default;
  bool operator<(const Event& other) const {
    return time != other.time ? time < other.time : channel < other.channel;
  }
};

std::vector<Event> eventsOf(const std::string& path, std::size_t block_size = 1000) {
  VendorFileSource source(openPtuFile(path), block_size);
  const DrainedStream stream = drain(source);
  std::vector<Event> events;
  for (const Tag& tag : stream.tags) {
    REQUIRE(tag.type == TagType::TimeTag);
    events.push_back({tag.channel, tag.time});
  }
  return events;
}

std::vector<Event> sorted(std::vector<Event> events) {
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.time < b.time; });
  return events;
}

constexpr std::uint32_t kSpecial = 1u << 31;

std::uint32_t genericT2(std::uint32_t channel, std::uint32_t time, bool special = false) {
  return (special ? kSpecial : 0) | (channel << 25) | time;
}

std::uint32_t genericT3(std::uint32_t channel, std::uint32_t dtime, std::uint32_t nsync,
                        bool special = false) {
  return (special ? kSpecial : 0) | (channel << 25) | (dtime << 10) | nsync;
}

// The message of the error that reading `path` ends with, "" when it reads to the end.
std::string readError(const std::string& path, std::size_t block_size = 1000) {
  try {
    VendorFileSource source(openPtuFile(path), block_size);
    BlockBuffer block;
    while (source.next(block)) {
    }
  } catch (const DataError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

namespace {

// The index of the first difference (the shorter length when one is a prefix of the other),
// or -1: a readable failure for streams of many tags.
std::ptrdiff_t firstDifference(const std::vector<Event>& a, const std::vector<Event>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (!(a[i] == b[i])) return static_cast<std::ptrdiff_t>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<std::ptrdiff_t>(n);
}

}  // namespace

TEST_CASE("PicoHarp T2 records: photons, overflows and markers", "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("ph_t2.ptu");
  const std::vector<std::uint32_t> words{
      (0u << 28) | 100,           // the sync input at 100 units of 4 ps
      (3u << 28) | 200,           // input 3 (PicoHarp numbers its detector inputs from 1)
      (0xFu << 28) | 0,           // overflow: 210698240 units
      (1u << 28) | 5,             // input 1
      (0xFu << 28) | 0x100 | 0x5  // markers 0 and 2; the low bits are the marker mask
  };
  PtuBuilder().standard(0x00010203, 4e-12, 4e-12, 5).records(words).write(path);
  constexpr timestamp_t wrap = 210698240;
  CHECK(eventsOf(path) == sorted({{100, 400},
                                  {3, 800},
                                  {1, (wrap + 5) * 4},
                                  {200, (wrap + 0x105) * 4},
                                  {202, (wrap + 0x105) * 4}}));
}

TEST_CASE("Generic T2 records: sync records, counted and single overflows, markers",
          "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("mh_t2.ptu");
  const std::vector<std::uint32_t> words{
      genericT2(2, 10),            // input 2 at 10 units of 5 ps
      genericT2(0, 20, true),      // the sync, in T2 a record of its own
      genericT2(0x3F, 3, true),    // three overflows at once
      genericT2(0, 1),             // input 0
      genericT2(0b0010, 7, true),  // marker 1
      genericT2(0x3F, 0, true),    // an overflow record of the old kind: one
      genericT2(5, 2)};
  PtuBuilder().standard(0x00010207, 5e-12, 5e-12, 7).records(words).write(path);
  constexpr timestamp_t wrap = 33554432;
  CHECK(eventsOf(path) == sorted({{3, 50},
                                  {100, 100},
                                  {1, (3 * wrap + 1) * 5},
                                  {201, (3 * wrap + 7) * 5},
                                  {6, (4 * wrap + 2) * 5}}));
}

TEST_CASE("HydraHarp V1 T2 overflow records count one overflow each", "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("hh1_t2.ptu");
  PtuBuilder()
      .standard(0x00010204, 1e-12, 1e-12, 3)
      .records({genericT2(0x3F, 5, true), genericT2(0x3F, 0, true), genericT2(1, 9)})
      .write(path);
  CHECK(eventsOf(path) == std::vector<Event>{{2, 2 * 33552000 + 9}});
}

TEST_CASE("PicoHarp T3 records: a sync tag per sync period holding a photon", "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("ph_t3.ptu");
  const auto photon = [](std::uint32_t channel, std::uint32_t dtime, std::uint32_t nsync) {
    return (channel << 28) | (dtime << 16) | nsync;
  };
  const std::vector<std::uint32_t> words{
      photon(1, 10, 5),                   // input 0 (PicoHarp numbers T3 inputs from 1)
      photon(2, 3, 5),                    // input 1, same sync period
      (0xFu << 28) | 0,                   // overflow: 65536 sync periods
      photon(4, 0, 1),                    // input 3
      (0xFu << 28) | (0b1000u << 16) | 2  // marker 3
  };
  PtuBuilder().standard(0x00010303, 100e-9, 4e-12, 5).records(words).write(path);
  constexpr timestamp_t period = 100'000;
  CHECK(eventsOf(path) == sorted({{100, 5 * period},
                                  {1, 5 * period + 40},
                                  {2, 5 * period + 12},
                                  {100, 65537 * period},
                                  {4, 65537 * period},
                                  {203, 65538 * period}}));
}

TEST_CASE("Generic T3: counted overflows and a sync period of 1/3 us rounded exactly",
          "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("hh2_t3.ptu");
  const std::vector<std::uint32_t> words{
      genericT3(0, 7, 1),           // 333333.33 ps -> 333333, photon 7 ps later
      genericT3(1, 0, 2),           // 666666.67 ps -> 666667
      genericT3(0, 0, 3),           // 999999.99 ps -> 1000000
      genericT3(0x3F, 0, 2, true),  // two overflows of 1024 sync periods at once
      genericT3(2, 1, 1),           // sync 2049: 683 us exactly
      genericT3(0b0101, 0, 1, true)};
  PtuBuilder().standard(0x01010304, 1.0 / 3e6, 1e-12, 6).records(words).write(path);
  CHECK(eventsOf(path) == sorted({{100, 333333},
                                  {1, 333340},
                                  {100, 666667},
                                  {2, 666667},
                                  {100, 1000000},
                                  {1, 1000000},
                                  {100, 683000000},
                                  {3, 683000001},
                                  {200, 683000000},
                                  {202, 683000000}}));
}

TEST_CASE("HydraHarp V1 T3 overflow records count one overflow each", "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("hh1_t3.ptu");
  PtuBuilder()
      .standard(0x00010304, 1e-6, 1e-12, 2)
      .records({genericT3(0x3F, 0, 5, true), genericT3(0, 0, 1)})
      .write(path);
  CHECK(eventsOf(path) == std::vector<Event>{{100, 1025'000'000}, {1, 1025'000'000}});
}

TEST_CASE("Every one of the twelve PTU record types is recognised", "[vendor][ptu]") {
  TempDir dir;
  const std::map<std::uint32_t, std::string> types{
      {0x00010203, "PicoHarp 300 T2"},   {0x00010303, "PicoHarp 300 T3"},
      {0x00010204, "HydraHarp V1 T2"},   {0x00010304, "HydraHarp V1 T3"},
      {0x01010204, "HydraHarp V2 T2"},   {0x01010304, "HydraHarp V2 T3"},
      {0x00010205, "TimeHarp 260 N T2"}, {0x00010305, "TimeHarp 260 N T3"},
      {0x00010206, "TimeHarp 260 P T2"}, {0x00010306, "TimeHarp 260 P T3"},
      {0x00010207, "MultiHarp"},         {0x00010307, "MultiHarp"}};
  for (const auto& [code, name] : types) {
    INFO(name);
    const std::string path = dir.file("type.ptu");
    const bool t3 = ((code >> 8) & 0xF) == 3;
    const bool picoharp = (code & 0xFF) == 0x03;
    // One photon on the first input, in the layout of the type.
    const std::uint32_t word = picoharp ? (1u << 28) | 1 : (t3 ? genericT3(0, 0, 1) : 1u);
    PtuBuilder().standard(code, t3 ? 1e-7 : 1e-12, 1e-12, 1).records({word}).write(path);
    const VendorFile file = openPtuFile(path);
    CHECK_THAT(file.format, Contains(name));
    const auto events = eventsOf(path);
    REQUIRE(!events.empty());
    CHECK(events.back().channel == 1);
  }
}

TEST_CASE("Every PTU header entry type is parsed and kept", "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("header.ptu");
  PtuBuilder()
      .text("File_Comment", "a comment")
      .raw("Flag", 0x00000008, 1)
      .raw("Bits", 0x11000008, 0xF0)
      .raw("Created", 0x21000008,
           [] {
             std::uint64_t bits;
             const double days = 25569.5;  // 1970-01-01 12:00
             std::memcpy(&bits, &days, 8);
             return bits;
           }())
      .integer("TTResult_InputRate", 1234, 0)
      .standard(0x00010203, 4e-12, 4e-12, 0)
      .write(path);
  const VendorFile file = openPtuFile(path);
  REQUIRE(file.header.find("File_Comment") != nullptr);
  CHECK(file.header.find("File_Comment")->value == "a comment");
  CHECK(file.header.find("Flag")->value == "true");
  CHECK(file.header.find("Bits")->value == "0x00000000000000f0");
  CHECK(file.header.find("Created")->value == "1970-01-01T12:00:00");
  CHECK(file.header.find("TTResult_InputRate(0)")->value == "1234");
  CHECK(file.header.find("MeasDesc_GlobalResolution")->type == "float");
  CHECK(file.records == 0);
}

TEST_CASE("Bad PTU headers are named with their byte offset", "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("bad.ptu");
  std::ofstream(path) << "PQTTTX  1.0.00  ";
  CHECK_THROWS_WITH(openPtuFile(path), Contains("not a PTU file"));

  PtuBuilder().raw("Odd", 0x12345678, 0).end().write(path);
  CHECK_THROWS_AS(openPtuFile(path), DataError);
  CHECK_THROWS_WITH(openPtuFile(path),
                    Contains("0x12345678") && Contains("'Odd'") && Contains("byte offset 16"));

  PtuBuilder().standard(0x00010999, 1e-12, 1e-12, 0).write(path);
  CHECK_THROWS_WITH(openPtuFile(path), Contains("0x00010999") && Contains("0x00010307"));

  PtuBuilder().standard(0x00010203, 0.0, 4e-12, 0).write(path);
  CHECK_THROWS_WITH(openPtuFile(path), Contains("MeasDesc_GlobalResolution") && Contains("0 s"));

  PtuBuilder builder;
  builder.integer("TTResultFormat_TTTRRecType", 0x00010203);
  const std::size_t cut = builder.size() + 20;
  builder.end().write(path);
  std::filesystem::resize_file(path, cut);
  CHECK_THROWS_WITH(openPtuFile(path), Contains("ends at byte") && Contains("header"));
}

TEST_CASE("A file cut off between records: every record, then the error", "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("short.ptu");
  PtuBuilder().standard(0x00010207, 1e-12, 1e-12, 5).records({1, 2, 3}).write(path);
  VendorFile file = openPtuFile(path);
  CHECK(file.warnings.empty());
  CHECK(file.missing_records == 2);
  const std::uint64_t end = file.data_offset + 12;
  VendorFileSource source(std::move(file), 10);
  BlockBuffer block;
  std::vector<timestamp_t> times;
  CHECK_THROWS_AS(
      [&] {
        while (source.next(block)) {
          for (const Tag& tag : block.tags) times.push_back(tag.time);
        }
      }(),
      TruncatedData);
  CHECK(times == std::vector<timestamp_t>{1, 2, 3});
  CHECK_THAT(readError(path), Contains("truncated at byte offset " + std::to_string(end)) &&
                                  Contains("holds 3 records, the header counts 5"));
  // Cut inside a record as well: the partial record's error, which names the count too.
  PtuBuilder().standard(0x00010207, 1e-12, 1e-12, 5).records({1, 2, 3}).bytes(2).write(path);
  CHECK_THAT(readError(path), Contains("last record is truncated") &&
                                  Contains("the header counts 5 records, the file holds 3"));
}

TEST_CASE("A wrong record count is a warning, a truncated last record an error after the rest",
          "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("cut.ptu");
  PtuBuilder builder;
  builder.standard(0x00010207, 1e-12, 1e-12, 0).records({1, 2, 3}).bytes(2);
  builder.write(path);
  VendorFile file = openPtuFile(path);
  REQUIRE(file.warnings.size() == 1);
  CHECK_THAT(file.warnings[0], Contains("counts 0 records") && Contains("holds 3"));
  const std::uint64_t tail = file.data_offset + 12;
  VendorFileSource source(std::move(file), 10);
  BlockBuffer block;
  std::vector<timestamp_t> times;
  CHECK_THROWS_WITH(
      [&] {
        while (source.next(block)) {
          for (const Tag& tag : block.tags) times.push_back(tag.time);
        }
      }(),
      Contains("truncated") && Contains("byte offset " + std::to_string(tail)));
  CHECK(times == std::vector<timestamp_t>{1, 2, 3});
}

TEST_CASE("PTU header values the records depend on must have their type", "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("typed.ptu");
  const auto records = {genericT2(0, 100), genericT2(0, 200)};
  // A resolution stored as an integer: its bits read as a double would be 5e-324 s.
  PtuBuilder()
      .integer("TTResultFormat_TTTRRecType", 0x00010207)
      .integer("MeasDesc_GlobalResolution", 1)
      .end()
      .records(records)
      .write(path);
  CHECK_THROWS_AS(openPtuFile(path), DataError);
  CHECK_THROWS_WITH(openPtuFile(path), Contains("'MeasDesc_GlobalResolution'") &&
                                           Contains("byte offset 64") && Contains("type int") &&
                                           Contains("valid: float"));
  // As a string: its value is the string's length.
  PtuBuilder()
      .integer("TTResultFormat_TTTRRecType", 0x00010207)
      .real("MeasDesc_GlobalResolution", 1e-12)
      .text("MeasDesc_Resolution", "1e-12")
      .end()
      .records(records)
      .write(path);
  CHECK_THROWS_WITH(openPtuFile(path), Contains("'MeasDesc_Resolution'") &&
                                           Contains("type string") && Contains("valid: float"));
  PtuBuilder()
      .real("TTResultFormat_TTTRRecType", 1.0)
      .real("MeasDesc_GlobalResolution", 1e-12)
      .end()
      .write(path);
  CHECK_THROWS_WITH(openPtuFile(path), Contains("'TTResultFormat_TTTRRecType'") &&
                                           Contains("type float") && Contains("valid: int"));
  PtuBuilder()
      .integer("TTResultFormat_TTTRRecType", 0x00010207)
      .real("TTResult_NumberOfRecords", 2.0)
      .real("MeasDesc_GlobalResolution", 1e-12)
      .end()
      .write(path);
  CHECK_THROWS_WITH(openPtuFile(path), Contains("'TTResult_NumberOfRecords'") &&
                                           Contains("type float") && Contains("valid: int"));
  // Below a femtosecond a resolution is refused, however it scales.
  PtuBuilder().standard(0x00010207, 5e-324, 5e-324, 2).records(records).write(path);
  CHECK_THROWS_WITH(openPtuFile(path),
                    Contains("MeasDesc_GlobalResolution") && Contains("valid: >= 1e-15 s"));
  PtuBuilder().standard(0x00010307, 100e-9, 1e-16, 2).records(records).write(path);
  CHECK_THROWS_WITH(openPtuFile(path),
                    Contains("MeasDesc_Resolution") && Contains("1e-16 s is invalid"));
  PtuBuilder().standard(0x00010207, 1e-15, 1e-15, 2).records(records).write(path);
  CHECK_NOTHROW(openPtuFile(path));
}

TEST_CASE("Records on channels the format does not define name the record and the channel",
          "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("channels.ptu");
  // PicoHarp T3: inputs 1..4; channel 0 would have become first_input - 1, the sync's
  // neighbour or the sync itself.
  const auto picoHarpT3 = [](std::uint32_t channel, std::uint32_t nsync) {
    return (channel << 28) | (10u << 16) | nsync;
  };
  for (std::uint32_t channel : {0u, 5u, 14u}) {
    INFO("PicoHarp T3 channel " << channel);
    PtuBuilder()
        .standard(0x00010303, 100e-9, 4e-12, 2)
        .records({picoHarpT3(1, 1), picoHarpT3(channel, 2)})
        .write(path);
    CHECK_THAT(readError(path),
               Contains("record 1: a PicoHarp T3 record on channel " + std::to_string(channel)) &&
                   Contains("valid: 1..4"));
  }
  // PicoHarp T2: 0 (the sync input) to 4.
  for (std::uint32_t channel : {5u, 14u}) {
    INFO("PicoHarp T2 channel " << channel);
    PtuBuilder()
        .standard(0x00010203, 4e-12, 4e-12, 2)
        .records({(0u << 28) | 10, (channel << 28) | 20})
        .write(path);
    CHECK_THAT(readError(path),
               Contains("record 1: a PicoHarp T2 record on channel " + std::to_string(channel)) &&
                   Contains("valid: 0..4"));
  }
  PtuBuilder()
      .standard(0x00010203, 4e-12, 4e-12, 2)
      .records({(4u << 28) | 10, (0u << 28) | 20})
      .write(path);
  CHECK(readError(path).empty());

  // Generic and HydraHarp special records: 1..15 markers, 63 overflow, and in T2 0 the sync.
  for (std::uint32_t channel : {16u, 20u, 62u}) {
    INFO("special channel " << channel);
    PtuBuilder()
        .standard(0x00010207, 1e-12, 1e-12, 2)
        .records({genericT2(0, 100), genericT2(channel, 200, true)})
        .write(path);
    CHECK_THAT(readError(path),
               Contains("record 1: a special record on channel " + std::to_string(channel)) &&
                   Contains("valid: 0 sync, 1..15 markers, 63 overflow"));
  }
  for (std::uint32_t channel : {0u, 16u, 62u}) {
    INFO("T3 special channel " << channel);
    for (std::uint32_t type : {0x00010304u, 0x00010307u}) {
      PtuBuilder()
          .standard(type, 100e-9, 1e-12, 2)
          .records({genericT3(0, 5, 1), genericT3(channel, 0, 2, true)})
          .write(path);
      CHECK_THAT(readError(path),
                 Contains("record 1: a special record on channel " + std::to_string(channel)) &&
                     Contains("(valid: 1..15 markers, 63 overflow)"));
    }
  }
}

TEST_CASE("Records that go back in time are refused, not sorted", "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("back.ptu");
  // T3: one record from an earlier sync period than the one before it, in the first block.
  std::vector<std::uint32_t> words;
  for (std::uint32_t k = 0; k < 100; ++k) words.push_back(genericT3(0, 5, 500 + k));
  words.push_back(genericT3(1, 5, 10));
  for (std::uint32_t k = 0; k < 100; ++k) words.push_back(genericT3(0, 5, 600 + k));
  PtuBuilder().standard(0x00010307, 100e-9, 1e-12, 201).records(words).write(path);
  CHECK_THAT(readError(path), Contains("record 100: sync period 10") &&
                                  Contains("previous record's 599") &&
                                  Contains("valid: nsync >= 599"));
  // Overflows count: period 1024 + 3 after period 1030 is earlier.
  PtuBuilder()
      .standard(0x00010307, 100e-9, 1e-12, 4)
      .records({genericT3(0, 5, 1000), genericT3(0x3F, 0, 1, true), genericT3(0, 5, 6),
                genericT3(0, 5, 3)})
      .write(path);
  CHECK_THAT(readError(path),
             Contains("record 3: sync period 1027") && Contains("previous record's 1030"));
  // A marker's sync period too, and a photon's after a marker's.
  PtuBuilder()
      .standard(0x00010307, 100e-9, 1e-12, 2)
      .records({genericT3(0, 5, 7), genericT3(1, 0, 6, true)})
      .write(path);
  CHECK_THAT(readError(path),
             Contains("record 1: sync period 6") && Contains("previous record's 7"));
  PtuBuilder()
      .standard(0x00010307, 100e-9, 1e-12, 2)
      .records({genericT3(1, 0, 7, true), genericT3(0, 5, 6)})
      .write(path);
  CHECK_THAT(readError(path), Contains("record 1: sync period 6"));
  // Photons of one sync period, in any order of their dtimes, are put in order.
  PtuBuilder()
      .standard(0x00010307, 100e-9, 1e-12, 3)
      .records({genericT3(0, 500, 7), genericT3(1, 5, 7), genericT3(2, 50, 7)})
      .write(path);
  CHECK(eventsOf(path) == std::vector<Event>{{100, 700000}, {2, 700005}, {3, 700050}, {1, 700500}});

  // T2: a photon more than the markers' 1 us of slack before the latest photon.
  words.clear();
  for (std::uint32_t k = 0; k < 100; ++k) words.push_back(genericT2(0, 20'000'000 + 1000 * k));
  words.push_back(genericT2(1, 1'000'000));
  PtuBuilder().standard(0x00010207, 1e-12, 1e-12, 101).records(words).write(path);
  CHECK_THAT(readError(path), Contains("record 100: a photon at 1000000 ps") &&
                                  Contains("latest photon before it at 20099000 ps") &&
                                  Contains("valid: at or after 19099000 ps"));
  // The latest photon counts, not the one just before: 2'000'000 is within 1 us of 2'500'000
  // but not of 3'000'001.
  PtuBuilder()
      .standard(0x00010207, 1e-12, 1e-12, 3)
      .records({genericT2(0, 3'000'001), genericT2(0, 2'500'000), genericT2(0, 2'000'000)})
      .write(path);
  CHECK_THAT(readError(path), Contains("record 2: a photon at 2000000 ps"));
  // A marker as well.
  PtuBuilder()
      .standard(0x00010207, 1e-12, 1e-12, 2)
      .records({genericT2(0, 3'000'001), genericT2(1, 2'000'000, true)})
      .write(path);
  CHECK_THAT(readError(path), Contains("record 1: a marker at 2000000 ps"));
  // Within the slack: sorted.
  PtuBuilder()
      .standard(0x00010207, 1e-12, 1e-12, 3)
      .records({genericT2(0, 3'000'000), genericT2(1, 2'000'000, true), genericT2(1, 2'500'000)})
      .write(path);
  CHECK(eventsOf(path) == std::vector<Event>{{200, 2'000'000}, {2, 2'500'000}, {1, 3'000'000}});
}

TEST_CASE("Disorder beyond what a format allows names the record", "[vendor][ptu]") {
  TempDir dir;
  const std::string path = dir.file("disorder.ptu");
  // T2 records in order up to record 299999, then one far before the tags of the first chunk
  // of records, which are handed out by then (T2 allows 1 us of disorder, for markers).
  std::vector<std::uint32_t> words;
  for (std::uint32_t i = 0; i < 300'000; ++i) words.push_back(genericT2(0, 10'000 + 100 * i));
  words.push_back(genericT2(0, 5'000));
  PtuBuilder().standard(0x00010207, 1e-12, 1e-12, 300'001).records(words).write(path);
  VendorFileSource source(openPtuFile(path), 1000);
  BlockBuffer block;
  CHECK_THROWS_WITH(
      [&] {
        while (source.next(block)) {
        }
      }(),
      Contains("record 300000"));
}

namespace {

// The real files' records decoded again, independently of the library: a loop over the
// words written from PicoQuant's record descriptions.
std::vector<Event> bruteForce(const std::string& path, std::uint32_t record_type) {
  const VendorFile file = openPtuFile(path);
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(file.data_offset));
  const double global = std::stod(file.header.find("MeasDesc_GlobalResolution")->value);
  const double resolution = std::stod(file.header.find("MeasDesc_Resolution")->value);
  std::vector<Event> events;
  std::uint64_t overflow = 0;
  std::uint64_t last_sync = ~std::uint64_t{0};
  const auto ps = [](long double value) { return static_cast<timestamp_t>(std::llround(value)); };
  std::uint32_t word;
  while (in.read(reinterpret_cast<char*>(&word), 4)) {
    if (record_type == 0x00010203) {  // PicoHarp T2, 4 ps
      const std::uint32_t channel = word >> 28, time = word & 0x0FFFFFFF;
      if (channel == 15 && (time & 0xF) == 0) {
        overflow += 210698240;
      } else if (channel == 15) {
        for (int b = 0; b < 4; ++b) {
          if ((time >> b) & 1)
            events.push_back({200 + b, 4 * static_cast<timestamp_t>(overflow + time)});
        }
      } else {
        events.push_back({channel == 0 ? 100 : static_cast<channel_t>(channel),
                          4 * static_cast<timestamp_t>(overflow + time)});
      }
      continue;
    }
    // HydraHarp T3, V1 (single overflows) or V2 (counted)
    const bool special = (word >> 31) != 0;
    const std::uint32_t channel = (word >> 25) & 0x3F, dtime = (word >> 10) & 0x7FFF,
                        nsync = word & 0x3FF;
    // Units within 1e-6 ps of a whole number are whole (float noise of the header:
    // 6.399999974426862e-11 s is the HydraHarp's 64 ps).
    const auto snapped = [](double seconds) {
      const long double value = static_cast<long double>(seconds) * 1e12L;
      return std::fabs(value - std::round(value)) < 1e-6L ? std::round(value) : value;
    };
    const long double period = snapped(global);
    if (special && channel == 0x3F) {
      overflow += 1024 * (record_type == 0x01010304 && nsync != 0 ? nsync : 1);
    } else if (special) {
      for (int b = 0; b < 6; ++b) {
        if ((channel >> b) & 1) events.push_back({200 + b, ps((overflow + nsync) * period)});
      }
    } else {
      const std::uint64_t sync = overflow + nsync;
      if (sync != last_sync) events.push_back({100, ps(sync * period)});
      last_sync = sync;
      events.push_back(
          {static_cast<channel_t>(channel) + 1, ps(sync * period + dtime * snapped(resolution))});
    }
  }
  std::sort(events.begin(), events.end());
  return events;
}

}  // namespace

TEST_CASE("The real PTU files read completely and match an independent decode",
          "[vendor][ptu][real]") {
  const std::string data = TAGFLOW_VENDOR_DATA;
  for (const auto& [name, record_type] :
       std::vector<std::pair<std::string, std::uint32_t>>{{"v30_t2.ptu", 0x00010203},
                                                          {"v10_t3.ptu", 0x00010304},
                                                          {"v20_t3.ptu", 0x01010304},
                                                          {"beads.ptu", 0x01010304}}) {
    INFO(name);
    const std::string path = data + "/picoquant/" + name;
    const VendorFile file = openPtuFile(path);
    CHECK(file.warnings.empty());
    CHECK(std::stoll(file.header.find("TTResultFormat_TTTRRecType")->value) == record_type);
    std::vector<Event> events = eventsOf(path, 4096);
    REQUIRE(std::is_sorted(events.begin(), events.end(),
                           [](const Event& a, const Event& b) { return a.time < b.time; }));
    // Equal times may come in either order: compare as sorted lists.
    std::sort(events.begin(), events.end());
    const std::vector<Event> expected = bruteForce(path, record_type);
    CHECK(events.size() == expected.size());
    const std::ptrdiff_t difference = firstDifference(events, expected);
    if (difference >= 0 && static_cast<std::size_t>(difference) < events.size() &&
        static_cast<std::size_t>(difference) < expected.size()) {
      INFO("first difference at " << difference << ": " << events[difference].channel << " @ "
                                  << events[difference].time << " against "
                                  << expected[difference].channel << " @ "
                                  << expected[difference].time);
      CHECK(difference == -1);
    }
    CHECK(difference == -1);
    // The last tag lies inside the acquisition the header states (the PicoHarp file holds
    // its first 7.65 s of 60).
    const timestamp_t acquisition =
        std::stoll(file.header.find("MeasDesc_AcquisitionTime")->value) * 1'000'000'000;
    CHECK(events.back().time <= acquisition);
    CHECK(events.back().time > acquisition / 10);
  }
}

TEST_CASE("The PicoHarp T2 file's count rates agree with the header's", "[vendor][ptu][real]") {
  const std::string path = std::string(TAGFLOW_VENDOR_DATA) + "/picoquant/v30_t2.ptu";
  const VendorFile file = openPtuFile(path);
  const auto events = eventsOf(path, 16384);
  const double seconds = static_cast<double>(events.back().time) * 1e-12;
  const auto rate = [&](channel_t channel) {
    return static_cast<double>(
               std::count_if(events.begin(), events.end(),
                             [channel](const Event& e) { return e.channel == channel; })) /
           seconds;
  };
  // PicoHarp's input 0 is its sync input (TTResult_SyncRate), the detector input is the
  // first of TTResult_InputRate. The header's rates are the instrument's readings at the end;
  // the file's mean rates are within 5 % of them.
  CHECK(rate(100) == Approx(std::stod(file.header.find("TTResult_SyncRate")->value)).epsilon(0.05));
  CHECK(rate(1) ==
        Approx(std::stod(file.header.find("TTResult_InputRate(0)")->value)).epsilon(0.05));
}

TEST_CASE("A PTU file over 4 GiB is sized with 64-bit offsets, and read in bounded memory",
          "[vendor][ptu]") {
  // Sparse: the header, then a hole that reads as zero words, 4.5 GiB in all. Opening it must
  // count every record and find no disagreement with the header.
  TempDir dir;
  const std::string path = dir.file("large.ptu");
  const std::uint64_t records = (std::uint64_t{9} << 29) / 4;  // 4.5 GiB of 4-byte records
  PtuBuilder builder;
  builder.standard(0x00010207, 1e-12, 1e-12, static_cast<std::int64_t>(records));
  builder.write(path);
  std::filesystem::resize_file(path, builder.size() + records * 4);
  const VendorFile file = openPtuFile(path);
  CHECK(file.records == records);
  CHECK(file.file_size > (std::uint64_t{1} << 32));
  CHECK(file.warnings.empty());
  // Zero words are photons of input 0, all at time 0: a block never splits one time, so the
  // reader refuses once 2^24 tags wait, naming the record, instead of taking all memory.
  VendorFileSource source(openPtuFile(path), 1024);
  BlockBuffer block;
  CHECK_THROWS_WITH(source.next(block),
                    Contains("more than 16777216 tags wait") && Contains("at record"));
}
