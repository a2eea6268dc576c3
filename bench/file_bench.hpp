// tagflow-bench --files: the tag file figures. On the 8-channel stream in memory: packing
// (with each general compressor) in MTags/s on one core and bytes per tag, decoding in
// MTags/s on one core, both beside a plain scan of the same tags in the same run; a
// FileWriter in a graph writing to /dev/shm and to a folder on the work disk (fsync
// included), beside that disk's sequential write rate measured the same way (write + fsync)
// in the same run; and bytes per tag for a pure 10 MHz clock, Poisson channels and
// correlated pairs. Medians of `runs` runs.
#pragma once

#include <cstddef>
#include <string>

namespace tagflow::bench {

struct FileBenchOptions {
  std::size_t tags = 100'000'000;
  int runs = 5;
  std::string disk_folder = "/work";  // a temporary folder is made and removed inside it
  std::string json;
};

int runFileBench(const FileBenchOptions& options);

}  // namespace tagflow::bench
