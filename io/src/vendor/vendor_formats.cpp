#include "tagflow/io/vendor/vendor_formats.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

#include "tagflow/core/error.hpp"
#include "tagflow/io/vendor/becker_hickl_spc.hpp"
#include "tagflow/io/vendor/picoquant_files.hpp"
#include "tagflow/io/vendor/qutag.hpp"

namespace tagflow {

namespace {

std::string lowerExtension(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension.empty() ? extension : extension.substr(1);
}

// The legacy PicoQuant file of `head` (its first bytes): the Ident names the instrument, the
// measurement mode (2: T2, 3: T3) sits after the text and binary header fields before it.
std::string legacyFormat(const std::vector<char>& head) {
  const std::string ident(head.data(), strnlen(head.data(), 16));
  const bool picoharp = ident == "PicoHarp 300";
  if (!picoharp && ident != "HydraHarp") return "";
  const std::size_t mode_at = picoharp ? 348 : 340;
  if (head.size() < mode_at + 4) return "";
  std::int32_t mode;
  std::memcpy(&mode, head.data() + mode_at, 4);
  if (mode != 2 && mode != 3) return "";
  return std::string(picoharp ? "pt" : "ht") + (mode == 2 ? "2" : "3");
}

}  // namespace

const std::vector<std::string>& vendorFormats() {
  static const std::vector<std::string> formats{"ptu", "pt2", "pt3", "ht2", "ht3", "spc", "qutag"};
  return formats;
}

std::string detectVendorFormat(const std::string& path) {
  // A folder opens as a stream that reads nothing, which would pass for an unknown format.
  if (std::filesystem::is_directory(path)) {
    throw IoError(fmt::format("'{}' is a folder, not a file", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  std::vector<char> head(512, 0);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  head.push_back(0);
  if (head.size() >= 6 && std::memcmp(head.data(), "PQTTTR", 6) == 0) return "ptu";
  if (head.size() >= 4 && std::memcmp(head.data(), "\x87\xB3\x91\xFA", 4) == 0) return "qutag";
  if (std::string legacy = legacyFormat(head); !legacy.empty()) return legacy;
  // Becker & Hickl FIFO files carry no signature: their first word is the macrotime clock.
  if (lowerExtension(path) == "spc") return "spc";
  return "";
}

namespace {

// The channels a format's records can name: inputs from first_input, the sync (quTAG files
// have none), markers from first_marker (quTAG also the negatives of its markers, for falling
// edges). Two of them that meet would merge in the stream, and a range past a channel's 32
// bits would wrap.
void checkChannelMap(const std::string& format, const VendorChannelMap& map) {
  struct Range {
    const char* what;
    std::int64_t first;
    std::int64_t last;
  };
  const bool qutag = format == "qutag";
  const std::int64_t inputs = format == "spc" ? 16 : qutag ? 32 : 64;
  const std::int64_t markers = qutag ? 5 : 4;  // quTAG's fifth: its millisecond tick
  std::vector<Range> ranges{
      {"first_input_channel", map.first_input, map.first_input + inputs - 1},
      {"first_marker_channel", map.first_marker, map.first_marker + markers - 1}};
  if (!qutag) {
    ranges.push_back({"sync_channel", map.sync, map.sync});
  } else {
    ranges.push_back({"first_marker_channel (falling edges, negated)",
                      -(std::int64_t{map.first_marker} + markers - 2),
                      -std::int64_t{map.first_marker}});
  }
  const auto text = [](const Range& r) {
    return r.first == r.last ? fmt::format("{} ({})", r.what, r.first)
                             : fmt::format("{} ({}..{})", r.what, r.first, r.last);
  };
  for (const Range& range : ranges) {
    if (range.first < std::numeric_limits<channel_t>::min() ||
        range.last > std::numeric_limits<channel_t>::max()) {
      throw InvalidArgument(fmt::format(
          "{} files: {} leaves the 32-bit channel numbers (valid: {}..{})", format, text(range),
          std::numeric_limits<channel_t>::min(), std::numeric_limits<channel_t>::max()));
    }
  }
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    for (std::size_t j = i + 1; j < ranges.size(); ++j) {
      if (ranges[i].first <= ranges[j].last && ranges[j].first <= ranges[i].last) {
        throw InvalidArgument(
            fmt::format("{} files: {} and {} share channels, which would merge them (valid: apart)",
                        format, text(ranges[i]), text(ranges[j])));
      }
    }
  }
}

}  // namespace

VendorFile openVendorFile(const std::string& path, std::string_view format,
                          const VendorOpenOptions& options) {
  std::string chosen(format);
  if (chosen == "auto") {
    chosen = detectVendorFormat(path);
    if (chosen.empty()) {
      throw InvalidArgument(fmt::format(
          "the format of '{}' is not recognised (valid: {}; name it where the file lacks a "
          "signature)",
          path, fmt::join(vendorFormats(), ", ")));
    }
  }
  if (std::ranges::find(vendorFormats(), chosen) != vendorFormats().end()) {
    checkChannelMap(chosen, options.channels);
  }
  if (chosen == "ptu") return openPtuFile(path, options.channels);
  if (chosen == "spc") {
    // SPC files carry no signature, so any bytes decode as SPC records: a file that carries
    // another format's signature is refused rather than read as noise.
    if (const std::string signed_as = detectVendorFormat(path);
        !signed_as.empty() && signed_as != "spc") {
      throw InvalidArgument(fmt::format(
          "'{}' carries the signature of a {} file, not spc (valid: the format {} or auto)", path,
          signed_as, signed_as));
    }
    return openSpcFile(path, {"auto", options.spc_macrotime_clock_ns, options.spc_set_file},
                       options.channels);
  }
  if (chosen == "qutag")
    return openQutagFile(path, options.channels, options.qutag_reorder_window_ps);
  if (chosen == "pt2" || chosen == "pt3" || chosen == "ht2" || chosen == "ht3") {
    VendorFile file = openPicoQuantLegacyFile(path, options.channels);
    if (file.format.find("." + chosen) == std::string::npos) {
      throw InvalidArgument(fmt::format("'{}' is a {} file, not .{}", path, file.format, chosen));
    }
    return file;
  }
  throw InvalidArgument(fmt::format("unknown vendor format '{}' (valid: auto, {})", chosen,
                                    fmt::join(vendorFormats(), ", ")));
}

}  // namespace tagflow
