// PicoQuant's legacy fixed-header files (.pt2, .pt3, .ht2, .ht3): files of each kind written
// here, header and records, with tags worked out by hand (overflows single and counted, markers,
// T3 sync tags, an image header, a wrong record count); the real HydraHarp 1.0 .ht3 of
// tests/data/vendor/legacy against a decode of its records written out in this file from the
// format description; bad input: a header cut short, a foreign ident, an unknown version or
// mode, a missing sync rate, a truncated last record.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "support/drain.hpp"
#include "support/temp_dir.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/truncated_data.hpp"
#include "tagflow/io/vendor/picoquant_files.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

struct Event {
  channel_t channel;
  timestamp_t time;
  bool operator==(const Event&) const = default;
  friend std::ostream& operator<<(std::ostream& out, const Event& event) {
    return out << "(" << event.channel << ", " << event.time << ")";
  }
};

// By time, then channel: tags of one instant may come out in either order.
std::vector<Event> ordered(std::vector<Event> events) {
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.time != b.time ? a.time < b.time : a.channel < b.channel;
  });
  return events;
}

std::vector<Event> eventsOf(const DrainedStream& stream) {
  std::vector<Event> events;
  for (const Tag& tag : stream.tags) {
    REQUIRE(tag.type == TagType::TimeTag);
    events.push_back({tag.channel, tag.time});
  }
  return events;
}

DrainedStream drainFile(const std::string& path, std::size_t block_size) {
  VendorFileSource source(openPicoQuantLegacyFile(path), block_size);
  DrainedStream stream = drain(source);
  requireWellFormed(stream);
  return stream;
}

std::string fieldValue(const VendorFile& file, const std::string& name) {
  const HeaderField* field = file.header.find(name);
  INFO("header field " << name);
  REQUIRE(field != nullptr);
  return field->value;
}

// Little-endian header bytes, field by field.
class Bytes {
 public:
  Bytes& i32(std::int32_t value) { return put(&value, 4); }
  Bytes& u32(std::uint32_t value) { return put(&value, 4); }
  Bytes& u64(std::uint64_t value) { return put(&value, 8); }
  Bytes& f32(float value) { return put(&value, 4); }
  Bytes& f64(double value) { return put(&value, 8); }
  Bytes& text(const std::string& value, std::size_t size) {
    std::vector<std::uint8_t> field(size, 0);
    std::memcpy(field.data(), value.data(), std::min(value.size(), size));
    data.insert(data.end(), field.begin(), field.end());
    return *this;
  }
  Bytes& zeros(std::size_t count) {
    data.insert(data.end(), count, 0);
    return *this;
  }

  std::vector<std::uint8_t> data;

 private:
  Bytes& put(const void* value, std::size_t size) {
    const auto* bytes = static_cast<const std::uint8_t*>(value);
    data.insert(data.end(), bytes, bytes + size);
    return *this;
  }
};

struct Legacy {
  Legacy(std::string ident_, std::string version_, std::int32_t mode_)
      : ident(std::move(ident_)), version(std::move(version_)), mode(mode_) {}

  std::string ident;    // "PicoHarp 300" or "HydraHarp"
  std::string version;  // "2.0" for PicoHarp, "1.0" or "2.0" for HydraHarp
  std::int32_t mode;    // 2 = T2, 3 = T3
  std::int32_t sync_rate = 40'000'000;
  float board_resolution_ns = 0.016f;  // PicoHarp
  double resolution_ps = 8;            // HydraHarp
  std::int32_t acquisition_ms = 0;
  std::int64_t header_records = -1;  // -1: the number of records written
  std::vector<std::int32_t> image_words;
  std::int32_t inputs = 2;  // HydraHarp InpChansPresent
};

// The text header both instruments share: 328 bytes.
void textHeader(Bytes& out, const Legacy& file) {
  out.text(file.ident, 16).text(file.version, 6).text("tagflow test", 18).text("0.2", 12);
  out.text("01/02/24 10:00:00", 18).text("\r\n", 2).text("synthetic", 256);
}

// The display and automation block both binary headers end with: 136 bytes.
void displayAndRepeat(Bytes& out) {
  for (int i = 0; i < 8; ++i) out.i32(i).i32(1);
  for (int i = 0; i < 9; ++i) out.f32(0.5f * static_cast<float>(i));
  out.i32(0).i32(1).i32(0).i32(0).text("", 20);
}

