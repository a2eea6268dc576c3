#include "bench_cases.hpp"

#include "bench_stream.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/memory_source.hpp"

namespace tagflow::bench {

Profile runGraph(const std::shared_ptr<const std::vector<Tag>>& stream, std::size_t block_size,
                 int threads, const std::vector<Measurement*>& measurements) {
  MemorySource source(stream, block_size);
  GraphOptions graph_options;
  graph_options.threads = threads;
  MeasurementGraph graph(source, graph_options);
  for (Measurement* measurement : measurements) graph.add(*measurement);
  return graph.run();
}

BenchCase scanCase() {
  return {"Scan", "reads every tag", [] { return std::make_unique<ScanMeasurement>("Scan"); }};
}

namespace {

struct RunFigures {
  double capacity = 0;
  double wall = 0;
};

RunFigures runOnce(const BenchCase& bench_case,
                   const std::shared_ptr<const std::vector<Tag>>& stream, const GraphRuns& runs) {
  auto measurement = bench_case.make();
  const Profile profile = runGraph(stream, runs.block_size, runs.threads, {measurement.get()});
  measurement.reset();
  if (runs.after_each_run) runs.after_each_run();
  return {profile.nodes[1].capacityMTagsPerSecond(), profile.wallMTagsPerSecond()};
}

}  // namespace

CaseResult measureScan(const std::shared_ptr<const std::vector<Tag>>& stream,
                       const GraphRuns& runs) {
  const BenchCase scan = scanCase();
  std::vector<double> capacities, walls;
  for (int run = 0; run < runs.runs; ++run) {
    const RunFigures figures = runOnce(scan, stream, runs);
    capacities.push_back(figures.capacity);
    walls.push_back(figures.wall);
  }
  return {scan.name, scan.setup, median(capacities), median(walls), 1};
}

CaseResult measureCase(const BenchCase& bench_case,
                       const std::shared_ptr<const std::vector<Tag>>& stream,
                       const GraphRuns& runs) {
  const BenchCase scan = scanCase();
  std::vector<double> capacities, walls, ratios;
  for (int run = 0; run < runs.runs; ++run) {
    const double scan_capacity = runOnce(scan, stream, runs).capacity;
    const RunFigures figures = runOnce(bench_case, stream, runs);
    capacities.push_back(figures.capacity);
    walls.push_back(figures.wall);
    ratios.push_back(figures.capacity / scan_capacity);
  }
  return {bench_case.name, bench_case.setup, median(capacities), median(walls), median(ratios)};
}

}  // namespace tagflow::bench
