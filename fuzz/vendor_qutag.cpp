// libFuzzer target for the quTAG reader: the input is written to a temporary file (the readers
// take paths), recognised, opened with openQutagFile (reorder window 100 ns, or 0 for inputs of
// odd size) and drained through a VendorFileSource in blocks of 1 to 64 tags. Any outcome but
// a clean read or InvalidArgument/DataError/IoError is a finding, and so is a stream that
// breaks the block contract (blocks that do not tile time, a tag outside its block or out of
// order, a special index that does not list exactly the non-TimeTag tags).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tagflow/core/error.hpp"
#include "tagflow/io/vendor/qutag.hpp"
#include "tagflow/io/vendor/vendor_formats.hpp"

using namespace tagflow;

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

// One file per process, removed at exit.
struct TempFile {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("tagflow_fuzz_vendor_qutag_" + std::to_string(getpid()) + ".bin"))
                         .string();
  ~TempFile() { std::filesystem::remove(path); }
  void write(const std::uint8_t* data, std::size_t size) const {
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
  static const TempFile file;
  file.write(data, size);
  try {
    detectVendorFormat(file.path);
    drainChecked(openQutagFile(file.path, {}, size % 2 == 0 ? 100'000 : 0), 1 + size % 64);
  } catch (const InvalidArgument&) {
  } catch (const DataError&) {
  } catch (const IoError&) {
  }
  return 0;
}
