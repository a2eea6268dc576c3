// openPicoQuantLegacyFile: the fixed-header files of PicoQuant's older software, .pt2/.pt3
// (PicoHarp 300, format 2.0) and .ht2/.ht3 (HydraHarp, formats 1.0 and 2.0). The header is a
// chain of packed little-endian C structures (text header, binary header, hardware header with
// per-board or per-input blocks whose count an earlier field gives, TTTR header, image header
// words), then 32-bit records. The file is recognised by its Ident, FormatVersion and
// MeasurementMode fields, never by its name. Every field goes to VendorFile::header; a value the
// reader needs that is out of range is a DataError naming the file, the field, the value, its
// byte offset and the valid range.
//
// Layouts: PicoQuant's legacy file demos (pt2demo.c, pt3demo.c, the HydraHarp ht2/ht3 demos).
// Where third-party readers disagree (all input settings then all input rates, or each input's
// rate after its settings), the real HydraHarp 1.0 file of tests/data/vendor/legacy settles it:
// only the demos' order gives it sensible values.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tagflow/core/error.hpp"
#include "tagflow/io/vendor/header_bytes.hpp"
#include "tagflow/io/vendor/picoquant_files.hpp"
#include "tagflow/io/vendor/picoquant_records.hpp"

namespace tagflow {

namespace {

constexpr int kModeT2 = 2;
constexpr int kModeT3 = 3;
// The HydraHarp hardware header always holds ten module slots, used or not.
constexpr int kHydraHarpModuleSlots = 10;
// The HydraHarp record's channel field has 6 bits.
constexpr int kMaxHydraHarpInputs = 64;
// PicoHarp 300 is a single board; the bound only keeps a corrupt count from reading the records
// as board headers.
constexpr int kMaxPicoHarpBoards = 16;
// Each PicoHarp board header holds four router channel blocks whatever RoutingChannels says.
constexpr int kPicoHarpRouterChannels = 4;
// How many records are looked at for overflow records that carry counts (see the format 1.0 check
// below).
constexpr std::uint64_t kOverflowScanRecords = 16384;

// Latin-1 text (the header's char arrays, up to the first NUL) as UTF-8.
std::string latin1ToUtf8(std::span<const std::uint8_t> bytes) {
  std::string text;
  for (std::uint8_t byte : bytes) {
    if (byte == 0) break;
    if (byte < 0x80) {
      text += static_cast<char>(byte);
    } else {
      text += static_cast<char>(0xC0 | (byte >> 6));
      text += static_cast<char>(0x80 | (byte & 0x3F));
    }
  }
  return text;
}

// Text for an error message about bytes that may be anything (the ident of a foreign file).
std::string escaped(std::span<const std::uint8_t> bytes) {
  std::string text;
  for (std::uint8_t byte : bytes) {
    if (byte == 0) break;
    if (byte >= 0x20 && byte < 0x7F && byte != '\\' && byte != '\'') {
      text += static_cast<char>(byte);
    } else {
      text += fmt::format("\\x{:02X}", byte);
    }
  }
  return text;
}

// A float field holds a decimal the software chose (0.004 ns) to float precision
// (0.0040000002); its shortest round-trip text is that decimal, so the resolution carries no
// float noise into the picosecond arithmetic.
// (fmt and from_chars, unlike stod, ignore the locale's decimal separator.)
double floatDecimal(float value) {
  const std::string text = fmt::format("{}", value);
  double decimal = value;
  std::from_chars(text.data(), text.data() + text.size(), decimal);
  return decimal;
}

// Reads the header front to back, adding each field to `fields` and remembering where the last
// one began, so that a check right after a read can name its offset.
class LegacyHeader {
 public:
  explicit LegacyHeader(HeaderBytes& in) : in_(in) {}

