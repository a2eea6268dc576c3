// What the vendor readers' fuzz targets share: a temporary file per process (the readers take
// paths), a drain that aborts on any break of the block contract (blocks that do not tile
// time, a tag outside its block or out of order, an unknown type, a special index that does not
// list exactly the non-TimeTag tags), and the outcomes that are no finding (a clean read, or
// InvalidArgument, DataError or IoError).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "tagflow/core/error.hpp"
#include "tagflow/io/vendor/vendor_formats.hpp"

namespace tagflow::fuzz {

inline void require(bool condition) {
  if (!condition) std::abort();
}

// tagflow_fuzz_<name>_<pid><extension> in the temporary folder, removed at exit; files of one
// name and other extensions share the stem, as a reader's companion files do.
class FuzzFile {
 public:
  FuzzFile(const std::string& name, const std::string& extension)
      : path_((std::filesystem::temp_directory_path() /
               ("tagflow_fuzz_" + name + "_" + std::to_string(getpid()) + extension))
                  .string()) {}
  ~FuzzFile() { remove(); }
  FuzzFile(const FuzzFile&) = delete;
  FuzzFile& operator=(const FuzzFile&) = delete;

  const std::string& path() const { return path_; }
  void write(const std::uint8_t* data, std::size_t size) const {
    std::ofstream(path_, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  void remove() const { std::filesystem::remove(path_); }

 private:
  std::string path_;
};

inline void drainChecked(VendorFile file, std::size_t block_size) {
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

// Runs `read`; the errors a reader may throw on bad input end it quietly, anything else
// escapes and is a finding.
template <typename Read>
void readExpectingErrors(Read read) {
  try {
    read();
  } catch (const InvalidArgument&) {
  } catch (const DataError&) {
  } catch (const IoError&) {
  }
}

}  // namespace tagflow::fuzz
