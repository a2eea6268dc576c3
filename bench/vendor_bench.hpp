// tagflow-bench --vendor: the vendor file readers' figures on one core. The 8-channel demo
// stream is encoded once per format (PTU generic T2 and T3, PicoHarp T2 and T3, legacy
// HydraHarp .ht3, Becker & Hickl SPC-130 with its .set file, quTAG) into a file in `folder`
// (a disk's file system, where users' files are: read back from its page cache); then opening
// it and draining a VendorFileSource into blocks is timed, beside a plain scan of the 16-byte
// tags from memory in the same run. Medians of `runs`. The memory row drains, in
// child processes, a generic T2 file of about 40 MB and one of more than 4 GiB (the same
// records repeated) and compares their peak resident memory.
#pragma once

#include <cstddef>
#include <string>

namespace tagflow::bench {

struct VendorBenchOptions {
  std::size_t tags = 50'000'000;
  std::size_t block_size = 16384;
  int runs = 5;
  std::string json;
  std::string folder = "/work";  // where the files are written (and removed)
  std::string only;  // a prefix of the formats' names: only those rows, and no memory row
};

int runVendorBench(const VendorBenchOptions& options);

// The child process of the memory row: drains `path` and prints the tags read, the resident
// memory before opening the file and the peak after draining it (KiB).
int vendorMemoryChild(const std::string& path, std::size_t block_size);

}  // namespace tagflow::bench
