// The `tagflow` subcommands. Each returns the process exit code: 0 on success, 1 when the
// run failed (I/O, bad data), 2 when the configuration or arguments were invalid, 3 when the
// input file ended in a damaged tail (everything before it was written: damaged_tail.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tagflow::cli {

struct RunOptions {
  std::string config_path;
  std::string output;      // overrides [run] output when not empty
  std::string trace_path;  // Chrome trace-event JSON, when not empty
  int threads = -1;        // overrides [run] threads when >= 0
  bool quiet = false;
};

int runCommand(const RunOptions& options);

struct ServeCommandOptions {
  std::string config_path;
  std::string output;  // overrides [run] output when not empty
  int threads = -1;    // overrides [run] threads when >= 0
  std::string address = "127.0.0.1";
  int port = 8080;
  double update_hz = 10;
  std::string token;
  std::string web_root;
  bool quiet = false;
};

// Runs the graph like runCommand while serving its live view (docs/serve.md); when the stream
// ends the page keeps the final results until Ctrl-C or the page's "Stop run", then the
// results file is written.
int serveCommand(const ServeCommandOptions& options);

// Writes the configured source's stream (up to [run] duration_ps) to a tag file set (.tags)
// or a raw tag file (any other name).
int recordCommand(const std::string& config_path, const std::string& output);

struct ConvertOptions {
  std::string input;
  std::string output;
  std::string from;  // raw, tags or h5; empty: from the input's extension
  std::string to;    // the same for the output
  // Each for one output format only: given for another, the conversion is refused.
  std::optional<std::string> compression;      // tags: the general compressor (default none)
  std::optional<std::uint64_t> max_file_size;  // tags: bytes a part may hold (default 2^30)
  std::optional<std::string> description;      // h5: Photon-HDF5 /description
  bool quiet = false;
};

// Converts between raw tag files, tag files and Photon-HDF5.
int convertCommand(const ConvertOptions& options);

// `tagflow merge OUT IN...`: recordings of several taggers as one tag file set
// (mergeStreamFiles).
struct MergeOptions {
  std::string output;
  std::vector<std::string> inputs;
  std::vector<std::int32_t> channel_offsets;  // one per input, or none
  std::vector<std::int64_t> time_offsets;     // ps, one per input, or none
  bool overlap_only = false;
  std::optional<std::string> compression;
  std::optional<std::uint64_t> max_file_size;
  bool quiet = false;
};

int mergeCommand(const MergeOptions& options);

// `tagflow info FILE`: a vendor file's header.
struct InfoOptions {
  std::string path;
  std::string format = "auto";
  bool json = false;
};

int infoCommand(const InfoOptions& options);

// The text of `tagflow run --help`'s list of source and measurement kinds with their keys.
std::string kindsHelp();

struct PlotOptions {
  std::string results_path;
  std::string output_folder;  // default: <results stem>_plots next to the results file
  std::string format = "png";
};

// Writes one figure per measurement group of a results file (and one of the profile) by
// running the Python plotter; returns its exit status.
int plotCommand(const PlotOptions& options);

struct StreamSendOptions {
  std::string config_path;
  std::string to;    // ADDRESS:PORT
  std::string from;  // ADDRESS:PORT to send from; empty: any
  int mtu = 9000;
  std::optional<double> rate;  // tags per second; none: as fast as possible
  int cpu = -1;
  std::vector<std::uint32_t> drop;  // sequence numbers to drop (injected loss, for tests)
  bool quiet = false;
};

// Sends the configured source's stream (up to [run] duration_ps) in the UDP wire format.
int streamSendCommand(const StreamSendOptions& options);
// "200 MTags/s" for 2e8 tags per second.
std::string formatRate(double tags_per_second);

struct LinktestOptions {
  std::string mode = "local";  // local, send, receive
  std::string address;         // default: 127.0.0.1 (local, send), 0.0.0.0 (receive)
  int port = 4750;
  double duration_s = 10;
  int mtu = 9000;
  std::optional<double> rate;  // tags per second
  int sender_cpu = -1;
  int receiver_cpu = -1;
  int decode_cpu = -1;
  int receive_buffer = 64 << 20;
  std::size_t tags = std::size_t{1} << 21;  // of the demo stream replayed by the sender
  std::string interface;  // whose counters to read; default: the one holding the address
  std::string json;
};

// Sends and/or receives the demo stream for a duration and prints rates, loss and where it
// happened (socket, interface and UDP counters of the system).
int linktestCommand(const LinktestOptions& options);

}  // namespace tagflow::cli
