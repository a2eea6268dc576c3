#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>

#include "tagflow/core/error.hpp"
#include "tagflow/io/vendor/header_bytes.hpp"
#include "tagflow/io/vendor/picoquant_files.hpp"
#include "tagflow/io/vendor/picoquant_records.hpp"

namespace tagflow {

namespace {

constexpr char kMagic[8] = {'P', 'Q', 'T', 'T', 'T', 'R', 0, 0};
// Tag types of the PTU header.
constexpr std::uint32_t kEmpty8 = 0xFFFF0008;
constexpr std::uint32_t kBool8 = 0x00000008;
constexpr std::uint32_t kInt8 = 0x10000008;
constexpr std::uint32_t kBitSet64 = 0x11000008;
constexpr std::uint32_t kColor8 = 0x12000008;
constexpr std::uint32_t kFloat8 = 0x20000008;
constexpr std::uint32_t kDateTime = 0x21000008;
constexpr std::uint32_t kFloat8Array = 0x2001FFFF;
constexpr std::uint32_t kAnsiString = 0x4001FFFF;
constexpr std::uint32_t kWideString = 0x4002FFFF;
constexpr std::uint32_t kBinaryBlob = 0xFFFFFFFF;
constexpr std::uint64_t kMaxPayload = std::uint64_t{1} << 26;

std::string doubleText(double value) {
  return fmt::format("{:.17g}", value);
}

// A TDateTime: days since 1899-12-30 00:00, fractional part the time of day.
std::string dateText(double days) {
  if (!std::isfinite(days) || std::fabs(days) > 1e7) return doubleText(days);
  const auto seconds = static_cast<std::time_t>(std::llround((days - 25569.0) * 86400.0));
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &parts);
  return text;
}

std::string utf16ToUtf8(const std::uint8_t* bytes, std::size_t size) {
  std::string text;
  for (std::size_t i = 0; i + 1 < size; i += 2) {
    std::uint32_t unit = bytes[i] | (std::uint32_t{bytes[i + 1]} << 8);
    if (unit == 0) break;
    if (unit >= 0xD800 && unit < 0xDC00 && i + 3 < size) {
      const std::uint32_t low = bytes[i + 2] | (std::uint32_t{bytes[i + 3]} << 8);
      unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
      i += 2;
    }
    if (unit < 0x80) {
      text += static_cast<char>(unit);
    } else if (unit < 0x800) {
      text += static_cast<char>(0xC0 | (unit >> 6));
      text += static_cast<char>(0x80 | (unit & 0x3F));
    } else if (unit < 0x10000) {
      text += static_cast<char>(0xE0 | (unit >> 12));
      text += static_cast<char>(0x80 | ((unit >> 6) & 0x3F));
      text += static_cast<char>(0x80 | (unit & 0x3F));
    } else {
      text += static_cast<char>(0xF0 | (unit >> 18));
      text += static_cast<char>(0x80 | ((unit >> 12) & 0x3F));
      text += static_cast<char>(0x80 | ((unit >> 6) & 0x3F));
      text += static_cast<char>(0x80 | (unit & 0x3F));
    }
  }
  return text;
}

// ANSI strings are Windows-1252 in practice; bytes above 0x7F become their Latin-1 code point.
std::string ansiToUtf8(const std::uint8_t* bytes, std::size_t size) {
  std::string text;
  for (std::size_t i = 0; i < size && bytes[i] != 0; ++i) {
    if (bytes[i] < 0x80) {
      text += static_cast<char>(bytes[i]);
    } else {
      text += static_cast<char>(0xC0 | (bytes[i] >> 6));
      text += static_cast<char>(0x80 | (bytes[i] & 0x3F));
    }
  }
  return text;
}

// The name tagflow gives an entry type, as `tagflow info` shows it.
std::string_view typeName(std::uint32_t type) {
  switch (type) {
    case kEmpty8:
      return "empty";
    case kBool8:
      return "bool";
    case kInt8:
      return "int";
    case kBitSet64:
      return "bitset";
    case kColor8:
      return "color";
    case kFloat8:
      return "float";
    case kDateTime:
      return "datetime";
    case kFloat8Array:
      return "float array";
    case kAnsiString:
      return "string";
    case kWideString:
      return "widestring";
    case kBinaryBlob:
      return "blob";
    default:
      return "unknown";
  }
}

// The entries the records are decoded by must have their type: an integer read from a float's
// bits (or a string's length) would decode every record wrongly.
void requireType(const HeaderBytes& in, const std::string& name, std::uint64_t at,
                 std::uint32_t type, std::uint32_t expected) {
  if (type != expected) {
    throw DataError(fmt::format(
        "'{}': header entry '{}' at byte offset {} has the type {} (0x{:08X}) (valid: {}, "
        "0x{:08X})",
        in.path(), name, at, typeName(type), type, typeName(expected), expected));
  }
}

struct PtuHeader {
  HeaderFields fields;
  std::uint64_t data_offset = 0;
  std::int64_t record_type = -1;
  std::int64_t header_records = -1;
  double global_resolution = 0;
  double resolution = 0;
};

PtuHeader readPtuHeader(HeaderBytes& in) {
  PtuHeader header;
  const auto magic = in.bytes(8, "the file identifier");
  if (std::memcmp(magic.data(), kMagic, 8) != 0) {
    throw DataError(
        fmt::format("'{}' is not a PTU file (it does not begin with PQTTTR)", in.path()));
  }
  header.fields.add("Version", "string", ansiToUtf8(in.bytes(8, "the version").data(), 8));
  for (;;) {
    const std::uint64_t at = in.offset();
    const auto entry = in.bytes(48, "a header entry");
    std::string name = ansiToUtf8(entry.data(), 32);
    std::int32_t index;
    std::uint32_t type;
    std::uint64_t raw;
    std::memcpy(&index, entry.data() + 32, 4);
    std::memcpy(&type, entry.data() + 36, 4);
    std::memcpy(&raw, entry.data() + 40, 8);
    if (index >= 0) name += fmt::format("({})", index);
    std::int64_t integer;
    double real;
    std::memcpy(&integer, &raw, 8);
    std::memcpy(&real, &raw, 8);
    switch (type) {
      case kEmpty8:
        header.fields.add(name, "empty", "");
        break;
      case kBool8:
        header.fields.add(name, "bool", raw != 0 ? "true" : "false");
        break;
      case kInt8:
        header.fields.add(name, "int", std::to_string(integer));
        break;
      case kBitSet64:
        header.fields.add(name, "bitset", fmt::format("0x{:016x}", raw));
        break;
      case kColor8:
        header.fields.add(name, "color", fmt::format("0x{:08x}", raw));
        break;
      case kFloat8:
        header.fields.add(name, "float", doubleText(real));
        break;
      case kDateTime:
        header.fields.add(name, "datetime", dateText(real));
        break;
      case kFloat8Array:
      case kAnsiString:
      case kWideString:
      case kBinaryBlob: {
        if (raw > kMaxPayload) {
          throw DataError(fmt::format(
              "'{}': header entry '{}' at byte offset {} claims {} bytes (valid: at most {})",
              in.path(), name, at, raw, kMaxPayload));
        }
        const auto payload = in.bytes(static_cast<std::size_t>(raw), "a header entry's value");
        if (type == kAnsiString) {
          header.fields.add(name, "string", ansiToUtf8(payload.data(), payload.size()));
        } else if (type == kWideString) {
          header.fields.add(name, "widestring", utf16ToUtf8(payload.data(), payload.size()));
        } else if (type == kFloat8Array) {
          std::string list;
          for (std::size_t i = 0; i + 8 <= payload.size(); i += 8) {
            double value;
            std::memcpy(&value, payload.data() + i, 8);
            list += (list.empty() ? "" : ", ") + doubleText(value);
          }
          header.fields.add(name, "float array", "[" + list + "]");
        } else {
          header.fields.add(name, "blob", fmt::format("{} bytes", payload.size()));
        }
        break;
      }
      default:
        throw DataError(
            fmt::format("'{}': header entry '{}' at byte offset {} has the unknown type 0x{:08X}",
                        in.path(), name, at, type));
    }
    const std::string_view key = name;
    if (key == "TTResultFormat_TTTRRecType") {
      requireType(in, name, at, type, kInt8);
      header.record_type = integer;
    }
    if (key == "TTResult_NumberOfRecords") {
      requireType(in, name, at, type, kInt8);
      header.header_records = integer;
    }
    if (key == "MeasDesc_GlobalResolution") {
      requireType(in, name, at, type, kFloat8);
      header.global_resolution = real;
    }
    if (key == "MeasDesc_Resolution") {
      requireType(in, name, at, type, kFloat8);
      header.resolution = real;
    }
    if (key == "Header_End") break;
  }
  header.data_offset = in.offset();
  return header;
}

std::string knownRecordTypes() {
  std::string known;
  for (std::uint32_t code :
       {0x00010203u, 0x00010303u, 0x00010204u, 0x00010304u, 0x01010204u, 0x01010304u, 0x00010205u,
        0x00010305u, 0x00010206u, 0x00010306u, 0x00010207u, 0x00010307u}) {
    known += fmt::format("{}0x{:08X} ({})", known.empty() ? "" : ", ", code,
                         findPicoQuantRecordType(code)->instrument);
  }
  return known;
}

}  // namespace

