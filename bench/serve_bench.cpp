#include "serve_bench.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench_stream.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/frequency_stability.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"
#include "tagflow/measurements/phase_noise.hpp"
#include "tagflow/serve/server.hpp"

namespace tagflow::bench {
namespace {

enum class Mode { Plain, Server, Page };

// A page: reads every snapshot the server sends until the connection closes.
class PageClient {
 public:
  explicit PageClient(int port) {
    thread_ = std::thread([this, port] {
      namespace beast = boost::beast;
      boost::asio::io_context io;
      beast::websocket::stream<boost::asio::ip::tcp::socket> ws(io);
      boost::asio::ip::tcp::resolver resolver(io);
      boost::asio::connect(ws.next_layer(), resolver.resolve("127.0.0.1", std::to_string(port)));
      ws.handshake("127.0.0.1", "/ws");
      beast::flat_buffer buffer;
      beast::error_code error;
      while (ws.read(buffer, error), !error) {
        bytes_ += buffer.size();
        ++messages_;
        buffer.consume(buffer.size());
      }
    });
  }
  ~PageClient() {
    if (thread_.joinable()) thread_.join();
  }
  std::uint64_t messages() const { return messages_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::atomic<std::uint64_t> messages_{0};
  std::atomic<std::uint64_t> bytes_{0};
  std::thread thread_;
};

double processCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

struct RunFigures {
  double wall_mtags_per_s = 0;
  double cpu_s = 0;         // of the whole process during the run
  double server_cpu_s = 0;  // of the server's thread during the run
  std::uint64_t snapshots = 0;
  std::uint64_t snapshot_bytes = 0;
};

RunFigures runOnce(const std::shared_ptr<const std::vector<Tag>>& stream,
                   const ServeBenchOptions& options, Mode mode) {
  const std::vector<channel_t> channels = {1, 2, 3, 4, 5, 6, 7, 8};
  MemorySource source(stream, options.block_size);
  GraphOptions graph_options;
  graph_options.threads = options.threads;
  MeasurementGraph graph(source, graph_options);
  graph.emplace<Counter>("counter", channels, 10'000'000'000, 200);
  graph.emplace<Countrate>("rates", channels);
  graph.emplace<Correlation>("g2", 2, 1, 10, 400);
  graph.emplace<HistogramLogBins>("g2_log", 2, 1, -11, -6, 200);
  graph.emplace<FrequencyStability>("stability", 3, std::vector<std::int64_t>{1, 2, 5, 10, 20}, 100,
                                    1000);
  graph.emplace<PhaseNoise>("phase_noise", std::vector<channel_t>{3}, 256);

  RunFigures figures;
  if (mode == Mode::Plain) {
    const double cpu_before = processCpuSeconds();
    figures.wall_mtags_per_s = graph.run().wallMTagsPerSecond();
    figures.cpu_s = processCpuSeconds() - cpu_before;
    return figures;
  }
  ServeOptions serve_options;
  serve_options.port = 0;
  serve_options.update_hz = options.update_hz;
  serve_options.source = &source;
  auto server = std::make_unique<Server>(graph, serve_options);
  std::unique_ptr<PageClient> page;
  if (mode == Mode::Page) {
    page = std::make_unique<PageClient>(server->port());
    // The page is connected (it has its first snapshot) before the stream starts.
    while (page->messages() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double cpu_before = processCpuSeconds();
  const double server_cpu_before = server->cpuSeconds();
  figures.wall_mtags_per_s = graph.run().wallMTagsPerSecond();
  figures.cpu_s = processCpuSeconds() - cpu_before;
  figures.server_cpu_s = server->cpuSeconds() - server_cpu_before;
  server.reset();  // closes the page's connection, which ends its thread
  if (page) {
    figures.snapshots = page->messages();
    figures.snapshot_bytes = page->bytes();
    page.reset();
  }
  return figures;
}

}  // namespace

int runServeBench(const ServeBenchOptions& options) {
  const auto stream = makeAnnouncedBenchStream(options.tags);
  constexpr Mode kModes[] = {Mode::Plain, Mode::Server, Mode::Page};
  std::vector<double> walls[3], cpus[3], server_shares[3];
  std::uint64_t snapshots = 0, bytes = 0;
  // Taken in turn, each run starting with another mode, so that a drift of the machine's speed
  // and the cost of coming first touch all three alike.
  for (int run = 0; run < options.runs; ++run) {
    for (int k = 0; k < 3; ++k) {
      const int mode = (run + k) % 3;
      const RunFigures figures = runOnce(stream, options, kModes[mode]);
      walls[mode].push_back(figures.wall_mtags_per_s);
      cpus[mode].push_back(figures.cpu_s);
      server_shares[mode].push_back(figures.server_cpu_s / figures.cpu_s);
      snapshots += figures.snapshots;
      bytes += figures.snapshot_bytes;
    }
  }
  const double plain_rate = median(walls[0]), server_rate = median(walls[1]);
  const double page_rate = median(walls[2]);
  const double page_cost = 1 - page_rate / plain_rate;
  // Wall and process CPU time vary by several per cent from run to run on a shared machine;
  // the server thread's own CPU time is the cost the page adds, whatever the noise.
  const double page_cpu_cost = median(server_shares[2]);
  std::cout << std::fixed << std::setprecision(1) << "\n"
            << stream->size() << " tags, 6 measurements, " << options.threads
            << " threads, medians of " << options.runs << " runs, page at " << options.update_hz
            << " Hz\n"
            << std::setprecision(2) << "no server:             " << plain_rate << " MTags/s wall, "
            << median(cpus[0]) << " s CPU\n"
            << "server, no page:       " << server_rate << " MTags/s wall, " << median(cpus[1])
            << " s CPU\n"
            << "server and one page:   " << page_rate << " MTags/s wall, " << median(cpus[2])
            << " s CPU (" << snapshots / options.runs << " snapshots of "
            << (snapshots ? bytes / snapshots / 1024 : 0) << " KiB per run)\n"
            << "the server's thread: " << 100 * median(server_shares[1])
            << " % of the process's CPU time without a page, " << 100 * page_cpu_cost
            << " % with one\n"
            << "wall rate with the page against none: " << -100 * page_cost << " %\n";
  if (!options.json.empty()) {
    std::ofstream out(options.json);
    out << nlohmann::json{{"tags", stream->size()},
                          {"threads", options.threads},
                          {"runs", options.runs},
                          {"update_hz", options.update_hz},
                          {"plain_wall_mtags_per_s", plain_rate},
                          {"server_wall_mtags_per_s", server_rate},
                          {"page_wall_mtags_per_s", page_rate},
                          {"page_cost", page_cost},
                          {"page_cpu_cost", page_cpu_cost}}
               .dump(2)
        << "\n";
  }
  return 0;
}

}  // namespace tagflow::bench
