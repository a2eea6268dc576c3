// libFuzzer target for the Becker & Hickl reader: an input beginning with 'S' holds a .set
// file (its length in the next two bytes, little-endian, then its bytes) before the .spc
// bytes; any other input is the .spc file alone. Both are written to temporary files (the .set
// beside the .spc, where openSpcFile looks), the .spc opened with openSpcFile (layout "auto":
// from the .set's module or the first record) and drained through a VendorFileSource in blocks
// of 1 to 64 tags, checked as vendor_fuzz.hpp says.
#include <algorithm>

#include "tagflow/io/vendor/becker_hickl_spc.hpp"
#include "vendor_fuzz.hpp"

using namespace tagflow;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::FuzzFile spc("vendor_spc", ".spc");
  static const fuzz::FuzzFile set("vendor_spc", ".set");
  std::size_t set_size = 0;
  if (size >= 3 && data[0] == 'S') {
    set_size = std::min<std::size_t>(data[1] | (std::size_t{data[2]} << 8), size - 3);
    set.write(data + 3, set_size);
    data += 3 + set_size;
    size -= 3 + set_size;
  } else {
    set.remove();
  }
  spc.write(data, size);
  fuzz::readExpectingErrors([&] {
    detectVendorFormat(spc.path());
    fuzz::drainChecked(openSpcFile(spc.path()), 1 + (size + set_size) % 64);
  });
  return 0;
}
