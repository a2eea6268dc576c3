// Becker & Hickl FIFO files: every record kind (photon, invalid photon, marker, macrotime
// overflow, overflow count, gap) of each of the three layouts on files written here with tags
// worked out by hand; where the macrotime clock comes from; the two real files of
// tests/data/vendor/bh against an independent decode of their records written out in this file
// (and test_noise.spc against a few values of B&H's own export of it); bad options, headers cut
// short, truncated last records, macrotime running backwards.
// quTAG binary files: inputs, both marker edges and the millisecond tick, stamps reordered
// within the window, disorder beyond it, bad signatures, headers cut short, truncated records.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include "support/drain.hpp"
#include "support/temp_dir.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/vendor/becker_hickl_spc.hpp"
#include "tagflow/io/vendor/qutag.hpp"
#include "tagflow/io/vendor/vendor_formats.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

// A tag as the tests compare it; T is a time tag, B and E the marks of an overflow interval.
struct Event {
  char kind;
  channel_t channel;
  timestamp_t time;
  bool operator==(const Event&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Event& event) {
  return out << "{" << event.kind << " " << event.channel << " @ " << event.time << "}";
}

Event T(channel_t channel, timestamp_t time) {
  return {'T', channel, time};
}
Event B(timestamp_t time) {
  return {'B', 0, time};
}
Event E(timestamp_t time) {
  return {'E', 0, time};
}

Event eventOf(const Tag& tag) {
  switch (tag.type) {
    case TagType::OverflowBegin:
      return B(tag.time);
    case TagType::OverflowEnd:
      return E(tag.time);
    default:
      return {tag.type == TagType::TimeTag ? 'T' : '?', tag.channel, tag.time};
  }
}

std::vector<Event> eventsOf(VendorFile file, std::size_t block_size = 1000) {
  VendorFileSource source(std::move(file), block_size);
  const DrainedStream stream = drain(source);
  requireWellFormed(stream);
  std::vector<Event> events;
  for (const Tag& tag : stream.tags) events.push_back(eventOf(tag));
  return events;
}

// The tags handed out before the source throws a DataError, and its message.
std::pair<std::vector<Event>, std::string> eventsUntilError(VendorFile file) {
  VendorFileSource source(std::move(file), 1000);
  BlockBuffer buffer;
  std::vector<Event> events;
  try {
    while (source.next(buffer)) {
      for (const Tag& tag : buffer.tags) events.push_back(eventOf(tag));
    }
  } catch (const DataError& error) {
    return {events, error.what()};
  }
  FAIL("the source ended without a DataError");
  return {};
}

std::string headerValue(const VendorFile& file, const std::string& name) {
  const HeaderField* field = file.header.find(name);
  REQUIRE(field != nullptr);
  return field->value;
}

// ---- Becker & Hickl ------------------------------------------------------------------------

constexpr std::uint32_t kInvalid = 1u << 31;
constexpr std::uint32_t kMtov = 1u << 30;
constexpr std::uint32_t kGap = 1u << 29;
constexpr std::uint32_t kMark = 1u << 28;

// SPC-130 layout: MT bits 0-11, ROUT 12-15, ADC 16-27, then MARK, GAP, MTOV, INVALID.
std::uint32_t photon130(std::uint32_t mt, std::uint32_t rout, std::uint32_t adc,
                        std::uint32_t flags = 0) {
  return flags | (adc << 16) | (rout << 12) | mt;
}
std::uint32_t marker130(std::uint32_t mt, std::uint32_t bits, std::uint32_t flags = 0) {
  return kInvalid | kMark | flags | (bits << 12) | mt;
}
std::uint32_t overflowCount(std::uint32_t count) {
  return kInvalid | kMtov | count;
}

void writeWords(const std::string& path, const std::vector<std::uint32_t>& words,
                std::size_t extra_bytes = 0) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(words.data()),
            static_cast<std::streamsize>(4 * words.size()));
  for (std::size_t i = 0; i < extra_bytes; ++i) out.put('\x7f');
}

// A .set file as SPCM writes it: the 42-byte bhfile_header (revision with the module type in
// bits 11-4, offsets, header_valid 0x5555), the identification, the setup parameters.
void writeSet(const std::string& path, std::uint32_t module_code,
              const std::vector<std::pair<std::string, std::string>>& params) {
  std::vector<std::uint8_t> header(42, 0);
  const std::uint32_t revision = (module_code << 4) | 13;
  header[0] = static_cast<std::uint8_t>(revision);
  header[1] = static_cast<std::uint8_t>(revision >> 8);
  header[2] = 42;
  header[32] = 0x55;
  header[33] = 0x55;
  std::string text =
      "*IDENTIFICATION\r\n  ID        : \x04SPC Setup Script File\x04\r\n  Title     : "
      "generated\r\n"
      "  Contents  : Setup file made by the tests\r\n with module X\r\n*END\r\n\r\n*SETUP\r\n"
      "  SYS_PARA_BEGIN:\r\n  #PR [PR_PDEV,I,2]\r\n";
  for (const auto& [key, value] : params) text += "  #SP [" + key + "," + value + "]\r\n";
  text +=
      "  SYS_PARA_END:\r\n  TRACE_PARA_BEGIN:\r\n  #TR #0 [1,255,1,1,4,1,1,1]1,1,1]\r\n*END\r\n";
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()), 42);
  out << text;
}