VendorFile openPtuFile(const std::string& path, VendorChannelMap channels) {
  HeaderBytes in(path);
  PtuHeader header = readPtuHeader(in);
  const PicoQuantRecordType* type =
      header.record_type < 0
          ? nullptr
          : findPicoQuantRecordType(static_cast<std::uint32_t>(header.record_type));
  if (type == nullptr) {
    throw DataError(
        fmt::format("'{}': record type {} (TTResultFormat_TTTRRecType) is unknown "
                    "(valid: {})",
                    path,
                    header.record_type < 0 ? std::string("missing")
                                           : fmt::format("0x{:08X}", header.record_type),
                    knownRecordTypes()));
  }
  VendorFile file;
  file.path = path;
  file.format = fmt::format("PTU {}", type->instrument);
  file.file_size = in.fileSize();
  file.data_offset = header.data_offset;
  file.records = (file.file_size - file.data_offset) / 4;
  // MeasDesc_AcquisitionTime is the time asked for, not the time recorded (a run stopped early
  // keeps it), so the stream ends after its last tag. Fewer records than the header counts: the
  // file was cut off (a TruncatedData after the last record); more: a warning.
  if (header.header_records >= 0 &&
      static_cast<std::uint64_t>(header.header_records) > file.records) {
    file.missing_records = static_cast<std::uint64_t>(header.header_records) - file.records;
  } else if (header.header_records >= 0 &&
             static_cast<std::uint64_t>(header.header_records) != file.records) {
    file.warnings.push_back(fmt::format(
        "'{}': the header counts {} records (TTResult_NumberOfRecords), the file holds {}; "
        "reading what the file holds",
        path, header.header_records, file.records));
  }
  try {
    file.decoder =
        makePicoQuantDecoder(type->layout, {header.global_resolution, header.resolution}, channels);
  } catch (const InvalidArgument& error) {
    throw DataError(fmt::format("'{}': {}", path, error.what()));
  }
  file.provenance.set("TTResultFormat_TTTRRecType", fmt::format("0x{:08X}", type->code));
  file.provenance.set("record_layout", std::string(layoutName(type->layout)));
  file.provenance.set("MeasDesc_GlobalResolution", header.global_resolution);
  if (isT3(type->layout)) file.provenance.set("MeasDesc_Resolution", header.resolution);
  file.header = std::move(header.fields);
  return file;
}

}  // namespace tagflow
