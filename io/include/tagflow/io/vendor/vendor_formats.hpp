// Other vendors' time-tag file formats by name, and a file's format recognised from its
// content: what `[source] kind = "file"`, `tagflow convert` and `tagflow info` use to open
// any of them. docs/formats.md describes each format and the tags made from it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tagflow/io/vendor/vendor_file_source.hpp"

namespace tagflow {

struct VendorOpenOptions {
  VendorChannelMap channels;
  // Becker & Hickl .spc: the macrotime clock when the file does not state it (0: from the
  // file), and the settings file (empty: the .set file beside the .spc, when there is one).
  double spc_macrotime_clock_ns = 0;
  std::string spc_set_file;
  // quTAG: how far stamps may be out of order.
  timestamp_t qutag_reorder_window_ps = 100'000;
};

// "ptu", "pt2", "pt3", "ht2", "ht3", "spc", "qutag".
const std::vector<std::string>& vendorFormats();

// The format of the file at `path` from its first bytes (and, for .spc files, which carry no
// signature, from the extension), or "" when it is none of vendorFormats(). Throws IoError
// when the file cannot be read.
std::string detectVendorFormat(const std::string& path);

// Opens `path` as `format` ("auto": detectVendorFormat()). Throws InvalidArgument naming an
// unknown format or one that cannot be recognised, DataError/IoError from the file.
VendorFile openVendorFile(const std::string& path, std::string_view format,
                          const VendorOpenOptions& options = {});

}  // namespace tagflow