SpcOptions withLayout(std::string value) {
  SpcOptions options;
  options.layout = std::move(value);
  return options;
}
SpcOptions withClockNs(double ns) {
  SpcOptions options;
  options.macrotime_clock_ns = ns;
  return options;
}
SpcOptions withSetFile(std::string path) {
  SpcOptions options;
  options.set_file = std::move(path);
  return options;
}

constexpr std::uint32_t kSpc130 = 0x20;
constexpr std::uint32_t kSpc600 = 0x21;
constexpr std::uint32_t kSpc630 = 0x22;
constexpr std::uint32_t kSpc150 = 0x28;

}  // namespace

TEST_CASE("SPC-130 layout: photons, invalid photons, markers, overflows and gaps",
          "[vendor][spc]") {
  TempDir dir;
  const std::string path = dir.file("m.spc");
  // Internal 50 ns clock; TAC 40.96 ns at gain 1 over 4096 codes: 10 ps per code.
  writeSet(dir.file("m.set"), kSpc130,
           {{"SP_TAC_R", "F,4.096e-08"},
            {"SP_TAC_G", "I,1"},
            {"SP_ADC_RE", "I,4096"},
            {"SP_MTCLK", "I,0"}});
  writeWords(path, {
                       kInvalid | 500,                     // first record: 50 ns
                       photon130(10, 2, 4095 - 7),         // 10 periods, microtime 7
                       kInvalid | (0xABCu << 16) | 0x555,  // an invalid photon
                       marker130(20, 0b0101),              // markers 0 and 2
                       photon130(5, 0, 4095, kMtov),       // one overflow, then 5
                       overflowCount(3),                   // three more overflows
                       photon130(1, 15, 0),                // routing 15, largest microtime
                       marker130(2, 0b1000, kMtov),        // overflow 5, marker 3
                       photon130(100, 1, 4094, kGap),      // data lost before this one
                       photon130(50, 0, 4095, kGap),       // ... and overflows with them
                       kInvalid | kGap,                    // a gap on an invalid photon
                       photon130(60, 0, 4095),             // is marked at the next time
                   });
  const VendorFile file = openSpcFile(path);
  CHECK(headerValue(file, "macrotime clock") == "50000");
  CHECK(std::stod(headerValue(file, "microtime unit")) == Approx(10));
  CHECK(headerValue(file, "sync tags") == "false");
  CHECK(headerValue(file, "SP_TAC_R") == "4.096e-08");
  CHECK(headerValue(file, "Contents") == "Setup file made by the tests with module X");
  CHECK(file.warnings.empty());
  constexpr timestamp_t p = 50'000;
  const std::vector<Event> expected{
      T(3, 10 * p + 70),
      T(200, 20 * p),
      T(202, 20 * p),
      T(1, (4096 + 5) * p),
      T(16, (4 * 4096 + 1) * p + 4095 * 10),
      T(203, (5 * 4096 + 2) * p),
      B((5 * 4096 + 2) * p + 1),
      E((5 * 4096 + 100) * p),
      T(2, (5 * 4096 + 100) * p + 10),
      // 50 < 100: an overflow was lost in the gap
      B((5 * 4096 + 100) * p + 11),
      E((6 * 4096 + 50) * p),
      T(1, (6 * 4096 + 50) * p),
      B((6 * 4096 + 50) * p + 1),
      E((6 * 4096 + 60) * p),
      T(1, (6 * 4096 + 60) * p),
  };
  CHECK(eventsOf(openSpcFile(path), 2) == expected);
}

TEST_CASE("SPC-130 layout with the sync as macrotime clock: a sync tag per period with photons",
          "[vendor][spc]") {
  TempDir dir;
  const std::string path = dir.file("sync.spc");
  // 12.5 ns sync; TAC 12.8 ns over 4096 codes: 3.125 ps per code, rounded to the nearest ps.
  writeSet(dir.file("sync.set"), kSpc150,
           {{"SP_TAC_R", "F,1.28e-08"}, {"SP_TAC_G", "I,1"}, {"SP_MTCLK", "I,1"}});
  writeWords(path, {kInvalid | (2u << 27) | 125, photon130(3, 0, 4094), photon130(3, 1, 4093),
                    photon130(4, 0, 0), photon130(5, 1, 4095), marker130(6, 1)});
  const VendorFile file = openSpcFile(path);
  CHECK(headerValue(file, "sync tags") == "true");
  CHECK(headerValue(file, "routing bits") == "2");
  CHECK(headerValue(file, "module") == "SPC-150 (code 0x28)");
  // The photons at 37503.125, 37506.25 and 62796.875 ps, rounded; the photon of period 4 comes
  // after period 5's sync.
  const std::vector<Event> expected{T(100, 37'500), T(1, 37'503), T(2, 37'506), T(100, 50'000),
                                    T(100, 62'500), T(2, 62'500), T(1, 62'797), T(200, 75'000)};
  CHECK(eventsOf(openSpcFile(path)) == expected);
}

