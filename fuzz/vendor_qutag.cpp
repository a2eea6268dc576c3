// libFuzzer target for the quTAG reader: the input is written to a temporary file, recognised,
// opened with openQutagFile (reorder window 100 ns, or 0 for inputs of odd size) and drained
// through a VendorFileSource in blocks of 1 to 64 tags, checked as vendor_fuzz.hpp says.
#include "tagflow/io/vendor/qutag.hpp"
#include "vendor_fuzz.hpp"

using namespace tagflow;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::FuzzFile file("vendor_qutag", ".bin");
  file.write(data, size);
  fuzz::readExpectingErrors([&] {
    detectVendorFormat(file.path());
    fuzz::drainChecked(openQutagFile(file.path(), {}, size % 2 == 0 ? 100'000 : 0), 1 + size % 64);
  });
  return 0;
}
