#include "tagflow/io/vendor/vendor_formats.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <fstream>

#include "tagflow/core/error.hpp"
#include "tagflow/io/vendor/picoquant_files.hpp"

namespace tagflow {

const std::vector<std::string>& vendorFormats() {
  static const std::vector<std::string> formats{"ptu"};
  return formats;
}

std::string detectVendorFormat(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("cannot open '{}'", path));
  char head[16] = {};
  in.read(head, sizeof head);
  if (std::memcmp(head, "PQTTTR", 6) == 0) return "ptu";
  return "";
}

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
  if (chosen == "ptu") return openPtuFile(path, options.channels);
  throw InvalidArgument(fmt::format("unknown vendor format '{}' (valid: auto, {})", chosen,
                                    fmt::join(vendorFormats(), ", ")));
}

}  // namespace tagflow