std::int64_t recordCount(const Legacy& file, const std::vector<std::uint32_t>& records) {
  return file.header_records >= 0 ? file.header_records : static_cast<std::int64_t>(records.size());
}

// pt2demo.c / pt3demo.c: text header, binary header (208 bytes), one board header (156
// bytes), TTTR header (36 bytes), image header words, records.
std::vector<std::uint8_t> picoHarpFile(const Legacy& file,
                                       const std::vector<std::uint32_t>& records) {
  Bytes out;
  textHeader(out, file);
  out.i32(0).i32(32).i32(4).i32(1).i32(0).i32(file.mode).i32(0).i32(0).i32(0);
  out.i32(file.acquisition_ms).i32(0).i32(1).i32(0).i32(0).i32(0).i32(100).i32(1).i32(10000);
  displayAndRepeat(out);
  out.text("PicoHarp 300", 16).text("2.0", 8).i32(1012345).i32(1);
  out.i32(10).i32(100).i32(10).i32(100).f32(file.board_resolution_ns).i32(0).i32(0);
  for (int r = 0; r < 4; ++r) out.i32(r).i32(-100).i32(1).i32(0).i32(50).i32(5);
  out.i32(0).i32(0).i32(0).i32(file.sync_rate).i32(2500).i32(7).i32(0);
  out.i32(static_cast<std::int32_t>(recordCount(file, records)));
  out.i32(static_cast<std::int32_t>(file.image_words.size()));
  for (std::int32_t word : file.image_words) out.i32(word);
  for (std::uint32_t record : records) out.u32(record);
  return out.data;
}

// The HydraHarp demos: text header, binary header (208 bytes), hardware header (160 bytes, ten
// module slots), 16 bytes per input, 4 bytes of rate per input, TTTR header (24 bytes), image
// header words, records.
std::vector<std::uint8_t> hydraHarpFile(const Legacy& file,
                                        const std::vector<std::uint32_t>& records) {
  Bytes out;
  textHeader(out, file);
  out.i32(0).i32(32).i32(0).i32(file.mode).i32(0).i32(3).f64(file.resolution_ps);
  out.i32(0).i32(file.acquisition_ms).u32(0).i32(0).i32(0).i32(0);
  out.u32(0).u32(100).u32(1).u32(10000);
  displayAndRepeat(out);
  out.text("HydraHarp 400", 16).text("930001", 8).i32(1011181).i32(2);
  out.i32(1000).i32(0x01150008).i32(1010).i32(0x02010103);
  out.zeros(8 * 8);
  out.f64(1.0).u64((std::uint64_t{1} << file.inputs) - 1).i32(file.inputs);
  out.i32(0).i32(0).i32(0x0f07).i32(1).i32(150).i32(20).i32(-1700);
  for (int i = 0; i < file.inputs; ++i) out.i32(i / 2 + 2).i32(250).i32(10).i32(100 * i - 300);
  for (int i = 0; i < file.inputs; ++i) out.i32(1000 + i);
  out.i32(file.sync_rate).i32(7).i32(0);
  out.i32(static_cast<std::int32_t>(file.image_words.size()));
  out.u64(static_cast<std::uint64_t>(recordCount(file, records)));
  for (std::int32_t word : file.image_words) out.i32(word);
  for (std::uint32_t record : records) out.u32(record);
  return out.data;
}

std::string writeFile(const TempDir& dir, const std::string& name,
                      const std::vector<std::uint8_t>& bytes) {
  dir.writeBytes(name, bytes.data(), bytes.size());
  return dir.file(name);
}

std::vector<std::uint8_t> readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Record words written from the format descriptions.
std::uint32_t picoHarpT2(std::uint32_t channel, std::uint32_t time) {
  return (channel << 28) | time;
}
std::uint32_t picoHarpT3(std::uint32_t channel, std::uint32_t dtime, std::uint32_t nsync) {
  return (channel << 28) | (dtime << 16) | nsync;
}
std::uint32_t hydraHarpT2(bool special, std::uint32_t channel, std::uint32_t time) {
  return (special ? 1u << 31 : 0u) | (channel << 25) | time;
}
std::uint32_t hydraHarpT3(bool special, std::uint32_t channel, std::uint32_t dtime,
                          std::uint32_t nsync) {
  return (special ? 1u << 31 : 0u) | (channel << 25) | (dtime << 10) | nsync;
}

std::string messageOf(const std::string& path) {
  try {
    openPicoQuantLegacyFile(path);
  } catch (const DataError& error) {
    return error.what();
  }
  FAIL("no DataError for " << path);
  return {};
}

}  // namespace

