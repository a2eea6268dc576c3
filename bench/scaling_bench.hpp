// tagflow-bench --scaling: how each measurement's cost follows its parameters on the demo
// stream. Each family of rows varies one parameter; its first row is the reference, and every
// row is reported as capacity (MTags/s on one core), ratio to the plain scan of the same run
// and ratio to the family's reference. Also the raw file source alone, from the page cache,
// and a graph fed by it.
#pragma once

#include <cstddef>
#include <string>

namespace tagflow::bench {

struct ScalingBenchOptions {
  std::size_t tags = 0;
  std::size_t block_size = 0;
  int threads = 2;
  int runs = 5;
  std::string only;         // families whose name starts with this
  std::string disk_folder;  // where the raw file row writes its file
  std::string json;
};

int runScalingBench(const ScalingBenchOptions& options);

}  // namespace tagflow::bench
