// A benchmark row: a measurement made afresh for each run, run alone in a graph over the
// in-memory demo stream; its figures are medians over the runs of the node's capacity (tags /
// busy time: the rate it sustains on one core) and of the graph's wall-clock rate. Shared by
// the main table of tagflow-bench and its --scaling table.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tagflow/core/measurement.hpp"
#include "tagflow/core/profile.hpp"

namespace tagflow::bench {

struct BenchCase {
  std::string name;
  std::string setup;
  std::function<std::unique_ptr<Measurement>()> make;
};

struct CaseResult {
  std::string name;
  std::string setup;
  double capacity = 0;  // median MTags/s of busy time
  double wall = 0;      // median MTags/s wall clock
};

struct GraphRuns {
  std::size_t block_size = 16384;
  int threads = 2;
  int runs = 5;
  std::function<void()> after_each_run;  // e.g. removes what a run wrote
};

// One graph run of `measurements` over the stream; returns the profile.
Profile runGraph(const std::shared_ptr<const std::vector<Tag>>& stream, std::size_t block_size,
                 int threads, const std::vector<Measurement*>& measurements);

CaseResult measureCase(const BenchCase& bench_case,
                       const std::shared_ptr<const std::vector<Tag>>& stream,
                       const GraphRuns& runs);

}  // namespace tagflow::bench