TEST_CASE("PicoHarp T2 (.pt2): photons, overflows, markers in 4 ps units", "[vendor][legacy]") {
  TempDir dir;
  constexpr std::int64_t kWrap = 210698240;
  const std::vector<std::uint32_t> records{
      picoHarpT2(0, 100),
      picoHarpT2(1, 250),
      picoHarpT2(0xF, 0),  // overflow: no marker bit
      picoHarpT2(2, 5),
      picoHarpT2(0xF, 0x1000 | 0x2),  // marker 1; the low time bits are the marker bits
      picoHarpT2(0, 0x2000),
      picoHarpT2(0xF, 0x3000 | 0x9),  // markers 0 and 3 at once
  };
  Legacy legacy{"PicoHarp 300", "2.0", 2};
  legacy.board_resolution_ns = 0.004f;
  const std::string path = writeFile(dir, "t2.pt2", picoHarpFile(legacy, records));
  const VendorFile file = openPicoQuantLegacyFile(path);
  CHECK(file.format == "PicoHarp 300 T2 (.pt2, format 2.0)");
  CHECK(file.data_offset == 328 + 208 + 156 + 36);
  CHECK(file.records == records.size());
  CHECK(file.warnings.empty());
  CHECK(fieldValue(file, "MeasurementMode") == "2");
  CHECK(fieldValue(file, "Board(0).Resolution") == "0.004");

  // Another board resolution is noted; the stamps stay in 4 ps units.
  legacy.board_resolution_ns = 0.016f;
  const std::string odd = writeFile(dir, "odd.pt2", picoHarpFile(legacy, records));
  const VendorFile odd_file = openPicoQuantLegacyFile(odd);
  REQUIRE(odd_file.warnings.size() == 1);
  CHECK_THAT(odd_file.warnings[0], Contains("0.016 ns") && Contains("4 ps units"));

  // Input 0 of a PicoHarp is its sync input; the detector inputs count from 1.
  const std::vector<Event> expected{
      {100, 400},
      {1, 1000},
      {2, 4 * (kWrap + 5)},
      {201, 4 * (kWrap + 0x1002)},
      {100, 4 * (kWrap + 0x2000)},
      {200, 4 * (kWrap + 0x3009)},
      {203, 4 * (kWrap + 0x3009)},
  };
  for (std::size_t block : {std::size_t{1}, std::size_t{3}, std::size_t{1000}}) {
    INFO("block size " << block);
    CHECK(ordered(eventsOf(drainFile(path, block))) == ordered(expected));
  }
  CHECK(ordered(eventsOf(drainFile(odd, 1000))) == ordered(expected));
}

TEST_CASE("PicoHarp T3 (.pt3): sync period from CntRate0, dtime from the board resolution",
          "[vendor][legacy]") {
  TempDir dir;
  Legacy legacy{"PicoHarp 300", "2.0", 3};
  legacy.sync_rate = 40'000'000;        // 25000 ps
  legacy.board_resolution_ns = 0.016f;  // 16 ps, stored as 0.01600000075995922
  legacy.acquisition_ms = 5;
  legacy.header_records = 3;  // fewer than the file holds: a warning
  legacy.image_words = {7, 8, 9};
  const std::vector<std::uint32_t> records{
      picoHarpT3(1, 10, 3),    picoHarpT3(2, 20, 3),
      picoHarpT3(0xF, 0, 0),    // overflow: 65536 sync periods
      picoHarpT3(0xF, 0x4, 7),  // marker 2
      picoHarpT3(4, 4095, 9),
  };
  const std::string path = writeFile(dir, "t3.pt3", picoHarpFile(legacy, records));
  const VendorFile file = openPicoQuantLegacyFile(path);
  CHECK(file.format == "PicoHarp 300 T3 (.pt3, format 2.0)");
  CHECK(file.data_offset == 328 + 208 + 156 + 36 + 3 * 4);
  CHECK(file.records == records.size());
  CHECK(fieldValue(file, "AcquisitionTime") == "5");
  REQUIRE(file.warnings.size() == 1);
  CHECK_THAT(file.warnings[0], Contains("counts 3 records (Records), the file holds 5"));
  CHECK(file.missing_records == 0);
  CHECK(fieldValue(file, "CntRate0") == "40000000");
  CHECK(fieldValue(file, "ImgHdr") == "[7, 8, 9]");
  CHECK(fieldValue(file, "Board(0).RtChan(4).CFDZeroCross") == "5");
  CHECK(fieldValue(file, "ScriptName").empty());

  const std::vector<Event> expected{
      {100, 3 * 25000},
      {1, 3 * 25000 + 10 * 16},
      {2, 3 * 25000 + 20 * 16},
      {202, (65536 + 7) * std::int64_t{25000}},
      {100, (65536 + 9) * std::int64_t{25000}},
      {4, (65536 + 9) * std::int64_t{25000} + 4095 * 16},
  };
  for (std::size_t block : {std::size_t{1}, std::size_t{2}, std::size_t{1000}}) {
    INFO("block size " << block);
    const DrainedStream stream = drainFile(path, block);
    CHECK(ordered(eventsOf(stream)) == ordered(expected));
    // The stream ends after its last tag: AcquisitionTime is the time asked for.
    CHECK(stream.end() == (65536 + 9) * std::int64_t{25000} + 4095 * 16 + 1);
  }
}