  std::int32_t int32(const std::string& name) {
    const auto bytes = take(4, name);
    std::int32_t value;
    std::memcpy(&value, bytes.data(), 4);
    fields.add(name, "int32", std::to_string(value));
    return value;
  }
  std::uint32_t uint32(const std::string& name) {
    const auto bytes = take(4, name);
    std::uint32_t value;
    std::memcpy(&value, bytes.data(), 4);
    fields.add(name, "uint32", std::to_string(value));
    return value;
  }
  // Bit fields (inputs enabled, markers, external devices) read best in hexadecimal.
  std::uint32_t bits32(const std::string& name) {
    const auto bytes = take(4, name);
    std::uint32_t value;
    std::memcpy(&value, bytes.data(), 4);
    fields.add(name, "int32", fmt::format("0x{:08x}", value));
    return value;
  }
  std::uint64_t bits64(const std::string& name) {
    const auto bytes = take(8, name);
    std::uint64_t value;
    std::memcpy(&value, bytes.data(), 8);
    fields.add(name, "uint64", fmt::format("0x{:016x}", value));
    return value;
  }
  std::uint64_t uint64(const std::string& name) {
    const auto bytes = take(8, name);
    std::uint64_t value;
    std::memcpy(&value, bytes.data(), 8);
    fields.add(name, "uint64", std::to_string(value));
    return value;
  }
  float float32(const std::string& name) {
    const auto bytes = take(4, name);
    float value;
    std::memcpy(&value, bytes.data(), 4);
    fields.add(name, "float32", fmt::format("{}", value));
    return value;
  }
  double float64(const std::string& name) {
    const auto bytes = take(8, name);
    double value;
    std::memcpy(&value, bytes.data(), 8);
    fields.add(name, "float64", fmt::format("{}", value));
    return value;
  }
  std::string text(const std::string& name, std::size_t size) {
    std::string value = latin1ToUtf8(take(size, name));
    fields.add(name, fmt::format("char[{}]", size), value);
    return value;
  }
  // Bytes that are no setting (the text header's CR LF).
  void filler(const std::string& name, std::size_t size) { take(size, name); }
  std::span<const std::uint8_t> raw(const std::string& name, std::size_t size) {
    return take(size, name);
  }

  std::uint64_t at() const { return at_; }  // where the last field began
  const std::string& path() const { return in_.path(); }

  // The DataError of the field just read: its value outside `valid`.
  [[noreturn]] void invalid(std::string_view name, std::string_view value,
                            std::string_view valid) const {
    throw DataError(fmt::format("'{}': {} {} at byte offset {} is invalid (valid: {})", path(),
                                name, value, at_, valid));
  }

  HeaderFields fields;

 private:
  std::span<const std::uint8_t> take(std::size_t size, const std::string& name) {
    at_ = in_.offset();
    const std::string what = fmt::format("the field {}", name);
    return in_.bytes(size, what.c_str());
  }

