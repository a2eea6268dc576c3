// tagflow-bench --parallel N: what sharding buys. Each measurement that splits runs on the
// demo stream from memory as one node (parallel = 1) and as N shards (ShardedMeasurement)
// on a graph with at least N threads; reports the median wall rate of each, their ratio, and
// the plain scan of the same tags measured in the same run.
#pragma once

#include <cstddef>
#include <string>

namespace tagflow::bench {

struct ParallelBenchOptions {
  std::size_t tags = 100'000'000;
  std::size_t block_size = 16384;
  int threads = 2;
  int runs = 5;
  int shards = 2;
  std::string json;
};

int runParallelBench(const ParallelBenchOptions& options);

}  // namespace tagflow::bench