TEST_CASE("HydraHarp T2 format 1.0 (.ht2): one wraparound of 33552000 ps per overflow record",
          "[vendor][legacy]") {
  TempDir dir;
  Legacy legacy{"HydraHarp", "1.0", 2};
  legacy.inputs = 8;
  const std::vector<std::uint32_t> records{
      hydraHarpT2(false, 0, 1000), hydraHarpT2(true, 0, 2000),  // the sync input
      hydraHarpT2(true, 63, 0),                                 // overflow
      hydraHarpT2(true, 5, 500),                                // markers 0 and 2
      hydraHarpT2(false, 7, 600),
  };
  const std::string path = writeFile(dir, "v1.ht2", hydraHarpFile(legacy, records));
  const VendorFile file = openPicoQuantLegacyFile(path);
  CHECK(file.format == "HydraHarp T2 (.ht2, format 1.0)");
  CHECK(file.data_offset == 880);
  CHECK(file.warnings.empty());
  CHECK(fieldValue(file, "InpChansPresent") == "8");
  CHECK(fieldValue(file, "InputRate(7)") == "1007");
  CHECK(fieldValue(file, "ModuleInfo(1).ModelCode") == "1010");
  CHECK(file.header.find("ModuleInfo(2).ModelCode") == nullptr);  // an unused slot

  const std::vector<Event> expected{
      {1, 1000}, {100, 2000}, {200, 33552500}, {202, 33552500}, {8, 33552600},
  };
  CHECK(ordered(eventsOf(drainFile(path, 2))) == ordered(expected));
}

TEST_CASE("HydraHarp T2 format 2.0 (.ht2): overflow records count wraparounds of 2^25 ps",
          "[vendor][legacy]") {
  TempDir dir;
  const std::vector<std::uint32_t> records{
      hydraHarpT2(false, 1, 10), hydraHarpT2(true, 63, 3),  // three wraparounds
      hydraHarpT2(true, 0, 7),   hydraHarpT2(true, 63, 0),  // old style: one
      hydraHarpT2(false, 0, 1),  hydraHarpT2(true, 1, 2),   // marker 0
  };
  const std::string path =
      writeFile(dir, "v2.ht2", hydraHarpFile({"HydraHarp", "2.0", 2}, records));
  const VendorFile file = openPicoQuantLegacyFile(path);
  CHECK(file.format == "HydraHarp T2 (.ht2, format 2.0)");
  CHECK(file.data_offset == 720 + 20 * 2);
  CHECK(file.warnings.empty());

  constexpr std::int64_t kWrap = 33554432;
  const std::vector<Event> expected{
      {2, 10},
      {100, 3 * kWrap + 7},
      {1, 4 * kWrap + 1},
      {200, 4 * kWrap + 2},
  };
  CHECK(ordered(eventsOf(drainFile(path, 1))) == ordered(expected));
}

