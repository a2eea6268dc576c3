// libFuzzer target for the legacy PicoQuant reader (.pt2, .pt3, .ht2, .ht3): the input is
// written to a temporary file, recognised, opened with openPicoQuantLegacyFile and drained
// through a VendorFileSource in blocks of 1 to 64 tags, checked as vendor_fuzz.hpp says.
#include "tagflow/io/vendor/picoquant_files.hpp"
#include "vendor_fuzz.hpp"

using namespace tagflow;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::FuzzFile file("vendor_legacy", ".ht3");
  file.write(data, size);
  fuzz::readExpectingErrors([&] {
    detectVendorFormat(file.path());
    fuzz::drainChecked(openPicoQuantLegacyFile(file.path()), 1 + size % 64);
  });
  return 0;
}
