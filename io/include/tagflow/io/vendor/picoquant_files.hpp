// PicoQuant's time-tag files: PTU (a tagged header, then records of one of twelve types) and
// the legacy fixed-header formats .pt2, .pt3 (PicoHarp 300) and .ht2, .ht3 (HydraHarp, format
// versions 1.0 and 2.0). Opening one reads its header (every entry is kept), checks it, and
// returns the VendorFile that VendorFileSource streams. docs/formats.md describes the tags
// made from the records.
#pragma once

#include <string>

#include "tagflow/io/vendor/vendor_file_source.hpp"

namespace tagflow {

// Throws IoError (cannot read) or DataError naming what is wrong and its byte offset (not a
// PTU file, an unknown header entry type or record type, a resolution that is not positive).
VendorFile openPtuFile(const std::string& path, VendorChannelMap channels = {});

// The same for .pt2, .pt3, .ht2 and .ht3 files (recognised by their header, not the name).
VendorFile openPicoQuantLegacyFile(const std::string& path, VendorChannelMap channels = {});

}  // namespace tagflow