TEST_CASE("HydraHarp T3 format 2.0 (.ht3): sync period from SyncRate, dtime from Resolution",
          "[vendor][legacy]") {
  TempDir dir;
  Legacy legacy{"HydraHarp", "2.0", 3};
  legacy.sync_rate = 80'000'000;  // 12500 ps
  legacy.resolution_ps = 8;
  legacy.image_words = {42};
  const std::vector<std::uint32_t> records{
      hydraHarpT3(false, 0, 100, 2),
      hydraHarpT3(true, 63, 0, 5),  // five wraparounds of 1024 sync periods
      hydraHarpT3(false, 3, 1, 1),
      hydraHarpT3(true, 2, 0, 1),   // marker 1
      hydraHarpT3(true, 63, 0, 0),  // old style: one
      hydraHarpT3(false, 1, 32767, 1023),
  };
  const std::string path = writeFile(dir, "v2.ht3", hydraHarpFile(legacy, records));
  const VendorFile file = openPicoQuantLegacyFile(path);
  CHECK(file.format == "HydraHarp T3 (.ht3, format 2.0)");
  CHECK(file.data_offset == 720 + 20 * 2 + 4);
  CHECK(file.warnings.empty());
  CHECK(fieldValue(file, "SyncRate") == "80000000");
  CHECK(fieldValue(file, "Resolution") == "8");
  CHECK(fieldValue(file, "NumberOfRecords") == "6");
  CHECK(fieldValue(file, "InputsEnabled") == "0x0000000000000003");

  const std::vector<Event> expected{
      {100, 25000},
      {1, 25000 + 800},
      {100, 5121 * 12500},
      {4, 5121 * 12500 + 8},
      {201, 5121 * 12500},
      {100, 7167 * 12500},
      {2, 7167 * 12500 + 32767 * 8},
  };
  for (std::size_t block : {std::size_t{1}, std::size_t{1000}}) {
    INFO("block size " << block);
    CHECK(ordered(eventsOf(drainFile(path, block))) == ordered(expected));
  }
}

TEST_CASE("HydraHarp T3 format 1.0 (.ht3): one wraparound per overflow record, counts noted",
          "[vendor][legacy]") {
  TempDir dir;
  Legacy legacy{"HydraHarp", "1.0", 3};
  legacy.sync_rate = 80'000'000;  // 12500 ps
  legacy.resolution_ps = 4;
  std::vector<std::uint32_t> records{
      hydraHarpT3(false, 2, 10, 1),
      hydraHarpT3(true, 63, 0, 0),  // overflow: 1024 sync periods
      hydraHarpT3(false, 0, 20, 3),
  };
  const std::vector<Event> expected{
      {100, 12500}, {3, 12500 + 40}, {100, 1027 * 12500}, {1, 1027 * 12500 + 80}};
  const std::string plain = writeFile(dir, "plain.ht3", hydraHarpFile(legacy, records));
  const VendorFile file = openPicoQuantLegacyFile(plain);
  CHECK(file.format == "HydraHarp T3 (.ht3, format 1.0)");
  CHECK(file.warnings.empty());
  CHECK(ordered(eventsOf(drainFile(plain, 1))) == ordered(expected));

  // An overflow record with a count is no format 1.0 record: read as one, and noted.
  records[1] = hydraHarpT3(true, 63, 0, 5);
  const std::string counted = writeFile(dir, "counted.ht3", hydraHarpFile(legacy, records));
  const VendorFile counted_file = openPicoQuantLegacyFile(counted);
  REQUIRE(counted_file.warnings.size() == 1);
  CHECK_THAT(counted_file.warnings[0],
             Contains("1 of the 1 overflow records among the first 3 records carry a count"));
  CHECK(ordered(eventsOf(drainFile(counted, 1))) == ordered(expected));
}

