// tagflow: the command-line front end. `tagflow run CONFIG.toml` builds a measurement graph
// from a configuration, runs it with live progress, prints the profile and writes HDF5;
// `tagflow record CONFIG.toml OUT` writes a source's stream to a tag file or a raw tag file;
// `tagflow convert IN OUT` converts between raw tag files, tag files and Photon-HDF5, and
// from other vendors' files; `tagflow merge OUT IN...` merges recordings of several taggers;
// `tagflow info FILE` shows a vendor file's header or a recording's time index;
// `tagflow serve CONFIG.toml` runs it while a web page shows it live;
// `tagflow plot RESULTS.h5` draws the figures of a results file; `tagflow stream send` sends
// a source's stream over UDP and `tagflow linktest` measures that link.
#include <CLI/CLI.hpp>
#include <iostream>
#include <new>

#include "commands.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/io/vendor/vendor_formats.hpp"

namespace {

const CLI::Option* parsedOption(const CLI::App& app, const std::string& name) {
  for (const CLI::App* command : app.get_subcommands()) {
    if (const CLI::Option* option = parsedOption(*command, name)) return option;
  }
  return app.get_option_no_throw(name);
}

// CLI11 reports a value of the wrong type as "Could not convert: --drop = a,b"; this also says
// what the option takes.
std::string explainConversion(const CLI::App& app, const std::string& message) {
  const std::string prefix = "Could not convert: ";
  const auto equals = message.find(" = ");
  if (message.rfind(prefix, 0) != 0 || equals == std::string::npos) return message;
  const std::string name = message.substr(prefix.size(), equals - prefix.size());
  const CLI::Option* option = parsedOption(app, name);
  if (option == nullptr) return message;
  const std::string type = option->get_type_name();
  const bool list = option->get_items_expected_max() > 1;
  const std::string takes = type == "UINT"
                                ? (list ? "non-negative integers" : "a non-negative integer")
                            : type == "INT"   ? (list ? "integers" : "an integer")
                            : type == "FLOAT" ? (list ? "numbers" : "a number")
                                              : type;
  return name + " '" + message.substr(equals + 3) + "' is invalid (valid: " + takes +
         (list ? ", separated by spaces or commas" : "") + ")";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tagflow;
  skipHdf5CleanupAtExit();
  CLI::App app{"tagflow: time-tag stream processing engine"};
  app.set_version_flag("--version", tagflowVersion());
  app.require_subcommand(1);

  // An empty path given on purpose is refused, not taken for "no path given".
  const CLI::Validator path_given(
      [](const std::string& value) {
        return value.empty() ? std::string("the path is empty (valid: a file's path)")
                             : std::string();
      },
      "PATH", "a path");

  cli::RunOptions run_options;
  auto* run = app.add_subcommand("run", "run a measurement graph from a TOML configuration");
  run->add_option("config", run_options.config_path, "configuration file (TOML)")->required();
  run->add_option("-o,--output", run_options.output, "HDF5 output file (overrides [run] output)")
      ->check(path_given);
  run->add_option("--trace", run_options.trace_path, "write a Chrome trace-event JSON timeline")
      ->check(path_given);
  run->add_option("-t,--threads", run_options.threads, "worker threads (0 = all cores)")
      ->check(CLI::Range(0, 1024));
  run->add_flag("-q,--quiet", run_options.quiet, "print nothing but errors");
  run->footer(cli::kindsHelp());

  cli::ServeCommandOptions serve_options;
  auto* serve = app.add_subcommand(
      "serve", "run a measurement graph and show it live in a web browser (docs/serve.md)");
  serve->add_option("config", serve_options.config_path, "configuration file (TOML)")->required();
  serve
      ->add_option("-o,--output", serve_options.output, "HDF5 output file (overrides [run] output)")
      ->check(path_given);
  serve->add_option("-t,--threads", serve_options.threads, "worker threads (0 = all cores)")
      ->check(CLI::Range(0, 1024));
  serve->add_option("--address", serve_options.address,
                    "address to listen on (default 127.0.0.1; any other needs the printed token)");
  serve->add_option("--port", serve_options.port, "TCP port (default 8080, 0: any free port)")
      ->check(CLI::Range(0, 65535));
  serve->add_option("--update-hz", serve_options.update_hz, "page updates per second (1 to 60)")
      ->check(CLI::Range(1.0, 60.0));
  serve->add_option("--token", serve_options.token,
                    "token every data and control request must carry (default: a random one "
                    "when not on 127.0.0.1)");
  serve->add_option("--web-root", serve_options.web_root,
                    "folder of the page (default: the installed one)");
  serve->add_flag("-q,--quiet", serve_options.quiet, "print only the URL and errors");

  std::string record_config, record_output;
  auto* record =
      app.add_subcommand("record", "write a source's stream to a tag file (.tags) or raw tag file");
  record->add_option("config", record_config, "configuration file (TOML); its [source] is read")
      ->required();
  record->add_option("output", record_output, "file to write: OUT.tags a tag file, else raw tags")
      ->required();

  cli::ConvertOptions convert_options;
  auto* convert = app.add_subcommand(
      "convert",
      "convert between raw tag files (.raw), tag files (.tags) and Photon-HDF5 (.h5), and from "
      "other vendors' files (PTU, ...)");
  convert->add_option("input", convert_options.input, "file to read")->required();
  convert->add_option("output", convert_options.output, "file to write")->required();
  std::vector<std::string> input_formats{"raw", "tags", "h5"};
  input_formats.insert(input_formats.end(), vendorFormats().begin(), vendorFormats().end());
  convert
      ->add_option("--from", convert_options.from,
                   "input format (default: by extension, or a vendor file's content)")
      ->check(CLI::IsMember(input_formats));
  convert->add_option("--to", convert_options.to, "output format (default: by extension)")
      ->check(CLI::IsMember({"raw", "tags", "h5", "ptu"}));
  convert
      ->add_option("--compression", convert_options.compression,
                   "tag file compression behind the packed blocks")
      ->check(CLI::IsMember({"none", "zstd", "lz4"}));
  convert
      ->add_option("--max-file-size", convert_options.max_file_size,
                   "tag file bytes after which a new part begins")
      ->check(CLI::Range(std::uint64_t{4096}, std::uint64_t{1} << 62));
  convert->add_option("--description", convert_options.description,
                      "Photon-HDF5 /description text");
  convert->add_flag("-q,--quiet", convert_options.quiet, "print nothing but errors");

  cli::MergeOptions merge_options;
  auto* merge = app.add_subcommand(
      "merge", "merge recordings (.tags) of several time taggers into one, in time order");
  merge->add_option("output", merge_options.output, "tag file set to write (.tags)")->required();
  merge->add_option("inputs", merge_options.inputs, "tag files to merge")->required();
  merge
      ->add_option("--channel-offsets", merge_options.channel_offsets,
                   "per input, added to its channels (falling edges: subtracted)")
      ->delimiter(',');
  merge
      ->add_option("--time-offsets", merge_options.time_offsets, "per input, ps added to its times")
      ->delimiter(',');
  merge->add_flag("--overlap-only", merge_options.overlap_only,
                  "keep only the span every input covers");
  merge
      ->add_option("--compression", merge_options.compression,
                   "compression behind the packed blocks")
      ->check(CLI::IsMember({"none", "zstd", "lz4"}));
  merge
      ->add_option("--max-file-size", merge_options.max_file_size,
                   "bytes after which a new part begins")
      ->check(CLI::Range(std::uint64_t{4096}, std::uint64_t{1} << 62));
  merge->add_flag("-q,--quiet", merge_options.quiet, "print nothing but errors");

  cli::InfoOptions info_options;
  auto* info = app.add_subcommand(
      "info",
      "show a time-tag file: a vendor file's header (format, records, every header entry), or a "
      "tagflow recording's parts and time index");
  info->add_option("file", info_options.path,
                   "PTU, .pt2/.pt3/.ht2/.ht3, .spc, quTAG file, or a tagflow tag file")
      ->required();
  info->add_option("--format", info_options.format,
                   "the file's format (default auto: recognised from its content)");
  info->add_flag("--json", info_options.json, "print a JSON object instead of a table");

  cli::PlotOptions plot_options;
  auto* plot = app.add_subcommand("plot", "write one figure per measurement of a results file");
  plot->add_option("results", plot_options.results_path, "HDF5 results file")->required();
  plot->add_option("-o,--output", plot_options.output_folder,
                   "folder for the figures (default: <results stem>_plots next to the file)")
      ->check(path_given);
  plot->add_option("--format", plot_options.format, "image format (default: png)")
      ->check(CLI::IsMember({"png", "svg", "pdf"}));
  plot->footer("The plotter is tools/plot/tagflow_plot.py; TAGFLOW_PLOT_SCRIPT overrides it.");

  cli::StreamSendOptions send_options;
  auto* stream = app.add_subcommand("stream", "send a stream over UDP in the tagflow wire format");
  stream->require_subcommand(1);
  auto* send = stream->add_subcommand("send", "send a configuration's [source] to ADDRESS:PORT");
  send->add_option("config", send_options.config_path, "configuration file (TOML)")->required();
  send->add_option("--to", send_options.to, "receiver, IPV4_ADDRESS:PORT")->required();
  send->add_option("--from", send_options.from,
                   "send from this IPV4_ADDRESS:PORT (what a receiver's `sender` names)");
  send->add_option("--mtu", send_options.mtu, "MTU of the link, 576..9500 (default 9000)");
  send->add_option("--rate", send_options.rate, "tags per second (default: as fast as possible)");
  send->add_option("--cpu", send_options.cpu, "pin the sending thread to this CPU");
  send->add_option("--drop", send_options.drop, "sequence numbers not to send (injected loss)")
      ->delimiter(',');
  send->add_flag("-q,--quiet", send_options.quiet, "print nothing but errors");

  cli::LinktestOptions link_options;
  auto* linktest = app.add_subcommand("linktest", "measure the UDP stream link, like iperf3");
  linktest->add_option("--mode", link_options.mode, "local (both sides), send or receive")
      ->check(CLI::IsMember({"local", "send", "receive"}));
  linktest->add_option("--address", link_options.address,
                       "destination (local, send; default 127.0.0.1) or local address "
                       "(receive; default 0.0.0.0)");
  linktest->add_option("--port", link_options.port, "UDP port (default 4750)");
  linktest->add_option("--duration", link_options.duration_s, "seconds of sending (default 10)");
  linktest->add_option("--mtu", link_options.mtu, "MTU of the stream, 576..9500 (default 9000)");
  linktest->add_option("--rate", link_options.rate,
                       "tags per second (default: as fast as possible)");
  linktest->add_option("--sender-cpu", link_options.sender_cpu, "pin the sender to this CPU");
  linktest->add_option("--receiver-cpu", link_options.receiver_cpu,
                       "pin the receiving thread to this CPU");
  linktest->add_option("--decode-cpu", link_options.decode_cpu,
                       "pin the decoding thread to this CPU");
  linktest->add_option("--receive-buffer", link_options.receive_buffer,
                       "socket receive buffer, bytes (default 67108864)");
  linktest->add_option("--tags", link_options.tags, "demo-stream tags the sender replays");
  linktest->add_option("--interface", link_options.interface,
                       "receiving interface whose counters to report (default: by address)");
  linktest->add_option("--json", link_options.json, "also write the figures as JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::RequiredError& error) {
    // A first word that is no command reads better named than as a missing subcommand.
    if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {
      std::string commands;
      for (const CLI::App* command : app.get_subcommands({})) {
        commands += (commands.empty() ? "" : ", ") + command->get_name();
      }
      std::cerr << "tagflow: error: unknown command '" << argv[1] << "' (valid: " << commands
                << ")\n";
      return 2;
    }
    return app.exit(error) == 0 ? 0 : 2;
  } catch (const CLI::ConversionError& error) {
    std::cerr << "tagflow: error: " << explainConversion(app, error.what()) << "\n";
    return 2;
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }

  try {
    if (*run) return cli::runCommand(run_options);
    if (*serve) return cli::serveCommand(serve_options);
    if (*record) return cli::recordCommand(record_config, record_output);
    if (*convert) return cli::convertCommand(convert_options);
    if (*merge) return cli::mergeCommand(merge_options);
    if (*info) return cli::infoCommand(info_options);
    if (*plot) return cli::plotCommand(plot_options);
    if (*send) return cli::streamSendCommand(send_options);
    if (*linktest) return cli::linktestCommand(link_options);
  } catch (const InvalidArgument& error) {
    std::cerr << "tagflow: error: " << error.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "tagflow: error: out of memory: the configuration asks for more than this "
                 "machine can give (block_size and max_blocks_in_flight, a Counter's n_values, a "
                 "TagStream's max_tags or a histogram's n_bins set how much)\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "tagflow: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