TEST_CASE("SPC-600/630 4096-channel layout: 6-byte records", "[vendor][spc]") {
  TempDir dir;
  const std::string path = dir.file("wide.spc");
  writeSet(dir.file("wide.set"), kSpc630,
           {{"SP_TAC_R", "F,4.096e-08"}, {"SP_TAC_G", "I,1"}, {"SP_ADC_RE", "I,4096"}});
  // Three 16-bit words: ADC | INVALID 0x1000 | MTOV 0x2000 | GAP 0x4000; MT[23:16] | routing
  // << 8; MT[15:0].
  const std::vector<std::array<std::uint16_t, 3>> records{
      {0x1000 | (3 << 8), 500, 0},          // first record: 50 ns, 3 routing bits
      {4095 - 3, (5 << 8) | 0x01, 0x2345},  // routing 5, MT 0x12345, microtime 3
      {0x1000 | 0x2000 | 123, 0, 0},        // invalid, but its overflow counts
      {0x2000 | 4095, 0, 7},                // second overflow, MT 7
      {0x4000 | 4094, 1 << 8, 10},          // a gap before it
  };
  {
    std::ofstream out(path, std::ios::binary);
    for (const auto& record : records) out.write(reinterpret_cast<const char*>(record.data()), 6);
  }
  const VendorFile file = openSpcFile(path);
  CHECK_THAT(headerValue(file, "layout"), Contains("4096-channel"));
  CHECK(headerValue(file, "routing bits") == "3");
  CHECK(headerValue(file, "sync tags") == "false");
  CHECK(file.records == 4);
  constexpr timestamp_t p = 50'000;
  constexpr timestamp_t wrap = 1 << 24;
  CHECK(eventsOf(openSpcFile(path)) ==
        std::vector<Event>{T(6, 0x12345 * p + 30), T(1, (2 * wrap + 7) * p),
                           B((2 * wrap + 7) * p + 1), E((2 * wrap + 10) * p),
                           T(2, (2 * wrap + 10) * p + 10)});
}

TEST_CASE("SPC-600/630 4096-channel layout: a routing value above 15 is refused", "[vendor][spc]") {
  TempDir dir;
  const std::string path = dir.file("route.spc");
  writeSet(dir.file("route.set"), kSpc630,
           {{"SP_TAC_R", "F,4.096e-08"}, {"SP_TAC_G", "I,1"}, {"SP_ADC_RE", "I,4096"}});
  // The 8-bit routing field: 99 would be channel 100, the sync; 199 and 255 the markers'.
  for (std::uint16_t routing : {16, 99, 199, 255}) {
    for (std::uint16_t flags : {0, 0x4000}) {  // a plain photon, and one after a gap
      INFO("routing " << routing << " flags " << flags);
      const std::vector<std::array<std::uint16_t, 3>> records{
          {0x1000, 500, 0},
          {4095, 15 << 8, 10},  // routing 15: the last input
          {static_cast<std::uint16_t>(flags | 4095), static_cast<std::uint16_t>(routing << 8), 20},
      };
      {
        std::ofstream out(path, std::ios::binary);
        for (const auto& record : records) {
          out.write(reinterpret_cast<const char*>(record.data()), 6);
        }
      }
      const auto [events, message] = eventsUntilError(openSpcFile(path));
      CHECK(events.empty());
      CHECK_THAT(message, Contains("record 1: a photon on routing channel " +
                                   std::to_string(routing) + " (valid: 0..15"));
    }
  }
}

TEST_CASE("SPC gaps on records without a time: an overflow count, the last records",
          "[vendor][spc]") {
  TempDir dir;
  const std::string path = dir.file("gap.spc");
  writeSet(dir.file("gap.set"), kSpc130,
           {{"SP_TAC_R", "F,4.096e-08"},
            {"SP_TAC_G", "I,1"},
            {"SP_ADC_RE", "I,4096"},
            {"SP_MTCLK", "I,0"}});
  constexpr timestamp_t p = 50'000;
  // A GAP on an overflow-count record: marked at the next record with a time.
  writeWords(path, {kInvalid | 500, photon130(10, 0, 4095), photon130(20, 1, 4095),
                    overflowCount(3) | kGap, photon130(5, 0, 4095), photon130(7, 0, 4095)});
  CHECK(eventsOf(openSpcFile(path)) ==
        std::vector<Event>{T(1, 10 * p), T(2, 20 * p), B(20 * p + 1), E((3 * 4096 + 5) * p),
                           T(1, (3 * 4096 + 5) * p), T(1, (3 * 4096 + 7) * p)});
  // A GAP on the last record, which has no time: the interval after the last tag, at the
  // stream's end; for every block size.
  writeWords(path,
             {kInvalid | 500, photon130(10, 0, 4095), photon130(20, 1, 4095), kInvalid | kGap});
  for (std::size_t block : {std::size_t{1}, std::size_t{2}, std::size_t{1000}}) {
    INFO("block size " << block);
    VendorFileSource source(openSpcFile(path), block);
    const DrainedStream stream = drain(source);
    requireWellFormed(stream);
    std::vector<Event> events;
    for (const Tag& tag : stream.tags) events.push_back(eventOf(tag));
    CHECK(events == std::vector<Event>{T(1, 10 * p), T(2, 20 * p), B(20 * p + 1), E(20 * p + 1)});
    CHECK(stream.end() == 20 * p + 2);
  }
  // On an overflow count that ends the file: up to the end of the overflows it counts.
  writeWords(path, {kInvalid | 500, photon130(10, 0, 4095), overflowCount(2) | kGap});
  CHECK(eventsOf(openSpcFile(path)) ==
        std::vector<Event>{T(1, 10 * p), B(10 * p + 1), E(2 * 4096 * p)});
  // Nothing but a gap.
  writeWords(path, {kInvalid | 500, kInvalid | kGap, kInvalid});
  CHECK(eventsOf(openSpcFile(path)) == std::vector<Event>{B(0), E(0)});
}