  HeaderBytes& in_;
  std::uint64_t at_ = 0;
};

// What the instrument-specific part of the header yields.
struct LegacyTiming {
  PicoQuantLayout layout = PicoQuantLayout::PicoHarpT2;
  PicoQuantTiming timing{0, 0};
  std::int32_t acquisition_ms = 0;
  std::uint64_t header_records = 0;
  bool header_records_valid = false;  // false: negative in the header
  std::string header_records_text;
  std::vector<std::string> warnings;
};

int readMode(LegacyHeader& h) {
  const std::int32_t mode = h.int32("MeasurementMode");
  if (mode != kModeT2 && mode != kModeT3) {
    h.invalid("MeasurementMode", fmt::format("{}{}", mode, mode == 0 ? " (histogramming)" : ""),
              "2 = T2, 3 = T3: only time-tag files hold records");
  }
  return mode;
}

// The display and automation settings both instruments' binary headers end with.
void readDisplayAndRepeat(LegacyHeader& h) {
  for (int i = 0; i < 8; ++i) {
    h.int32(fmt::format("DispCurveMapTo({})", i));
    h.int32(fmt::format("DispCurveShow({})", i));
  }
  for (int i = 0; i < 3; ++i) {
    h.float32(fmt::format("ParamStart({})", i));
    h.float32(fmt::format("ParamStep({})", i));
    h.float32(fmt::format("ParamEnd({})", i));
  }
  h.int32("RepeatMode");
  h.int32("RepeatsPerCurve");
  h.int32("RepeatTime");
  h.int32("RepeatWaitTime");
  h.text("ScriptName", 20);
}

std::int32_t readImageHeaderSize(LegacyHeader& h) {
  const std::int32_t words = h.int32("ImgHdrSize");
  if (words < 0) h.invalid("ImgHdrSize", std::to_string(words), ">= 0 (32-bit words)");
  return words;
}

// The imaging header: ImgHdrSize words that only PicoQuant's imaging software interprets.
void readImageHeader(LegacyHeader& h, std::int32_t words) {
  const auto bytes = h.raw("ImgHdr", static_cast<std::size_t>(words) * 4);
  std::string list;
  for (std::size_t i = 0; i + 4 <= bytes.size(); i += 4) {
    std::int32_t word;
    std::memcpy(&word, bytes.data() + i, 4);
    list += fmt::format("{}{}", list.empty() ? "" : ", ", word);
  }
  h.fields.add("ImgHdr", fmt::format("int32[{}]", words), "[" + list + "]");
}

// .pt2 / .pt3: binary header, NumberOfBoards board headers, TTTR header.
LegacyTiming readPicoHarp(LegacyHeader& h) {
  LegacyTiming result;
  h.int32("NumberOfCurves");
  const std::int32_t bits = h.int32("BitsPerRecord");
  if (bits != 32) {
    result.warnings.push_back(fmt::format(
        "'{}': BitsPerRecord is {}; TTTR records are 32-bit words, read as such", h.path(), bits));
  }
  h.int32("RoutingChannels");
  const std::int32_t boards = h.int32("NumberOfBoards");
  if (boards < 1 || boards > kMaxPicoHarpBoards) {
    h.invalid("NumberOfBoards", std::to_string(boards), fmt::format("1..{}", kMaxPicoHarpBoards));
  }
  h.int32("ActiveCurve");
  const int mode = readMode(h);
  h.int32("SubMode");
  h.int32("RangeNo");
  h.int32("Offset");
  result.acquisition_ms = h.int32("AcquisitionTime");
  h.int32("StopAt");
  h.int32("StopOnOvfl");
  h.int32("Restart");
  h.int32("DispLinLog");
  h.int32("DispTimeAxisFrom");
  h.int32("DispTimeAxisTo");
  h.int32("DispCountAxisFrom");
  h.int32("DispCountAxisTo");
  readDisplayAndRepeat(h);

  double resolution_ns = 0;
  std::uint64_t resolution_at = 0;
  for (int b = 0; b < boards; ++b) {
    const std::string board = fmt::format("Board({}).", b);
    h.text(board + "HardwareIdent", 16);
    h.text(board + "HardwareVersion", 8);
    h.int32(board + "HardwareSerial");
    h.int32(board + "SyncDivider");
    h.int32(board + "CFDZeroCross0");
    h.int32(board + "CFDLevel0");
    h.int32(board + "CFDZeroCross1");
    h.int32(board + "CFDLevel1");
    const float resolution = h.float32(board + "Resolution");
    if (b == 0) {
      resolution_ns = floatDecimal(resolution);
      resolution_at = h.at();
    }
    h.int32(board + "RouterModelCode");
    h.int32(board + "RouterEnabled");
    for (int r = 1; r <= kPicoHarpRouterChannels; ++r) {
      const std::string router = fmt::format("{}RtChan({}).", board, r);
      h.int32(router + "InputType");
      h.int32(router + "InputLevel");
      h.int32(router + "InputEdge");
      h.int32(router + "CFDPresent");
      h.int32(router + "CFDLevel");
      h.int32(router + "CFDZeroCross");
    }
  }

  h.bits32("ExtDevices");
  h.int32("Reserved1");
  h.int32("Reserved2");
  const std::int32_t sync_rate = h.int32("CntRate0");
  const std::uint64_t sync_rate_at = h.at();
  h.int32("CntRate1");
  h.int32("StopAfter");
  h.int32("StopReason");
  const std::int32_t records = h.int32("Records");
  result.header_records = static_cast<std::uint64_t>(records);
  result.header_records_valid = records >= 0;
  result.header_records_text = std::to_string(records);
  readImageHeader(h, readImageHeaderSize(h));

  if (mode == kModeT2) {
    // PicoHarp T2 stamps are in 4 ps units whatever the board's histogram resolution says.
    result.layout = PicoQuantLayout::PicoHarpT2;
    result.timing = {4e-12, 4e-12};
    if (std::fabs(resolution_ns - 0.004) > 1e-9) {
      result.warnings.push_back(fmt::format(
          "'{}': Board(0).Resolution is {} ns; PicoHarp T2 time tags are in 4 ps units, read "
          "as such",
          h.path(), resolution_ns));
    }
    return result;
  }
  // As PicoQuant's pt3 demo does: the sync period is 1 / CntRate0 as written, SyncDivider not
  // applied, and the dtime unit is the board resolution.
  if (sync_rate <= 0) {
    throw DataError(
        fmt::format("'{}': CntRate0 (the sync rate) {} /s at byte offset {} is "
                    "invalid (valid: > 0): a T3 file needs it for the sync period",
                    h.path(), sync_rate, sync_rate_at));
  }
  if (!(resolution_ns > 0) || !std::isfinite(resolution_ns)) {
    throw DataError(
        fmt::format("'{}': Board(0).Resolution {} ns at byte offset {} is invalid "
                    "(valid: > 0): a T3 file needs it for the dtime unit",
                    h.path(), resolution_ns, resolution_at));
  }
  result.layout = PicoQuantLayout::PicoHarpT3;
  result.timing = {1.0 / sync_rate, resolution_ns * 1e-9, static_cast<std::uint32_t>(sync_rate)};
  return result;
}

// .ht2 / .ht3: binary header, hardware header (ten module slots), InpChansPresent input blocks,
// as many input rates, TTTR header.
LegacyTiming readHydraHarp(LegacyHeader& h, bool version2) {
  LegacyTiming result;
  h.int32("NumberOfCurves");
  const std::int32_t bits = h.int32("BitsPerRecord");
  if (bits != 32) {
    result.warnings.push_back(fmt::format(
        "'{}': BitsPerRecord is {}; TTTR records are 32-bit words, read as such", h.path(), bits));
  }
  h.int32("ActiveCurve");
  const int mode = readMode(h);
  h.int32("SubMode");
  h.int32("Binning");
  const double resolution_ps = h.float64("Resolution");
  const std::uint64_t resolution_at = h.at();
  h.int32("Offset");
  result.acquisition_ms = h.int32("AcquisitionTime");
  h.uint32("StopAt");
  h.int32("StopOnOvfl");
  h.int32("Restart");
  h.int32("DispLinLog");
  h.uint32("DispTimeAxisFrom");
  h.uint32("DispTimeAxisTo");
  h.uint32("DispCountAxisFrom");
  h.uint32("DispCountAxisTo");
  readDisplayAndRepeat(h);

  h.text("HardwareIdent", 16);
  h.text("HardwarePartNo", 8);
  h.int32("HardwareSerial");
  const std::int32_t modules = h.int32("NumberOfModules");
  if (modules < 0 || modules > kHydraHarpModuleSlots) {
    h.invalid("NumberOfModules", std::to_string(modules),
              fmt::format("0..{}", kHydraHarpModuleSlots));
  }
  for (int m = 0; m < kHydraHarpModuleSlots; ++m) {
    if (m < modules) {
      h.int32(fmt::format("ModuleInfo({}).ModelCode", m));
      h.bits32(fmt::format("ModuleInfo({}).VersionCode", m));
    } else {
      h.filler(fmt::format("ModuleInfo({}) (unused slot)", m), 8);
    }
  }
  const double base_resolution_ps = h.float64("BaseResolution");
  h.bits64("InputsEnabled");
  const std::int32_t inputs = h.int32("InpChansPresent");
  if (inputs < 1 || inputs > kMaxHydraHarpInputs) {
    h.invalid("InpChansPresent", std::to_string(inputs), fmt::format("1..{}", kMaxHydraHarpInputs));
  }
  h.int32("RefClockSource");
  h.bits32("ExtDevices");
  h.bits32("MarkerSettings");
  h.int32("SyncDivider");
  h.int32("SyncCFDLevel");
  h.int32("SyncCFDZeroCross");
  h.int32("SyncOffset");
  for (int i = 0; i < inputs; ++i) {
    h.int32(fmt::format("InputModuleIndex({})", i));
    h.int32(fmt::format("InputCFDLevel({})", i));
    h.int32(fmt::format("InputCFDZeroCross({})", i));
    h.int32(fmt::format("InputOffset({})", i));
  }
  for (int i = 0; i < inputs; ++i) h.int32(fmt::format("InputRate({})", i));

  const std::int32_t sync_rate = h.int32("SyncRate");
  const std::uint64_t sync_rate_at = h.at();
  h.int32("StopAfter");
  h.int32("StopReason");
  // Unlike PicoHarp's, the record count sits between ImgHdrSize and the image header words.
  const std::int32_t image_words = readImageHeaderSize(h);
  result.header_records = h.uint64("NumberOfRecords");
  result.header_records_valid = true;
  result.header_records_text = std::to_string(result.header_records);
  readImageHeader(h, image_words);

  if (mode == kModeT2) {
    result.layout = version2 ? PicoQuantLayout::GenericT2 : PicoQuantLayout::HydraHarpV1T2;
    // HydraHarp T2 stamps are in units of the hardware's base resolution, 1 ps on every
    // HydraHarp 400; a header that says otherwise is noted and 1 ps used.
    result.timing = {1e-12, 1e-12};
    if (std::fabs(base_resolution_ps - 1.0) > 1e-9) {
      result.warnings.push_back(fmt::format(
          "'{}': BaseResolution is {} ps; HydraHarp T2 time tags are in 1 ps units, read as "
          "such",
          h.path(), base_resolution_ps));
    }
  } else {
    if (sync_rate <= 0) {
      throw DataError(
          fmt::format("'{}': SyncRate {} /s at byte offset {} is invalid "
                      "(valid: > 0): a T3 file needs it for the sync period",
                      h.path(), sync_rate, sync_rate_at));
    }
    if (!(resolution_ps > 0) || !std::isfinite(resolution_ps)) {
      throw DataError(
          fmt::format("'{}': Resolution {} ps at byte offset {} is invalid "
                      "(valid: > 0): a T3 file needs it for the dtime unit",
                      h.path(), resolution_ps, resolution_at));
    }
    // The sync period is 1 / SyncRate, SyncDivider not applied, as in PicoQuant's demos: the
    // real file (divider 8, 32 MHz) has dtimes up to 31256 ps, one undivided period, not eight.
    result.layout = version2 ? PicoQuantLayout::GenericT3 : PicoQuantLayout::HydraHarpV1T3;
    result.timing = {1.0 / sync_rate, resolution_ps * 1e-12, static_cast<std::uint32_t>(sync_rate)};
  }
  return result;
}

}  // namespace

VendorFile openPicoQuantLegacyFile(const std::string& path, VendorChannelMap channels) {
  HeaderBytes in(path);
  LegacyHeader h(in);
  const auto ident_bytes = h.raw("Ident", 16);
  const std::string ident = latin1ToUtf8(ident_bytes);
  const bool picoharp = ident == "PicoHarp 300";
  if (!picoharp && ident != "HydraHarp") {
    const bool ptu = ident.starts_with("PQTTTR");
    throw DataError(fmt::format(
        "'{}' is not a PicoHarp or HydraHarp time-tag file: Ident '{}' at byte offset 0 (valid: "
        "'PicoHarp 300' for .pt2/.pt3, 'HydraHarp' for .ht2/.ht3){}",
        path, escaped(ident_bytes), ptu ? "; it is a PTU file, read by openPtuFile" : ""));
  }
  h.fields.add("Ident", "char[16]", ident);
  const std::string version = h.text("FormatVersion", 6);
  // PicoQuant's demos compare the first three characters only.
  const std::string_view number = std::string_view(version).substr(0, 3);
  if (picoharp ? number != "2.0" : number != "1.0" && number != "2.0") {
    h.invalid("FormatVersion", fmt::format("'{}' of this {} file", version, ident),
              picoharp ? "'2.0'" : "'1.0', '2.0'");
  }
  h.text("CreatorName", 18);
  h.text("CreatorVersion", 12);
  h.text("FileTime", 18);
  h.filler("CRLF", 2);
  h.text("Comment", 256);
  LegacyTiming legacy = picoharp ? readPicoHarp(h) : readHydraHarp(h, number == "2.0");
  const bool t3 = isT3(legacy.layout);

  VendorFile file;
  file.path = path;
  file.format = fmt::format("{} {} (.{}{}, format {})", ident, t3 ? "T3" : "T2",
                            picoharp ? "pt" : "ht", t3 ? 3 : 2, number);
  file.file_size = in.fileSize();
  file.data_offset = in.offset();
  file.records = (file.file_size - file.data_offset) / 4;
  file.warnings = std::move(legacy.warnings);
  const char* count_field = picoharp ? "Records" : "NumberOfRecords";
  // Fewer records than the header counts: the file was cut off (a TruncatedData after the last
  // record); more, or a count that is not one: a warning.
  if (legacy.header_records_valid && legacy.header_records > file.records) {
    file.missing_records = legacy.header_records - file.records;
  } else if (!legacy.header_records_valid || legacy.header_records != file.records) {
    file.warnings.push_back(fmt::format(
        "'{}': the header counts {} records ({}), the file holds {}; reading what the file holds",
        path, legacy.header_records_text, count_field, file.records));
  }
  if (!picoharp && number == "1.0" && t3) {
    // A format 1.0 T3 overflow record stands for one wraparound and carries nothing else. Some
    // converters (the "SF-compressed" .ht3 of tttrlib's test data) rewrite runs of overflow
    // records as one record holding a count, under the same header; read as format 1.0, such
    // a file loses time at every counted record. The count is no part of PicoQuant's format and
    // readers disagree on it (tttrlib adds count + 1 wraparounds, format 2.0 would add count),
    // so the file is read as its header says and the user is told. (Only .ht3 files are known
    // to be rewritten so; of format 1.0 T2 overflow records nothing is known to check.)
    const std::uint64_t scanned = std::min(file.records, kOverflowScanRecords);
    const auto words = h.raw("the first records", static_cast<std::size_t>(scanned) * 4);
    std::uint64_t overflows = 0;
    std::uint64_t counted = 0;
    for (std::size_t i = 0; i < words.size(); i += 4) {
      std::uint32_t word;
      std::memcpy(&word, words.data() + i, 4);
      if ((word >> 31) == 1 && ((word >> 25) & 0x3F) == 0x3F) {
        ++overflows;
        counted += (word & 0x1FFFFFF) != 0 ? 1 : 0;
      }
    }
    if (counted > 0) {
      file.warnings.push_back(fmt::format(
          "'{}': {} of the {} overflow records among the first {} records carry a count, which "
          "HydraHarp format 1.0 records never do: the file was probably rewritten with counted "
          "overflows (e.g. an SF-compressed .ht3); it is read as its header says, one "
          "wraparound per overflow record, so its times may come out too short",
          path, counted, overflows, scanned));
    }
  }
  try {
    file.decoder = makePicoQuantDecoder(legacy.layout, legacy.timing, channels);
  } catch (const InvalidArgument& error) {
    throw DataError(fmt::format("'{}': {}", path, error.what()));
  }
  file.header = std::move(h.fields);
  return file;
}

}  // namespace tagflow
