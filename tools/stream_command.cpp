// `tagflow stream send CONFIG.toml --to ADDRESS:PORT`: the hardware emulator. Sends the
// configured source's stream (up to [run] duration_ps) in the UDP wire format.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "interrupts.hpp"
#include "run_config.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/udp/stream_sender.hpp"

namespace tagflow::cli {

std::string formatRate(double tags_per_second) {
  std::ostringstream out;
  out << std::setprecision(4) << tags_per_second * 1e-6 << " MTags/s";
  return out.str();
}

int streamSendCommand(const StreamSendOptions& options) {
  const UdpEndpoint destination = parseEndpoint(options.to, "--to");
  UdpSenderConfig sender_config;
  sender_config.address = destination.address;
  sender_config.port = destination.port;
  sender_config.local = options.from;
  sender_config.mtu = options.mtu;
  if (options.rate) sender_config.rate = *options.rate;
  sender_config.cpu = options.cpu;
  sender_config.drop = options.drop;
  UdpStreamSender sender(sender_config);
  const RunConfig config = loadRunConfig(options.config_path, false);
  std::unique_ptr<Source> source = makeSource(config.source);
  if (config.duration_ps < 0 && config.source.kind == "synthetic" &&
      !config.source.parameters.contains("duration_ps")) {
    throw InvalidArgument(
        "sending an endless synthetic source needs [run] duration_ps or [source] duration_ps");
  }
  if (!options.quiet) {
    std::cout << "sending " << source->describe() << "\nto " << destination.text() << ", MTU "
              << options.mtu << " (" << sender.wordsPerDatagram() << " words per datagram), "
              << (options.rate ? formatRate(*options.rate) : std::string("as fast as possible"))
              << std::endl;
  }
  Interrupts interrupts([&] { sender.requestStop(); });
  const UdpSenderStats stats = sender.send(*source, config.duration_ps);
  if (!options.quiet) {
    const double seconds = std::max(stats.seconds, 1e-9);
    std::cout << std::fixed << std::setprecision(3) << "sent " << stats.events_sent << " tags in "
              << stats.datagrams_sent << " datagrams (" << stats.bytes_sent << " bytes) in "
              << seconds << " s: " << std::setprecision(1)
              << static_cast<double>(stats.events_sent) / seconds * 1e-6 << " MTags/s, "
              << std::setprecision(3) << static_cast<double>(stats.bytes_sent) * 8 / seconds * 1e-9
              << " Gbit/s";
    if (stats.datagrams_dropped > 0) {
      std::cout << "; dropped on request: " << stats.datagrams_dropped << " datagrams ("
                << stats.events_dropped << " tags)";
    }
    if (stats.refused > 0) std::cout << "; refused (nobody listening): " << stats.refused;
    if (interrupts.interrupted()) std::cout << " (interrupted)";
    std::cout << "\n";
  }
  for (const std::uint32_t sequence : stats.drops_not_reached) {
    std::cerr << "warning: --drop " << sequence << " was not applied: the stream had "
              << stats.datagrams_numbered << " datagrams (sequence numbers 0.."
              << stats.datagrams_numbered - 1 << ")\n";
  }
  return interrupts.exitCode();
}

}  // namespace tagflow::cli