TEST_CASE("SPC-600/630 256-channel layout: 4-byte records, 8-bit ADC", "[vendor][spc]") {
  TempDir dir;
  const std::string path = dir.file("narrow.spc");
  // TAC 2.56 ns over 256 codes: 10 ps per code.
  writeSet(dir.file("narrow.set"), kSpc600,
           {{"SP_TAC_R", "F,2.56e-09"}, {"SP_TAC_G", "I,1"}, {"SP_ADC_RE", "I,256"}});
  // ADC bits 0-7, MT 8-24, routing 25-27, GAP 29, MTOV 30, INVALID 31.
  const auto photon = [](std::uint32_t mt, std::uint32_t rout, std::uint32_t adc,
                         std::uint32_t flags = 0) {
    return flags | (rout << 25) | (mt << 8) | adc;
  };
  writeWords(path, {kInvalid | (2u << 27) | 500, photon(1000, 3, 255 - 4), kInvalid | 0x12,
                    overflowCount(2), photon(1, 0, 255, kMtov), photon(2, 7, 254, kGap)});
  const VendorFile file = openSpcFile(path);
  CHECK_THAT(headerValue(file, "layout"), Contains("256-channel"));
  CHECK(std::stod(headerValue(file, "microtime unit")) == Approx(10));
  constexpr timestamp_t p = 50'000;
  constexpr timestamp_t wrap = 1 << 17;
  CHECK(file.warnings.empty());
  CHECK(eventsOf(openSpcFile(path)) ==
        std::vector<Event>{T(4, 1000 * p + 40), T(1, (3 * wrap + 1) * p), B((3 * wrap + 1) * p + 1),
                           E((3 * wrap + 2) * p), T(8, (3 * wrap + 2) * p + 10)});
  // The unit assumes full-scale codes; a .set naming another ADC resolution gets a warning.
  writeSet(dir.file("narrow.set"), kSpc600,
           {{"SP_TAC_R", "F,2.56e-09"}, {"SP_TAC_G", "I,1"}, {"SP_ADC_RE", "I,64"}});
  const VendorFile coarse = openSpcFile(path);
  REQUIRE(coarse.warnings.size() == 1);
  CHECK_THAT(coarse.warnings[0], Contains("SP_ADC_RE is 64 but the records hold 256 ADC codes"));
}

