// `tagflow linktest`: like iperf3, for tag streams. The sending side replays the demo stream,
// encoded once, for a duration; the receiving side is the UDP source, decoding into blocks.
// Both sides run here (local), or one of them (send, receive). Prints a table of rates and
// counts, the loss the receiver saw beside the system's own counters (socket, interface, UDP)
// so that a loss can be placed, and warns when the interface MTU is below the stream's.
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

#include "commands.hpp"
#include "tagflow/core/error.hpp"
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

}  // namespace

int linktestCommand(const LinktestOptions& options) {
  const bool sends = options.mode != "receive";
  const bool receives = options.mode != "send";
  const std::string address = !options.address.empty()    ? options.address
                              : options.mode == "receive" ? "0.0.0.0"
                                                          : "127.0.0.1";
  if (!(options.duration_s > 0 && options.duration_s <= 86400)) {
    throw InvalidArgument("--duration " + std::to_string(options.duration_s) +
                          " s is invalid (valid: > 0 and <= 86400)");
  }
  if (options.tags < 1000 || options.tags > (std::size_t{1} << 28)) {
    throw InvalidArgument("--tags " + std::to_string(options.tags) +
                          " is invalid (valid: 1000..268435456)");
  }
  checkCpu(options.decode_cpu, "--decode-cpu");

  std::unique_ptr<UdpStreamSender> sender;
  if (sends) {
    UdpSenderConfig config;
    config.address = address;
    config.port = options.port;
    config.mtu = options.mtu;
    if (options.rate) config.rate = *options.rate;
    config.cpu = options.sender_cpu;
    sender = std::make_unique<UdpStreamSender>(config);
  }
  std::unique_ptr<UdpStreamSource> receiver;
  if (receives) {
    UdpSourceConfig config;
    config.address = address;
    config.port = options.port;
    config.receive_cpu = options.receiver_cpu;
    config.receive_buffer_bytes = options.receive_buffer;
    // Local: the end marker ends the test; receiving alone: also a sender that went away.
    config.idle_timeout_s = options.mode == "local" ? 2.0 : 3.0;
    receiver = std::make_unique<UdpStreamSource>(config);
  }
  const std::string interface =
      !options.interface.empty() ? options.interface : (receives ? interfaceOf(address) : "");
  const int interface_mtu = interfaceMtu(interface);

  std::cout << "tagflow linktest: " << options.mode << ", "
            << (receives ? receiver->endpoint().text()
                         : address + ":" + std::to_string(options.port));
  if (sends) {
    std::cout << ", MTU " << options.mtu << " (" << options.mtu - wire::kIpUdpHeaderBytes
              << "-byte datagrams, " << sender->wordsPerDatagram() << " tags each), "
              << options.duration_s << " s, rate "
              << (options.rate ? formatRate(*options.rate) : std::string("as fast as possible"));
  }
  std::cout << "\nCPUs: " << (sends ? "sender " + cpuText(options.sender_cpu) + ", " : "")
            << (receives ? "receiving thread " + cpuText(options.receiver_cpu) +
                               ", decoding thread " + cpuText(options.decode_cpu)
                         : "")
            << "\n";
  if (receives && interface_mtu > 0 && sends && interface_mtu < options.mtu) {
    std::cout << "warning: interface " << interface << " has MTU " << interface_mtu
              << ", below the stream MTU " << options.mtu
              << ": datagrams are fragmented (slow) or dropped; set it with: ip link set "
              << interface << " mtu " << options.mtu << "\n";
  }

  std::unique_ptr<EncodedStream> stream;
  if (sends) {
    stream = std::make_unique<EncodedStream>(demoStream(options.tags, options.mtu));
    std::cout << "sending " << stream->datagrams() << " datagrams of " << options.tags
              << " demo-stream tags, round after round\n";
  }
  const std::vector<LinkCounter> before = readLinkCounters(interface);

  UdpSenderStats sent;
  std::exception_ptr sender_error;
  std::thread sending;
  if (sends) {
    sending = std::thread([&] {
      try {
        sent = sender->replay(*stream, options.duration_s);
      } catch (...) {
        sender_error = std::current_exception();
        if (receiver) receiver->requestStop();
      }
    });
  }
  if (receives) {
    pinCurrentThread(options.decode_cpu, "--decode-cpu");
    BlockBuffer block;
    block.storage.reserve(receiver->maxBlockTags());
    while (receiver->next(block)) {
    }
  }
  if (sending.joinable()) sending.join();
  if (sender_error) std::rethrow_exception(sender_error);
  const std::vector<LinkCounter> changes = counterChanges(before, readLinkCounters(interface));

  std::cout << "\n"
            << std::left << std::setw(10) << "side" << std::right << std::setw(10) << "seconds"
            << std::setw(13) << "datagrams" << std::setw(15) << "tags" << std::setw(11) << "MTags/s"
            << std::setw(10) << "Gbit/s"
            << "\n";
  SideFigures sender_figures, receiver_figures;
  if (sends) {
    sender_figures = {sent.seconds, sent.datagrams_sent, sent.events_sent, sent.bytes_sent};
    printRow(std::cout, "sender", sender_figures);
  }
  UdpReceiverStats stats;
  if (receives) {
    stats = receiver->stats();
    receiver_figures = {receiver->activeSeconds(), stats.datagrams_accepted, stats.tags,
                        stats.bytes_received};
    printRow(std::cout, "receiver", receiver_figures);
    std::cout << "(Gbit/s: UDP payload; tags: 16-byte records, 4 bytes each on the wire)\n\n"
              << "loss: " << stats.datagrams_lost << " datagrams (" << stats.events_lost
              << " tags) in " << stats.gaps << " gaps; duplicates " << stats.duplicates
              << ", reordered " << stats.reordered << ", late " << stats.late << ", malformed "
              << stats.malformed() << ", foreign " << stats.foreign << "\n"
              << "where: socket drops (SO_RXQ_OVFL) " << stats.socket_drops
              << ", receive ring full " << stats.ring_full << " times; ";
    if (interface.empty()) {
      std::cout << "interface unknown (pass --interface)";
    } else {
      std::cout << "interface " << interface << ":";
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
    if (interface_mtu > 0) std::cout << "; interface " << interface << " MTU " << interface_mtu;
    std::cout << "\n";
    if (interface_mtu > 0 && stream_mtu > static_cast<std::uint64_t>(interface_mtu)) {
      std::cout << "warning: the stream MTU " << stream_mtu << " exceeds the interface MTU "
                << interface_mtu << ": set it with: ip link set " << interface << " mtu "
                << stream_mtu << "\n";
    }
    if (stats.receive_buffer_bytes < options.receive_buffer) {
      std::cout << "note: the socket receive buffer is " << stats.receive_buffer_bytes
                << " bytes, not the " << options.receive_buffer
                << " asked for (run as root, or raise net.core.rmem_max)\n";
    }
  }

  if (!options.json.empty()) {
    std::ofstream out(options.json);
    out << std::setprecision(9) << "{\"mode\": \"" << options.mode << "\", \"mtu\": " << options.mtu
        << ", \"duration_s\": " << options.duration_s;
    const auto side = [&](const char* name, const SideFigures& f) {
      out << ", \"" << name << "\": {\"seconds\": " << f.seconds
          << ", \"datagrams\": " << f.datagrams << ", \"tags\": " << f.tags
          << ", \"bytes\": " << f.bytes << ", \"mtags_per_s\": " << f.mtagsPerSecond()
          << ", \"gbit_per_s\": " << f.gbitPerSecond() << "}";
    };
    if (sends) side("sender", sender_figures);
    if (receives) {
      side("receiver", receiver_figures);
      const Parameters p = stats.toParameters();
      out << ", \"receiver_counters\": {";
      bool first = true;
      for (const auto& [key, value] : p.entries()) {
        if (key == "kind") continue;
        out << (first ? "" : ", ") << "\"" << key << "\": " << formatParameter(value);
        first = false;
      }
      out << "}, \"system_counters\": {";
      first = true;
      for (const LinkCounter& counter : changes) {
        out << (first ? "" : ", ") << "\"" << counter.name << "\": " << counter.value;
        first = false;
      }
      out << "}, \"interface\": \"" << interface << "\", \"interface_mtu\": " << interface_mtu;
    }
    out << "}\n";
    if (!out) throw IoError("cannot write " + options.json);
  }
  return 0;
}

}  // namespace tagflow::cli
