// tagflow-bench --serve: what the live view costs the graph. The demo stream from memory runs
// through the measurements of the demo page (Counter, Countrate, Correlation,
// HistogramLogBins, FrequencyStability, PhaseNoise) on all threads, as fast as it can, in
// three ways taken in turn: no server, a server nobody looks at, and a server with one page
// (a WebSocket client on a thread of its own) receiving snapshots at `update_hz`. Reports
// the median wall rate of each and the cost of the page as a share of the plain rate.
#pragma once

#include <cstddef>
#include <string>

namespace tagflow::bench {

struct ServeBenchOptions {
  std::size_t tags = 100'000'000;
  std::size_t block_size = 16384;
  int threads = 2;
  int runs = 5;
  double update_hz = 10;
  std::string json;
};

int runServeBench(const ServeBenchOptions& options);

}  // namespace tagflow::bench
