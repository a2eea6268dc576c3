// UdpStreamSender: the hardware emulator of the stream link. It encodes any Source into the
// wire format (udp_wire.hpp) and sends it to an IPv4 address and port, datagrams of at most
// the given MTU, batched with sendmmsg, paced to a target tag rate or as fast as possible.
// The stream begins with a start datagram and ends with an end-of-stream datagram, both
// without words and sent `marker_repeats` times with the same sequence number (the start's at
// once, the end's a few ms apart): one lost copy neither moves the stream's start, and with it
// every bin edge of the receiver's measurements, nor leaves the receiver waiting for the end.
// For tests, chosen sequence numbers can be dropped instead of sent (injected loss).
//
// replay() sends a stream encoded once beforehand, over and over, each round shifted by the
// stream's span: the encoding costs nothing while sending, as in the hardware, so a link test
// measures the link and the receiver, not the emulator's encoder.
//
// send() and replay() run in the calling thread, which `cpu` pins.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "tagflow/core/source.hpp"
#include "tagflow/io/udp/socket.hpp"
#include "tagflow/io/udp/wire.hpp"

namespace tagflow {

inline constexpr double kUnpaced = std::numeric_limits<double>::infinity();

struct UdpSenderConfig {
  std::string address = "127.0.0.1";
  int port = 4750;
  std::string local{};              // "ADDRESS:PORT" to send from; empty: any
  int mtu = 9000;                   // of the link: datagrams are at most mtu - 28 bytes
  double rate = kUnpaced;           // events (tags) per second; kUnpaced: as fast as possible
  int cpu = -1;                     // pin the sending thread; -1: anywhere
  std::vector<std::uint32_t> drop;  // sequence numbers to drop instead of sending
  std::size_t batch = 32;           // datagrams per sendmmsg call
  int send_buffer_bytes = 4 << 20;
  int marker_repeats = 3;
  double flush_interval_s = 0.001;  // longest a started datagram waits for more tags

  // Throws InvalidArgument naming the first bad value and its valid range.
  void validate() const;
};

struct UdpSenderStats {
  std::uint64_t datagrams_sent = 0;      // start and end copies included
  std::uint64_t bytes_sent = 0;          // UDP payload
  std::uint64_t events_sent = 0;         // time tags plus missed-event counts
  std::uint64_t datagrams_dropped = 0;   // on request
  std::uint64_t datagrams_numbered = 0;  // each of the stream's once, dropped or not
  std::uint64_t events_dropped = 0;
  std::uint64_t refused = 0;  // sends answered by "connection refused": nobody listened yet
  double seconds = 0;         // from the start of the first send to the end of the last
  // Sequence numbers asked to be dropped that the stream never reached (it was shorter).
  std::vector<std::uint32_t> drops_not_reached;
};

// A stream encoded once, for replay(): datagram i is header i followed by its words.
class EncodedStream {
 public:
  // Throws DataError when the stream cannot be encoded, InvalidArgument for a bad MTU or a
  // stream that ends inside an overflow interval (its rounds could not follow each other).
  EncodedStream(std::span<const Tag> tags, timestamp_t begin_time, timestamp_t end_time, int mtu);

  std::size_t datagrams() const { return headers_.size(); }
  const wire::Header& header(std::size_t i) const { return headers_[i]; }
  std::uint32_t events(std::size_t i) const { return events_[i]; }
  std::span<const std::uint32_t> words(std::size_t i) const {
    return std::span<const std::uint32_t>(words_).subspan(offsets_[i], headers_[i].word_count);
  }
  timestamp_t span() const { return end_time_ - begin_time_; }
  timestamp_t beginTime() const { return begin_time_; }
  timestamp_t endTime() const { return end_time_; }
  int mtu() const { return mtu_; }

 private:
  std::vector<std::uint32_t> words_;
  std::vector<std::size_t> offsets_;
  std::vector<wire::Header> headers_;
  std::vector<std::uint32_t> events_;
  timestamp_t begin_time_;
  timestamp_t end_time_;
  int mtu_;
};

class UdpStreamSender {
 public:
  // Creates the socket. Throws InvalidArgument for a bad configuration, IoError when the
  // system refuses.
  explicit UdpStreamSender(UdpSenderConfig config);

  // Sends the source's stream until it ends, or until `duration_ps` of stream time (cut
  // exactly), or requestStop(); then the end-of-stream datagram.
  UdpSenderStats send(Source& source, timestamp_t duration_ps = -1);
  // Sends `stream` round after round for `seconds` of wall time (or until requestStop()),
  // then the end-of-stream datagram.
  UdpSenderStats replay(const EncodedStream& stream, double seconds);

  void requestStop() { stop_.store(true, std::memory_order_relaxed); }
  // Safe from any thread, also while sending.
  UdpSenderStats stats() const;
  std::size_t wordsPerDatagram() const { return words_per_datagram_; }
  const UdpSenderConfig& config() const { return config_; }

 private:
  class Batch;
  using Clock = std::chrono::steady_clock;

  // Queues one datagram: `header` gets the next sequence number and the running event count.
  // Returns false when the datagram is to be dropped.
  bool stamp(wire::Header& header, std::uint32_t events);
  void sendQueued(Batch& batch);
  void sendEnd(Batch& batch, timestamp_t end_time, bool in_overflow);
  void pace();
  void transmit(std::span<mmsghdr> messages);

  UdpSenderConfig config_;
  std::size_t words_per_datagram_;
  SocketFd socket_;
  std::vector<std::uint32_t> drop_;  // sorted
  wire::DatagramNumbering numbering_;
  std::uint64_t events_queued_ = 0;  // for pacing
  bool started_ = false;
  Clock::time_point start_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> datagrams_sent_{0};
  std::atomic<std::uint64_t> bytes_sent_{0};
  std::atomic<std::uint64_t> events_sent_{0};
  std::atomic<std::uint64_t> datagrams_dropped_{0};
  std::atomic<std::uint64_t> events_dropped_{0};
  std::atomic<std::uint64_t> refused_{0};
  std::atomic<std::uint64_t> datagrams_numbered_{0};  // sequence numbers given, dropped or not
  std::atomic<std::int64_t> first_send_ns_{0};
  std::atomic<std::int64_t> last_send_ns_{0};
};

}  // namespace tagflow