TEST_CASE("SPC layouts chosen by option when the file cannot tell", "[vendor][spc]") {
  TempDir dir;
  const std::string path = dir.file("plain.spc");
  // An SPC-600/630 256-channel file without a .set: its first record looks like SPC-130's.
  writeWords(path, {kInvalid | 500, (7u << 8) | 255});
  CHECK_THAT(headerValue(openSpcFile(path), "layout"), Contains("SPC-130 layout"));
  const VendorFile file = openSpcFile(path, withLayout("600-256"));
  CHECK_THAT(headerValue(file, "layout"), Contains("SpcOptions::layout"));
  CHECK(eventsOf(openSpcFile(path, withLayout("600-256"))) == std::vector<Event>{T(1, 7 * 50'000)});
  // Without a .set the microtime unit is unknown: a warning, photons at their macrotime.
  REQUIRE(file.warnings.size() == 1);
  CHECK_THAT(file.warnings[0], Contains("microtime unit is unknown"));
}

TEST_CASE("SPC macrotime clock: first record, .set file or option", "[vendor][spc]") {
  TempDir dir;
  const std::string path = dir.file("clock.spc");
  writeWords(path, {kInvalid, photon130(2, 0, 4095)});  // the clock field is 0

  SECTION("no .set, no option: an error naming the option") {
    CHECK_THROWS_WITH(openSpcFile(path), Contains("macrotime clock is missing") &&
                                             Contains("there is no .set file") &&
                                             Contains("macrotime_clock_ns"));
  }
  SECTION("the internal clock of an SPC-130 (.set SP_MTCLK = 0): 50 ns") {
    writeSet(dir.file("clock.set"), kSpc130, {{"SP_MTCLK", "I,0"}});
    const VendorFile file = openSpcFile(path);
    CHECK(headerValue(file, "macrotime clock") == "50000");
    CHECK_THAT(headerValue(file, "macrotime clock source"),
               Contains("internal clock of the SPC-130"));
    CHECK(eventsOf(openSpcFile(path)) == std::vector<Event>{T(1, 100'000)});
  }
  SECTION("the internal clock of an SPC-150: 25 ns") {
    writeSet(dir.file("clock.set"), kSpc150, {{"SP_MTCLK", "I,0"}});
    CHECK(headerValue(openSpcFile(path), "macrotime clock") == "25000");
  }
  SECTION("a sync clock the .set cannot give") {
    writeSet(dir.file("clock.set"), kSpc130, {{"SP_MTCLK", "I,1"}});
    CHECK_THROWS_WITH(openSpcFile(path),
                      Contains("SP_MTCLK says the sync") && Contains("macrotime_clock_ns"));
  }
  SECTION("the option, not an internal clock: the sync, with sync tags") {
    const VendorFile file = openSpcFile(path, withClockNs(12.5));
    CHECK(headerValue(file, "macrotime clock source") == "SpcOptions::macrotime_clock_ns");
    CHECK(eventsOf(openSpcFile(path, withClockNs(12.5))) ==
          std::vector<Event>{T(100, 25'000), T(1, 25'000)});
  }
  SECTION("the option overrides the first record; a clock not a whole number of ps") {
    writeWords(path, {kInvalid | 500, photon130(3, 0, 4095)});
    CHECK(eventsOf(openSpcFile(path, withClockNs(0.0123456))) ==
          std::vector<Event>{T(100, 37), T(1, 37)});  // 3 * 12.3456 ps
  }
}

TEST_CASE("SPC bad options and files", "[vendor][spc]") {
  TempDir dir;
  const std::string path = dir.file("bad.spc");
  writeWords(path, {kInvalid | 500, photon130(1, 0, 4095)});
  CHECK_THROWS_AS(openSpcFile(path, withLayout("140")), InvalidArgument);
  CHECK_THROWS_WITH(openSpcFile(path, withLayout("140")),
                    Contains("'140'") && Contains("valid: auto, 130, 600-4096, 600-256"));
  CHECK_THROWS_WITH(openSpcFile(path, withClockNs(-1)),
                    Contains("macrotime_clock_ns -1 is invalid"));
  CHECK_THROWS_AS(openSpcFile(dir.file("missing.spc")), IoError);
  CHECK_THROWS_AS(openSpcFile(path, withSetFile(dir.file("missing.set"))), IoError);

  SECTION("a first record cut short") {
    writeWords(path, {}, 2);
    CHECK_THROWS_WITH(openSpcFile(path),
                      Contains("ends at byte 2 inside the header") && Contains("byte offset 0"));
    writeWords(path, {0x01F41000});  // the first 4 of a 6-byte first record
    CHECK_THROWS_WITH(openSpcFile(path, withLayout("600-4096")),
                      Contains("ends at byte 4") && Contains("byte offset 4"));
  }
  SECTION("a first record without B&H's flags") {
    writeWords(path, {500, photon130(1, 0, 4095)});
    CHECK_THROWS_WITH(openSpcFile(path), Contains("0x000001F4") && Contains("SpcOptions::layout"));
  }
  SECTION("a raw diagnostic-mode file") {
    writeWords(path, {kInvalid | (1u << 26) | 500});
    CHECK_THROWS_WITH(openSpcFile(path), Contains("raw diagnostic-mode"));
  }
  SECTION("a module with another record format") {
    writeSet(dir.file("bad.set"), 0x29, {});
    CHECK_THROWS_WITH(openSpcFile(path), Contains("DPC-230") && Contains("code 0x29"));
  }
  SECTION("a .set without settings") {
    std::ofstream(dir.file("bad.set"), std::ios::binary) << std::string(42, '\0') << "*END\r\n";
    CHECK_THROWS_WITH(openSpcFile(path), Contains("no SYS_PARA_BEGIN:"));
  }
  SECTION("a truncated last record: every complete record first") {
    writeWords(path, {kInvalid | 500, photon130(1, 0, 4095), photon130(2, 1, 4095)}, 2);
    const auto [events, message] = eventsUntilError(openSpcFile(path));
    CHECK(events == std::vector<Event>{T(1, 50'000), T(2, 100'000)});
    CHECK_THAT(message, Contains("truncated") && Contains("byte offset 12"));
  }
  SECTION("overflows beyond the times tagflow holds") {
    // 50 ns periods: 4.6e18 ps is 9.2e13 periods, 83.7 full overflow counts.
    std::vector<std::uint32_t> words{kInvalid | 500};
    words.insert(words.end(), 100, overflowCount(0x0FFFFFFF));
    writeWords(path, words);
    const auto [events, message] = eventsUntilError(openSpcFile(path));
    CHECK_THAT(message, Contains("record 83: its overflows") && Contains("below 4.6e+18 ps"));
  }
  SECTION("a macrotime running backwards without a gap") {
    writeWords(path, {kInvalid | 500, photon130(100, 0, 4095), photon130(50, 0, 4095)});
    const auto [events, message] = eventsUntilError(openSpcFile(path));
    CHECK_THAT(message, Contains("record 1 ") && Contains("2500000 ps"));
  }
}

namespace {

// The independent decode of an SPC-130-layout file, written from B&H's description of the
// records: MT bits 0-11, ROUT 12-15, ADC 16-27; INVALID+MTOV counts overflows in bits 0-27;
// MTOV on a photon is one overflow; real microtime = 4095 - ADC.
struct Decoded {
  std::vector<Event> events;  // photons and sync tags, sorted by time, then channel
  std::map<channel_t, std::size_t> counts;
  std::map<channel_t, std::pair<timestamp_t, timestamp_t>> first_last;
};

Decoded decodeByHand(const std::string& path, std::int64_t clock_ps, long double micro_ps) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Decoded decoded;
  std::int64_t overflows = 0;
  std::int64_t last_sync = -1;
  for (std::size_t at = 4; at + 4 <= bytes.size(); at += 4) {
    std::uint32_t word;
    std::memcpy(&word, bytes.data() + at, 4);
    const bool invalid = (word >> 31) != 0;
    const bool mtov = ((word >> 30) & 1) != 0;
    const bool mark = ((word >> 28) & 1) != 0;
    if (invalid && mtov && !mark) {
      overflows += word & 0x0FFFFFFF;
      continue;
    }
    if (mtov) overflows += 1;
    if (invalid || mark) continue;  // neither file holds markers
    const std::int64_t macro = overflows * 4096 + (word & 0xFFF);
    const auto channel = static_cast<channel_t>(1 + ((word >> 12) & 0xF));
    const std::int64_t micro = 4095 - ((word >> 16) & 0xFFF);
    const auto time = static_cast<timestamp_t>(
        std::llround(static_cast<long double>(macro) * clock_ps + micro * micro_ps));
    if (macro != last_sync) decoded.events.push_back(T(100, macro * clock_ps));
    last_sync = macro;
    decoded.events.push_back(T(channel, time));
  }
  std::sort(decoded.events.begin(), decoded.events.end(), [](const Event& a, const Event& b) {
    return a.time != b.time ? a.time < b.time : a.channel < b.channel;
  });
  for (const Event& event : decoded.events) {
    ++decoded.counts[event.channel];
    auto [it, fresh] = decoded.first_last.try_emplace(event.channel, event.time, event.time);
    if (!fresh) it->second.second = event.time;
  }
  return decoded;
}

void requireSameAsDecoded(const std::vector<Event>& read, const Decoded& decoded) {
  std::vector<Event> sorted = read;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Event& a, const Event& b) {
    return a.time != b.time ? a.time < b.time : a.channel < b.channel;
  });
  std::map<channel_t, std::size_t> counts;
  std::map<channel_t, std::pair<timestamp_t, timestamp_t>> first_last;
  for (const Event& event : sorted) {
    ++counts[event.channel];
    auto [it, fresh] = first_last.try_emplace(event.channel, event.time, event.time);
    if (!fresh) it->second.second = event.time;
  }
  CHECK(counts == decoded.counts);
  CHECK(first_last == decoded.first_last);
  REQUIRE(sorted.size() == decoded.events.size());
  CHECK(sorted == decoded.events);
}

}  // namespace

TEST_CASE("Real SPC-150 file with its .set (phconvert's test_noise)", "[vendor][spc][real]") {
  const std::string path = std::string(TAGFLOW_VENDOR_DATA) + "/bh/test_noise.spc";
  const VendorFile file = openSpcFile(path);
  // The clock is in the first record (0x8000005F: 9.5 ns), the TAC in the .set file.
  CHECK(headerValue(file, "first record") == "0x8000005F");
  CHECK(headerValue(file, "macrotime clock") == "9500");
  CHECK(headerValue(file, "macrotime clock source") == "first record");
  CHECK(headerValue(file, "module") == "SPC-150 (code 0x28)");
  CHECK(headerValue(file, "sync tags") == "true");  // SP_MTCLK = 1
  CHECK(headerValue(file, "SP_TAC_R") == "5.0033574e-08");
  CHECK(file.warnings.empty());
  const long double micro_ps = 5.0033574e-08L * 1e12L / 5 / 4096;
  const Decoded decoded = decodeByHand(path, 9500, micro_ps);
  // B&H's own export of this file (test_noise.asc beside it in phconvert): 6114 photons, the
  // first at macrotime 44054 with microtime 2856, the last at 1700018969 with 3475.
  CHECK(decoded.counts.at(1) == 6114);
  CHECK(decoded.first_last.at(1).first == std::llround(44054 * 9500.0L + 2856 * micro_ps));
  CHECK(decoded.first_last.at(1).second == std::llround(1700018969 * 9500.0L + 3475 * micro_ps));
  requireSameAsDecoded(eventsOf(openSpcFile(path), 512), decoded);
}

TEST_CASE("Real SPC-132 file without a .set (tttrlib's bh_spc132_sm_dna)", "[vendor][spc][real]") {
  const std::string path = std::string(TAGFLOW_VENDOR_DATA) + "/bh/bh_spc132_m000.spc";
  const VendorFile file = openSpcFile(path);
  // 0x98000087: 13.5 ns, 3 routing bits; not an internal clock, so the sync.
  CHECK(headerValue(file, "first record") == "0x98000087");
  CHECK(headerValue(file, "macrotime clock") == "13500");
  CHECK(headerValue(file, "routing bits") == "3");
  CHECK(headerValue(file, "sync tags") == "true");
  CHECK(headerValue(file, "microtime unit") == "unknown");
  CHECK(file.records == 299'999);
  const Decoded decoded = decodeByHand(path, 13500, 0);
  // Routing channels 0, 1, 8 and 9 (the donor and acceptor detectors of tttrlib's examples).
  CHECK(decoded.counts.at(1) == 48931);
  CHECK(decoded.counts.at(2) == 25863);
  CHECK(decoded.counts.at(9) == 71009);
  CHECK(decoded.counts.at(10) == 28635);
  requireSameAsDecoded(eventsOf(openSpcFile(path), 4096), decoded);
}

// ---- quTAG -----------------------------------------------------------------------------------

namespace {

struct Stamp {
  std::uint64_t time;
  std::uint16_t channel;
};

void writeQutag(const std::string& path, const std::vector<Stamp>& stamps,
                std::size_t extra_bytes = 0, std::uint8_t first_byte = 0x87) {
  std::vector<std::uint8_t> bytes{first_byte, 0xB3, 0x91, 0xFA};
  for (std::uint8_t i = 4; i < 40; ++i) bytes.push_back(i);
  for (const Stamp& stamp : stamps) {
    for (int b = 0; b < 8; ++b) bytes.push_back(static_cast<std::uint8_t>(stamp.time >> (8 * b)));
    bytes.push_back(static_cast<std::uint8_t>(stamp.channel));
    bytes.push_back(static_cast<std::uint8_t>(stamp.channel >> 8));
  }
  bytes.insert(bytes.end(), extra_bytes, 0x11);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("quTAG records: inputs, both marker edges and the millisecond tick", "[vendor][qutag]") {
  TempDir dir;
  const std::string path = dir.file("tags.bin");
  writeQutag(path, {{1000, 0},
                    {2000, 5},
                    {2500, 100},
                    {3000, 103},
                    {3500, 104},
                    {4000, 105},
                    {4500, 108},
                    {5000, 31}});
  const VendorFile file = openQutagFile(path);
  CHECK(file.records == 8);
  CHECK(headerValue(file, "header bytes 4-39").substr(0, 8) == "04050607");
  CHECK(eventsOf(openQutagFile(path)) ==
        std::vector<Event>{T(1, 1000), T(6, 2000), T(200, 2500), T(203, 3000), T(204, 3500),
                           T(-200, 4000), T(-203, 4500), T(32, 5000)});
  const VendorChannelMap map{.first_input = 11, .sync = 0, .first_marker = 300};
  CHECK(eventsOf(openQutagFile(path, map)).front() == T(11, 1000));
}

TEST_CASE("quTAG stamps out of order within the window are put in order", "[vendor][qutag]") {
  TempDir dir;
  const std::string path = dir.file("jitter.bin");
  // 20000 stamps 1 ns apart, each written up to 40 ns early or late.
  std::vector<Stamp> stamps;
  std::uint64_t state = 12345;
  for (std::uint64_t i = 0; i < 20000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const auto jitter = static_cast<std::int64_t>((state >> 33) % 80'001) - 40'000;
    stamps.push_back(
        {static_cast<std::uint64_t>(1'000'000 + 1000 * static_cast<std::int64_t>(i) + jitter),
         static_cast<std::uint16_t>(i % 3)});
  }
  writeQutag(path, stamps);
  std::vector<Event> expected;
  for (const Stamp& stamp : stamps) expected.push_back(T(1 + stamp.channel, stamp.time));
  std::stable_sort(expected.begin(), expected.end(),
                   [](const Event& a, const Event& b) { return a.time < b.time; });
  for (const std::size_t block_size : {1, 100, 100000}) {
    INFO("block size " << block_size);
    CHECK(eventsOf(openQutagFile(path), block_size) == expected);
  }
  // The same stamps with a window too small for them.
  const auto [events, message] = eventsUntilError(openQutagFile(path, {}, 10'000));
  CHECK_THAT(message, Contains("'" + path + "': record ") && Contains("out of time order"));
}

TEST_CASE("quTAG disorder beyond the window names the record", "[vendor][qutag]") {
  TempDir dir;
  const std::string path = dir.file("disorder.bin");
  writeQutag(path, {{1000, 0}, {500'000, 1}, {450'000, 2}, {300'000, 0}});
  // 450000 is within 100 ns of 500000, 300000 is not.
  const auto [events, message] = eventsUntilError(openQutagFile(path));
  CHECK_THAT(message, Contains("record 3 ") && Contains("300000 ps") && Contains("400000 ps"));
  // Equal stamps are in order even without a window; an earlier one is not.
  writeQutag(path, {{1000, 0}, {1000, 1}, {999, 0}});
  const auto [kept, strict] = eventsUntilError(openQutagFile(path, {}, 0));
  CHECK_THAT(strict, Contains("record 2 "));
}

TEST_CASE("quTAG bad files", "[vendor][qutag]") {
  TempDir dir;
  const std::string path = dir.file("bad.bin");
  CHECK_THROWS_AS(openQutagFile(dir.file("missing.bin")), IoError);
  SECTION("a negative window") {
    writeQutag(path, {});
    CHECK_THROWS_WITH(openQutagFile(path, {}, -1),
                      Contains("reorder_window_ps -1 is invalid (valid: >= 0)"));
  }
  SECTION("a header cut short") {
    std::ofstream(path, std::ios::binary) << std::string(20, '\x87');
    CHECK_THROWS_WITH(openQutagFile(path), Contains("ends at byte 20 inside the header") &&
                                               Contains("40 bytes from byte offset 0"));
  }
  SECTION("a wrong signature") {
    writeQutag(path, {{1, 0}}, 0, 0x86);
    CHECK_THROWS_WITH(openQutagFile(path), Contains("not a quTAG binary file") &&
                                               Contains("86 B3 91 FA") && Contains("87 B3 91 FA"));
  }
  SECTION("a truncated last record: every complete record first") {
    writeQutag(path, {{10, 0}, {20, 1}}, 4);
    const auto [events, message] = eventsUntilError(openQutagFile(path));
    CHECK(events == std::vector<Event>{T(1, 10), T(2, 20)});
    CHECK_THAT(message, Contains("4 byte(s) at byte offset 60"));
  }
  SECTION("a channel no quTAG writes") {
    writeQutag(path, {{10, 0}, {20, 50}});
    const auto [events, message] = eventsUntilError(openQutagFile(path));
    CHECK_THAT(message, Contains("record 1: channel 50") && Contains("valid: 0..31"));
  }
  SECTION("a stamp beyond 2^63 ps") {
    writeQutag(path, {{~std::uint64_t{0}, 0}});
    const auto [events, message] = eventsUntilError(openQutagFile(path));
    CHECK_THAT(message, Contains("record 0: timestamp 18446744073709551615"));
  }
}

// ---- the source kinds' own keys ----------------------------------------------------------------

namespace {

std::vector<Event> eventsOfKind(const std::string& kind, Parameters parameters) {
  const std::unique_ptr<Source> source = makeSource({kind, std::move(parameters), {}});
  const DrainedStream stream = drain(*source);
  requireWellFormed(stream);
  std::vector<Event> events;
  for (const Tag& tag : stream.tags) events.push_back(eventOf(tag));
  return events;
}

}  // namespace

TEST_CASE("Vendor source keys: the .spc's set_file and macrotime clock, quTAG's window",
          "[vendor][spc][qutag]") {
  TempDir dir;
  const std::string spc = dir.file("clock.spc");
  writeWords(spc, {kInvalid, photon130(2, 0, 4095)});  // the clock field is 0
  // Not beside the .spc under its name: found only through set_file.
  writeSet(dir.file("settings.set"), kSpc130, {{"SP_MTCLK", "I,0"}});
  const Parameters spc_path{{"path", spc}};

  CHECK_THROWS_WITH(makeSource({"spc", spc_path, {}}), Contains("macrotime_clock_ns"));
  for (const std::string kind : {"spc", "file"}) {
    INFO(kind);
    Parameters with_set = spc_path;
    with_set.set("set_file", dir.file("settings.set"));
    CHECK(eventsOfKind(kind, with_set) == std::vector<Event>{T(1, 100'000)});  // 50 ns clock
    Parameters with_clock = spc_path;
    with_clock.set("macrotime_clock_ns", 12.5);
    CHECK(eventsOfKind(kind, with_clock) == std::vector<Event>{T(100, 25'000), T(1, 25'000)});
  }
  Parameters bad_clock = spc_path;
  bad_clock.set("macrotime_clock_ns", -1.0);
  CHECK_THROWS_WITH(makeSource({"spc", bad_clock, {}}),
                    Contains("macrotime_clock_ns -1 ns is invalid (valid: 0..1000000000)"));

  const std::string qutag = dir.file("jitter.bin");
  writeQutag(qutag, {{1000, 0}, {50'000, 1}, {30'000, 2}});  // 20 ns out of order
  const Parameters qutag_path{{"path", qutag}};
  CHECK(eventsOfKind("qutag", qutag_path) ==
        std::vector<Event>{T(1, 1000), T(3, 30'000), T(2, 50'000)});
  for (const std::string kind : {"qutag", "file"}) {
    INFO(kind);
    Parameters narrow = qutag_path;
    narrow.set("reorder_window_ps", std::int64_t{10'000});
    CHECK_THROWS_WITH(eventsOfKind(kind, narrow), Contains("out of time order"));
  }

  // Each key belongs to its format: refused by name for the other one.
  Parameters foreign = qutag_path;
  foreign.set("set_file", dir.file("settings.set"));
  CHECK_THROWS_WITH(makeSource({"qutag", foreign, {}}), Contains("unknown key 'set_file'"));
  CHECK_THROWS_WITH(makeSource({"file", foreign, {}}),
                    Contains("'set_file' applies to spc files only") && Contains("qutag file"));
  Parameters foreign_window = spc_path;
  foreign_window.set("reorder_window_ps", std::int64_t{0});
  CHECK_THROWS_WITH(makeSource({"file", foreign_window, {}}),
                    Contains("'reorder_window_ps' applies to qutag files only"));
}

TEST_CASE("A channel map whose inputs, sync and markers meet or wrap is refused by name",
          "[vendor][ptu][qutag]") {
  const std::string ptu = std::string(TAGFLOW_VENDOR_DATA) + "/picoquant/v20_t3.ptu";
  const auto open = [](const std::string& path, VendorChannelMap map) {
    VendorOpenOptions options;
    options.channels = map;
    return openVendorFile(path, "auto", options);
  };
  CHECK_NOTHROW(open(ptu, {}));
  CHECK_THROWS_WITH(open(ptu, {.first_input = 1, .sync = 1, .first_marker = 200}),
                    "ptu files: first_input_channel (1..64) and sync_channel (1) share channels, "
                    "which would merge them (valid: apart)");
  CHECK_THROWS_WITH(open(ptu, {.first_input = 1, .sync = 0, .first_marker = 60}),
                    Contains("first_input_channel (1..64) and first_marker_channel (60..63)"));
  CHECK_THROWS_WITH(open(ptu, {.first_input = 2147483647, .sync = 0, .first_marker = -10}),
                    Contains("first_input_channel (2147483647..2147483710) leaves the 32-bit "
                             "channel numbers"));

  TempDir dir;
  const std::string qutag = dir.file("tags.bin");
  writeQutag(qutag, {{1000, 0}, {2000, 105}});
  // quTAG files hold no sync: its channel may be anything.
  CHECK(eventsOf(open(qutag, {.first_input = 1, .sync = 1, .first_marker = 200})) ==
        std::vector<Event>{T(1, 1000), T(-200, 2000)});
  // Marker 0's falling edge would be -0: the rising edge's channel.
  CHECK_THROWS_WITH(open(qutag, {.first_input = 10, .sync = 0, .first_marker = 0}),
                    Contains("first_marker_channel (0..4) and first_marker_channel (falling "
                             "edges, negated) (-3..0) share channels"));
}
