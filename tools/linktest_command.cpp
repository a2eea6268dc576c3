// `tagflow linktest`: like iperf3, for tag streams. The sending side replays the demo stream,
// encoded once, for a duration; the receiving side is the UDP source, decoding into blocks.
// Both sides run here (local), or one of them (send, receive). Prints a table of rates and
// counts, the loss the receiver saw beside the system's own counters (socket, interface, UDP)
// so that a loss can be placed, and warns when the interface MTU is below the stream's.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <type_traits>
#include <variant>

#include "commands.hpp"
#include "interrupts.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/io/udp/interface.hpp"
#include "tagflow/io/udp/stream_sender.hpp"
#include "tagflow/io/udp/stream_source.hpp"

namespace tagflow::cli {

namespace {

struct SideFigures {
  double seconds = 0;
  std::uint64_t datagrams = 0;
  std::uint64_t tags = 0;
  std::uint64_t bytes = 0;

  double mtagsPerSecond() const {
    return seconds > 0 ? static_cast<double>(tags) / seconds * 1e-6 : 0;
  }
  double gbitPerSecond() const {
    return seconds > 0 ? static_cast<double>(bytes) * 8 / seconds * 1e-9 : 0;
  }
};

EncodedStream demoStream(std::size_t tags, int mtu) {
  SyntheticConfig config;
  config.channels = demoChannels();
  config.block_size = 1 << 16;
  SyntheticSource source(config);
  std::vector<Tag> stream;
  stream.reserve(tags);
  BlockBuffer block;
  timestamp_t end = 0;
  while (stream.size() < tags && source.next(block)) {
    for (const Tag& tag : block.tags) {
      if (stream.size() == tags) break;
      stream.push_back(tag);
    }
    end = block.end_time;
  }
  if (stream.size() == tags) end = stream.back().time + 1;
  return EncodedStream(stream, 0, end, mtu);
}

std::string cpuText(int cpu) {
  return cpu < 0 ? std::string("any") : std::to_string(cpu);
}

void printRow(std::ostream& out, const std::string& side, const SideFigures& f) {
  out << std::left << std::setw(10) << side << std::right << std::fixed << std::setprecision(3)
      << std::setw(10) << f.seconds << std::setw(13) << f.datagrams << std::setw(15) << f.tags
      << std::setprecision(1) << std::setw(11) << f.mtagsPerSecond() << std::setprecision(2)
      << std::setw(10) << f.gbitPerSecond() << "\n";
}

// Both ends of the test as the options ask for them.
struct Link {
  bool sends = false;
  bool receives = false;
  std::string address;
  std::unique_ptr<UdpStreamSender> sender;
  std::unique_ptr<UdpStreamSource> receiver;
  std::string interface;
  int interface_mtu = 0;
};

void checkOptions(const LinktestOptions& options) {
  if (!(options.duration_s > 0 && options.duration_s <= 86400)) {
    throw InvalidArgument(
        fmt::format("--duration {} s is invalid (valid: > 0 and <= 86400)", options.duration_s));
  }
  if (options.tags < 1000 || options.tags > (std::size_t{1} << 28)) {
    throw InvalidArgument(
        fmt::format("--tags {} is invalid (valid: 1000..268435456)", options.tags));
  }
  checkCpu(options.decode_cpu, "--decode-cpu");
}

Link openLink(const LinktestOptions& options) {
  Link link;
  link.sends = options.mode != "receive";
  link.receives = options.mode != "send";
  link.address = !options.address.empty()    ? options.address
                 : options.mode == "receive" ? "0.0.0.0"
                                             : "127.0.0.1";
  if (link.sends) {
    UdpSenderConfig config;
    config.address = link.address;
    config.port = options.port;
    config.mtu = options.mtu;
    if (options.rate) config.rate = *options.rate;
    config.cpu = options.sender_cpu;
    link.sender = std::make_unique<UdpStreamSender>(config);
  }
  if (link.receives) {
    UdpSourceConfig config;
    config.address = link.address;
    config.port = options.port;
    config.receive_cpu = options.receiver_cpu;
    config.receive_buffer_bytes = options.receive_buffer;
    // Local: the end marker ends the test; receiving alone: also a sender that went away.
    config.idle_timeout_s = options.mode == "local" ? 2.0 : 3.0;
    link.receiver = std::make_unique<UdpStreamSource>(config);
  }
  link.interface =
      !options.interface.empty() ? options.interface : (link.receives ? interfaceOf(link.address) : "");
  link.interface_mtu = interfaceMtu(link.interface);
  return link;
}

void printSetup(const LinktestOptions& options, const Link& link) {
  std::cout << "tagflow linktest: " << options.mode << ", "
            << (link.receives ? link.receiver->endpoint().text()
                              : link.address + ":" + std::to_string(options.port));
  if (link.sends) {
    std::cout << ", MTU " << options.mtu << " (" << options.mtu - wire::kIpUdpHeaderBytes
              << "-byte datagrams, " << link.sender->wordsPerDatagram() << " tags each), "
              << options.duration_s << " s, rate "
              << (options.rate ? formatRate(*options.rate) : std::string("as fast as possible"));
  }
  std::cout << "\nCPUs: " << (link.sends ? "sender " + cpuText(options.sender_cpu) + ", " : "")
            << (link.receives ? "receiving thread " + cpuText(options.receiver_cpu) +
                                    ", decoding thread " + cpuText(options.decode_cpu)
                              : "")
            << "\n";
  if (link.receives && link.sends && link.interface_mtu > 0 && link.interface_mtu < options.mtu) {
    std::cout << "warning: interface " << link.interface << " has MTU " << link.interface_mtu
              << ", below the stream MTU " << options.mtu
              << ": datagrams are fragmented (slow) or dropped; set it with: ip link set "
              << link.interface << " mtu " << options.mtu << "\n";
  }
}

// Sends on a thread of its own while this thread decodes what arrives; returns what was sent.
UdpSenderStats transfer(const LinktestOptions& options, Link& link) {
  std::unique_ptr<EncodedStream> stream;
  if (link.sends) {
    stream = std::make_unique<EncodedStream>(demoStream(options.tags, options.mtu));
    std::cout << "sending " << stream->datagrams() << " datagrams of " << options.tags
              << " demo-stream tags, round after round\n";
  }
  UdpSenderStats sent;
  std::exception_ptr sender_error;
  std::thread sending;
  if (link.sends) {
    sending = std::thread([&] {
      try {
        sent = link.sender->replay(*stream, options.duration_s);
      } catch (...) {
        sender_error = std::current_exception();
        if (link.receiver) link.receiver->requestStop();
      }
    });
  }
  if (link.receives) {
    pinCurrentThread(options.decode_cpu, "--decode-cpu");
    BlockBuffer block;
    block.storage.reserve(link.receiver->maxBlockTags());
    while (link.receiver->next(block)) {
    }
  }
  if (sending.joinable()) sending.join();
  if (sender_error) std::rethrow_exception(sender_error);
  return sent;
}

void printReceiverReport(const LinktestOptions& options, const Link& link,
                         const UdpReceiverStats& stats, const std::vector<LinkCounter>& changes) {
  std::cout << "(Gbit/s: UDP payload; tags: 16-byte records, 4 bytes each on the wire)\n\n"
            << "loss: " << stats.datagrams_lost << " datagrams (" << stats.events_lost
            << " tags) in " << stats.gaps << " gaps; duplicates " << stats.duplicates
            << ", reordered " << stats.reordered << ", late " << stats.late << ", malformed "
            << stats.malformed() << ", foreign " << stats.foreign << ", restarts " << stats.restarts
            << "\n"
            << "where: socket drops (SO_RXQ_OVFL) " << stats.socket_drops << ", receive ring full "
            << stats.ring_full << " times; ";
  if (link.interface.empty()) {
    std::cout << "interface unknown (pass --interface)";
  } else {
    std::cout << "interface " << link.interface << ":";
  }
  for (const LinkCounter& counter : changes) {
    if (counter.value >= 0 && counter.name != "rx_packets" && counter.name != "rx_bytes") {
      std::cout << " " << counter.name << " +" << counter.value;
    }
  }
  const std::uint64_t stream_mtu =
      stats.largest_datagram > 0 ? stats.largest_datagram + wire::kIpUdpHeaderBytes : 0;
  std::cout << "\nMTU in use: " << stream_mtu << " (largest datagram " << stats.largest_datagram
            << " bytes + 28)";
  if (link.interface_mtu > 0) {
    std::cout << "; interface " << link.interface << " MTU " << link.interface_mtu;
  }
  std::cout << "\n";
  if (link.interface_mtu > 0 && stream_mtu > static_cast<std::uint64_t>(link.interface_mtu)) {
    std::cout << "warning: the stream MTU " << stream_mtu << " exceeds the interface MTU "
              << link.interface_mtu << ": set it with: ip link set " << link.interface << " mtu "
              << stream_mtu << "\n";
  }
  if (stats.receive_buffer_bytes < options.receive_buffer) {
    std::cout << "note: the socket receive buffer is " << stats.receive_buffer_bytes
              << " bytes, not the " << options.receive_buffer
              << " asked for (run as root, or raise net.core.rmem_max)\n";
  }
}

nlohmann::json sideJson(const SideFigures& f) {
  return {{"seconds", f.seconds},
          {"datagrams", f.datagrams},
          {"tags", f.tags},
          {"bytes", f.bytes},
          {"mtags_per_s", f.mtagsPerSecond()},
          {"gbit_per_s", f.gbitPerSecond()}};
}

void writeJson(const LinktestOptions& options, const Link& link, const SideFigures& sender,
               const SideFigures& receiver, const UdpReceiverStats& stats,
               const std::vector<LinkCounter>& changes) {
  nlohmann::json json{
      {"mode", options.mode}, {"mtu", options.mtu}, {"duration_s", options.duration_s}};
  if (link.sends) json["sender"] = sideJson(sender);
  if (link.receives) {
    json["receiver"] = sideJson(receiver);
    nlohmann::json counters = nlohmann::json::object();
    const Parameters receiver_counters = stats.toParameters();
    for (const auto& [key, value] : receiver_counters.entries()) {
      if (key == "kind") continue;
      std::visit(
          [&](const auto& v) {
            if constexpr (std::is_arithmetic_v<std::decay_t<decltype(v)>>) counters[key] = v;
          },
          value);
    }
    json["receiver_counters"] = counters;
    nlohmann::json system = nlohmann::json::object();
    for (const LinkCounter& counter : changes) system[counter.name] = counter.value;
    json["system_counters"] = system;
    json["interface"] = link.interface;
    json["interface_mtu"] = link.interface_mtu;
  }
  std::ofstream out(options.json);
  out << json.dump() << "\n";
  out.close();
  if (!out)
    throw IoError("cannot write the figures to '" + options.json + "': " + std::strerror(errno));
}

}  // namespace

int linktestCommand(const LinktestOptions& options) {
  checkOptions(options);
  // Before the test, which may run for minutes.
  if (!options.json.empty()) checkOutputWritable(options.json, "figures");
  Link link = openLink(options);
  printSetup(options, link);
  const std::vector<LinkCounter> before = readLinkCounters(link.interface);
  Interrupts interrupts([&] {
    if (link.sender) link.sender->requestStop();
    if (link.receiver) link.receiver->requestStop();
  });
  const UdpSenderStats sent = transfer(options, link);
  const std::vector<LinkCounter> changes = counterChanges(before, readLinkCounters(link.interface));

  std::cout << "\n"
            << std::left << std::setw(10) << "side" << std::right << std::setw(10) << "seconds"
            << std::setw(13) << "datagrams" << std::setw(15) << "tags" << std::setw(11) << "MTags/s"
            << std::setw(10) << "Gbit/s"
            << "\n";
  SideFigures sender_figures, receiver_figures;
  if (link.sends) {
    sender_figures = {sent.seconds, sent.datagrams_sent, sent.events_sent, sent.bytes_sent};
    printRow(std::cout, "sender", sender_figures);
  }
  UdpReceiverStats stats;
  if (link.receives) {
    stats = link.receiver->stats();
    receiver_figures = {link.receiver->activeSeconds(), stats.datagrams_accepted, stats.tags,
                        stats.bytes_received};
    printRow(std::cout, "receiver", receiver_figures);
    printReceiverReport(options, link, stats, changes);
  }
  if (!options.json.empty()) {
    writeJson(options, link, sender_figures, receiver_figures, stats, changes);
  }
  return interrupts.exitCode();
}
}  // namespace tagflow::cli