TEST_CASE("The real HydraHarp 1.0 .ht3 file against records decoded here", "[vendor][legacy]") {
  const std::string path = TAGFLOW_VENDOR_DATA "/legacy/PQ_HT3_SF-compression.ht3";
  const VendorFile file = openPicoQuantLegacyFile(path);
  CHECK(file.format == "HydraHarp T3 (.ht3, format 1.0)");
  CHECK(file.data_offset == 880);
  CHECK(file.records == 335928);
  CHECK(fieldValue(file, "Ident") == "HydraHarp");
  CHECK(fieldValue(file, "FormatVersion") == "1.0");
  CHECK(fieldValue(file, "CreatorName") == "SymPhoTime");
  CHECK(fieldValue(file, "Comment") == "Created on 11/12/2014 2:04:16 PM");
  CHECK(fieldValue(file, "MeasurementMode") == "3");
  CHECK(fieldValue(file, "Resolution") == "1");
  CHECK(fieldValue(file, "AcquisitionTime") == "1960000");
  CHECK(fieldValue(file, "HardwareIdent") == "HydraHarp 400");
  CHECK(fieldValue(file, "NumberOfModules") == "6");
  CHECK(fieldValue(file, "ModuleInfo(5).ModelCode") == "1040");
  CHECK(fieldValue(file, "BaseResolution") == "1");
  CHECK(fieldValue(file, "InpChansPresent") == "8");
  CHECK(fieldValue(file, "SyncDivider") == "8");
  CHECK(fieldValue(file, "InputModuleIndex(7)") == "5");
  CHECK(fieldValue(file, "InputOffset(2)") == "-9100");
  CHECK(fieldValue(file, "InputRate(0)") == "278");
  CHECK(fieldValue(file, "InputRate(7)") == "847");
  CHECK(fieldValue(file, "SyncRate") == "32000664");
  CHECK(fieldValue(file, "NumberOfRecords") == "335928");
  CHECK(fieldValue(file, "ImgHdrSize") == "0");
  // Its overflow records carry counts (SF compression, a third-party rewrite); the file is read
  // as its 1.0 header says, and the user is told.
  REQUIRE(file.warnings.size() == 1);
  CHECK_THAT(file.warnings[0], Contains("carry a count"));

  // The records decoded from the format description: bit 31 special, bits 25..30 channel,
  // 10..24 dtime, 0..9 nsync; a special record of channel 63 adds 1024 sync periods (format
  // 1.0: one wraparound per record), channels 1..15 are marker bits; a photon's time is
  // nsync * (1 / SyncRate) + dtime * Resolution, rounded to the picosecond (halves up), here
  // in whole numbers: (nsync * 10^12 + dtime * SyncRate) / SyncRate ps.
  const std::vector<std::uint8_t> bytes = readAll(path);
  REQUIRE(bytes.size() == 880 + 4 * std::size_t{335928});
  std::int32_t sync_rate;
  double resolution_ps;
  std::memcpy(&sync_rate, bytes.data() + 856, 4);
  std::memcpy(&resolution_ps, bytes.data() + 352, 8);
  REQUIRE(sync_rate == 32000664);
  REQUIRE(resolution_ps == 1.0);
  const long double period_ps = 1e12L / sync_rate;
  const auto exactly = [&](std::uint64_t nsync, std::uint64_t dtime) {
    __extension__ using Wide = unsigned __int128;
    const auto rate = static_cast<Wide>(sync_rate);
    const Wide ps_times_rate = static_cast<Wide>(nsync) * 1'000'000'000'000u + dtime * rate;
    return static_cast<timestamp_t>((2 * ps_times_rate + rate) / (2 * rate));
  };
  std::vector<Event> reference;
  std::map<channel_t, std::size_t> photons;
  std::set<std::uint64_t> sync_periods;
  std::uint64_t overflow = 0;
  for (std::size_t at = 880; at < bytes.size(); at += 4) {
    std::uint32_t word;
    std::memcpy(&word, bytes.data() + at, 4);
    const std::uint32_t channel = (word >> 25) & 0x3F;
    const std::uint64_t nsync = overflow + (word & 0x3FF);
    if ((word >> 31) != 0) {
      if (channel == 63) {
        overflow += 1024;
      } else if (channel >= 1 && channel <= 15) {
        const timestamp_t time = exactly(nsync, 0);
        for (int bit = 0; bit < 4; ++bit) {
          if ((channel >> bit & 1) != 0) reference.push_back({200 + bit, time});
        }
      }
      continue;
    }
    const std::uint32_t dtime = (word >> 10) & 0x7FFF;
    const channel_t input = 1 + static_cast<channel_t>(channel);
    ++photons[input];
    reference.push_back({input, exactly(nsync, dtime)});  // Resolution is 1 ps
    if (sync_periods.insert(nsync).second) reference.push_back({100, exactly(nsync, 0)});
  }
  REQUIRE(photons.size() == 8);
  reference = ordered(reference);

  const DrainedStream stream = drainFile(path, 16384);  // also checks time order and tiling
  const std::vector<Event> events = eventsOf(stream);
  std::map<channel_t, std::size_t> counted;
  std::vector<timestamp_t> syncs;
  for (const Event& event : events) {
    if (event.channel == 100) {
      syncs.push_back(event.time);
    } else {
      ++counted[event.channel];
    }
  }
  CHECK(counted == photons);
  CHECK(syncs.size() == sync_periods.size());
  REQUIRE_FALSE(events.empty());
  CHECK(events.front().time == reference.front().time);
  CHECK(events.back().time == reference.back().time);
  CHECK(ordered(events) == reference);
  CHECK(stream.end() == events.back().time + 1);
  // Every sync tag lies on a whole sync period, rounded to the picosecond.
  for (timestamp_t time : syncs) {
    const long double periods = std::round(time / period_ps);
    INFO("sync tag at " << time << " ps");
    REQUIRE(std::fabs(time - periods * period_ps) <= 0.5L);
  }
}

