// libFuzzer target for the Becker & Hickl reader: an input beginning with 'S' holds a .set
// file (its length in the next two bytes, little-endian, then its bytes) before the .spc
// bytes; any other input is the .spc file alone. Both are written to temporary files (the
// readers take paths; the .set beside the .spc, where openSpcFile looks), the .spc opened with
// openSpcFile (layout "auto": from the .set's module or the first record) and drained through
// a VendorFileSource in blocks of 1 to 64 tags. Any outcome but a clean read or
// InvalidArgument/DataError/IoError is a finding, and so is a stream that breaks the block
// contract (blocks that do not tile time, a tag outside its block or out of order, a special
// index that does not list exactly the non-TimeTag tags).
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tagflow/core/error.hpp"
#include "tagflow/io/vendor/becker_hickl_spc.hpp"
#include "tagflow/io/vendor/vendor_formats.hpp"

using namespace tagflow;

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

// One .spc and one .set file per process, removed at exit.
struct TempFiles {
  std::string stem = (std::filesystem::temp_directory_path() /
                      ("tagflow_fuzz_vendor_spc_" + std::to_string(getpid())))
                         .string();
  std::string spc = stem + ".spc";
  std::string set = stem + ".set";
  ~TempFiles() {
    std::filesystem::remove(spc);
    std::filesystem::remove(set);
  }
  static void write(const std::string& path, const std::uint8_t* data, std::size_t size) {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
};

void drainChecked(VendorFile file, std::size_t block_size) {
  VendorFileSource source(std::move(file), block_size);
  BlockBuffer block;
  bool first = true;
  timestamp_t end = 0;
  while (source.next(block)) {
    require(block.begin_time <= block.end_time && (first || block.begin_time == end));
    std::size_t specials = 0;
    for (std::size_t i = 0; i < block.tags.size(); ++i) {
      const Tag& tag = block.tags[i];
      require(tag.time >= block.begin_time && tag.time < block.end_time);
      require(i == 0 || block.tags[i - 1].time <= tag.time);
      require(static_cast<std::uint8_t>(tag.type) <= kMaxTagType);
      if (tag.type != TagType::TimeTag) {
        require(specials < block.special.size() && block.special[specials] == i);
        ++specials;
      }
    }
    require(specials == block.special.size());
    first = false;
    end = block.end_time;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const TempFiles files;
  std::size_t set_size = 0;
  if (size >= 3 && data[0] == 'S') {
    set_size = std::min<std::size_t>(data[1] | (std::size_t{data[2]} << 8), size - 3);
    TempFiles::write(files.set, data + 3, set_size);
    data += 3 + set_size;
    size -= 3 + set_size;
  } else {
    std::filesystem::remove(files.set);
  }
  TempFiles::write(files.spc, data, size);
  try {
    detectVendorFormat(files.spc);
    drainChecked(openSpcFile(files.spc), 1 + (size + set_size) % 64);
  } catch (const InvalidArgument&) {
  } catch (const DataError&) {
  } catch (const IoError&) {
  }
  return 0;
}
