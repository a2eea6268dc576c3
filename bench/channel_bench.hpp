// The virtual channel figures of tagflow-bench (`--channels`): the capacity of each virtual
// channel on one core (tags / busy time of its node, the graph on one thread) against the
// plain scan of the same stream run just before it, and the wall rate of a graph of three
// virtual channels and four measurements on one thread and on `threads`.
#pragma once

#include <cstddef>
#include <string>

namespace tagflow::bench {

struct ChannelBenchOptions {
  std::size_t tags = 50'000'000;
  std::size_t block_size = 16384;
  int threads = 2;
  int runs = 5;
  std::string only;  // a prefix of the row names, empty for all
};

int runChannelBench(const ChannelBenchOptions& options);

}  // namespace tagflow::bench