TEST_CASE("A legacy header cut short names the field and the byte offset", "[vendor][legacy]") {
  TempDir dir;
  const std::vector<std::uint8_t> real =
      readAll(TAGFLOW_VENDOR_DATA "/legacy/PQ_HT3_SF-compression.ht3");
  // 700 bytes end inside the first input's block (it begins at 696).
  const std::string cut = writeFile(dir, "cut.ht3", {real.begin(), real.begin() + 700});
  const std::string message = messageOf(cut);
  CHECK_THAT(message, Contains("InputCFDLevel(0)"));
  CHECK_THAT(message, Contains("byte offset 700"));
  CHECK_THAT(message, Contains("cut.ht3"));

  const std::string tiny = writeFile(dir, "tiny.pt3", {'P', 'i', 'c', 'o'});
  CHECK_THAT(messageOf(tiny), Contains("Ident") && Contains("byte offset 0"));

  // NumberOfBoards board headers of 156 bytes follow the binary header: a second one, which
  // this 728-byte file lacks, begins at 692 and runs out at its sixth field.
  std::vector<std::uint8_t> pt3 = picoHarpFile({"PicoHarp 300", "2.0", 3}, {});
  REQUIRE(pt3.size() == 728);
  std::int32_t two_boards = 2;
  std::memcpy(pt3.data() + 328 + 12, &two_boards, 4);
  const std::string boards = writeFile(dir, "boards.pt3", pt3);
  CHECK_THAT(messageOf(boards), Contains("Board(1).CFDLevel0") && Contains("byte offset 728"));
}

TEST_CASE("A file of another kind, version or mode is refused naming the value",
          "[vendor][legacy]") {
  TempDir dir;
  const std::string timeharp =
      writeFile(dir, "th.t3r", picoHarpFile({"TimeHarp 260", "2.0", 3}, {}));
  CHECK_THAT(messageOf(timeharp), Contains("Ident 'TimeHarp 260'") && Contains("'PicoHarp 300'") &&
                                      Contains("'HydraHarp'"));

  const std::vector<std::uint8_t> ptu{'P', 'Q', 'T', 'T', 'T', 'R', 0, 0, '1', '.', '0',
                                      '.', '0', '0', 0,   0,   0,   0, 0, 0,   0,   0};
  CHECK_THAT(messageOf(writeFile(dir, "file.ptu", ptu)), Contains("openPtuFile"));

  const std::string old_pt3 =
      writeFile(dir, "old.pt3", picoHarpFile({"PicoHarp 300", "1.0", 3}, {}));
  CHECK_THAT(messageOf(old_pt3), Contains("FormatVersion '1.0'") && Contains("byte offset 16") &&
                                     Contains("valid: '2.0'"));

  const std::string new_ht3 = writeFile(dir, "new.ht3", hydraHarpFile({"HydraHarp", "3.0", 3}, {}));
  CHECK_THAT(messageOf(new_ht3), Contains("FormatVersion '3.0'") && Contains("'1.0', '2.0'"));

  const std::string histogram =
      writeFile(dir, "histogram.ht3", hydraHarpFile({"HydraHarp", "2.0", 0}, {}));
  CHECK_THAT(messageOf(histogram), Contains("MeasurementMode 0") && Contains("byte offset 340") &&
                                       Contains("2 = T2, 3 = T3"));

  const std::string t1 = writeFile(dir, "t1.pt3", picoHarpFile({"PicoHarp 300", "2.0", 1}, {}));
  CHECK_THAT(messageOf(t1), Contains("MeasurementMode 1") && Contains("byte offset 348"));
}

