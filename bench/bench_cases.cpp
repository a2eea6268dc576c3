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

CaseResult measureCase(const BenchCase& bench_case,
                       const std::shared_ptr<const std::vector<Tag>>& stream,
                       const GraphRuns& runs) {
  std::vector<double> capacities, walls;
  for (int run = 0; run < runs.runs; ++run) {
    auto measurement = bench_case.make();
    const Profile profile = runGraph(stream, runs.block_size, runs.threads, {measurement.get()});
    capacities.push_back(profile.nodes[1].capacityMTagsPerSecond());
    walls.push_back(profile.wallMTagsPerSecond());
    measurement.reset();
    if (runs.after_each_run) runs.after_each_run();
  }
  return {bench_case.name, bench_case.setup, median(capacities), median(walls)};
}

}  // namespace tagflow::bench