TEST_CASE("A T3 file without a sync rate or resolution is refused", "[vendor][legacy]") {
  TempDir dir;
  Legacy ht3{"HydraHarp", "2.0", 3};
  ht3.sync_rate = 0;
  // SyncRate follows the two inputs' blocks and rates: 720 + 20 * 2 - 24.
  CHECK_THAT(messageOf(writeFile(dir, "nosync.ht3", hydraHarpFile(ht3, {}))),
             Contains("SyncRate 0") && Contains("byte offset 736") && Contains("valid: > 0"));

  Legacy pt3{"PicoHarp 300", "2.0", 3};
  pt3.sync_rate = -5;
  CHECK_THAT(messageOf(writeFile(dir, "nosync.pt3", picoHarpFile(pt3, {}))),
             Contains("CntRate0") && Contains("-5") && Contains("byte offset 704"));

  Legacy flat{"HydraHarp", "1.0", 3};
  flat.resolution_ps = 0;
  CHECK_THAT(messageOf(writeFile(dir, "nores.ht3", hydraHarpFile(flat, {}))),
             Contains("Resolution 0 ps") && Contains("byte offset 352"));

  // T2 files need neither: their time unit is the instrument's.
  Legacy ht2{"HydraHarp", "2.0", 2};
  ht2.sync_rate = 0;
  CHECK_NOTHROW(openPicoQuantLegacyFile(writeFile(dir, "nosync.ht2", hydraHarpFile(ht2, {}))));
}

TEST_CASE("A truncated last legacy record: every complete record first, then the error",
          "[vendor][legacy]") {
  TempDir dir;
  Legacy legacy{"HydraHarp", "2.0", 3};
  legacy.sync_rate = 80'000'000;
  const std::vector<std::uint32_t> records{
      hydraHarpT3(false, 0, 100, 2),
      hydraHarpT3(false, 1, 200, 3),
  };
  std::vector<std::uint8_t> bytes = hydraHarpFile(legacy, records);
  const std::size_t complete_end = bytes.size();
  bytes.push_back(0x12);
  bytes.push_back(0x34);
  const std::string path = writeFile(dir, "tail.ht3", bytes);

  VendorFileSource source(openPicoQuantLegacyFile(path), 1);
  std::vector<Event> events;
  BlockBuffer buffer;
  std::string message;
  try {
    while (source.next(buffer)) {
      for (const Tag& tag : buffer.tags) events.push_back({tag.channel, tag.time});
    }
  } catch (const DataError& error) {
    message = error.what();
  }
  const std::vector<Event> expected{
      {100, 25000}, {1, 25000 + 800}, {100, 37500}, {2, 37500 + 1600}};
  CHECK(ordered(events) == ordered(expected));
  CHECK_THAT(message,
             Contains("truncated") && Contains("byte offset " + std::to_string(complete_end)));
}

TEST_CASE("A legacy file cut off between records: every record first, then the error",
          "[vendor][legacy]") {
  TempDir dir;
  const std::vector<std::uint32_t> records{
      hydraHarpT3(false, 0, 100, 2),
      hydraHarpT3(false, 1, 200, 3),
  };
  Legacy ht3{"HydraHarp", "2.0", 3};
  ht3.sync_rate = 80'000'000;
  ht3.header_records = 5;  // three records more than the file holds
  const std::vector<std::uint8_t> bytes = hydraHarpFile(ht3, records);
  const std::string path = writeFile(dir, "cut.ht3", bytes);
  VendorFile file = openPicoQuantLegacyFile(path);
  CHECK(file.warnings.empty());
  CHECK(file.missing_records == 3);

  VendorFileSource source(std::move(file), 1);
  std::vector<Event> events;
  BlockBuffer buffer;
  std::string message;
  try {
    while (source.next(buffer)) {
      for (const Tag& tag : buffer.tags) events.push_back({tag.channel, tag.time});
    }
  } catch (const TruncatedData& error) {
    message = error.what();
  }
  const std::vector<Event> expected{
      {100, 25000}, {1, 25000 + 800}, {100, 37500}, {2, 37500 + 1600}};
  CHECK(ordered(events) == ordered(expected));
  CHECK_THAT(message, Contains("truncated at byte offset " + std::to_string(bytes.size())) &&
                          Contains("holds 2 records, the header counts 5"));

  // The PicoHarp's count (an int32) the same way.
  Legacy pt3{"PicoHarp 300", "2.0", 3};
  pt3.sync_rate = 40'000'000;
  pt3.board_resolution_ns = 0.016f;
  pt3.header_records = 4;
  const std::string pt3_path =
      writeFile(dir, "cut.pt3", picoHarpFile(pt3, {picoHarpT3(1, 10, 3), picoHarpT3(2, 20, 3)}));
  VendorFileSource pt3_source(openPicoQuantLegacyFile(pt3_path), 1000);
  std::size_t tags = 0;
  CHECK_THROWS_AS(
      [&] {
        while (pt3_source.next(buffer)) tags += buffer.tags.size();
      }(),
      TruncatedData);
  CHECK(tags == 3);
}
