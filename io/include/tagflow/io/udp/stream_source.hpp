// UdpStreamSource: receives a tag stream sent in the wire format (udp_wire.hpp) and serves it
// as blocks. A receiving thread (pinnable to a CPU) drains the socket with recvmmsg into a
// ring of datagram slots; next() decodes them, in sequence order, straight into the block.
//
// Sequence numbers are checked from the sender's first datagram (number 0): datagrams the
// receiver never saw before the first it gets are loss like any other. A datagram that
// arrives early is held in a reorder window of
// `reorder_window` datagrams; a missing one is declared lost when the window is full, the
// stream ends, or nothing arrives for `block_latency_s`. A loss becomes an overflow interval
// from just after the last tag received to the first tag after the gap, with the lost event
// count (told by the sender's running count) as MissedEvents on channel 0: the wire cannot say
// which channels lost them. Duplicates, datagrams arriving after being declared lost, datagrams
// from another sender than `sender` (or the first one) and malformed ones are counted and
// dropped. A named sender gets a socket of its own, connected to it, which the kernel fills
// with its datagrams only: a flood from elsewhere lands in a second, small socket on the same
// port, where it is counted, and cannot crowd out the stream. The
// stream ends at the sender's end-of-stream datagram, after `idle_timeout_s` without data (if set),
// or on requestStop(). While nothing arrives it reports, through `notice`, that it is waiting and
// where. Construction binds the socket: a port in use is an IoError.
#pragma once

#include <netinet/in.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tagflow/core/parameter_schema.hpp"
#include "tagflow/core/parameters.hpp"
#include "tagflow/core/source.hpp"
#include "tagflow/io/udp/datagram_ring.hpp"
#include "tagflow/io/udp/socket.hpp"
#include "tagflow/io/udp/wire.hpp"

namespace tagflow {

struct UdpSourceConfig {
  std::string address = "0.0.0.0";  // local IPv4 address to bind
  int port = 4750;                  // 0: any free port (see UdpStreamSource::port())
  // "ADDRESS:PORT" of the only sender accepted; empty: the sender of the first datagram with
  // the wire format's magic and version.
  std::string sender{};
  std::size_t block_size = 16384;  // tags per block the source aims for
  int receive_buffer_bytes = 64 << 20;
  std::size_t ring_datagrams = 4096;  // between the receiving and the decoding thread
  int receive_cpu = -1;               // pin the receiving thread; -1: anywhere
  std::size_t reorder_window = 8;     // datagrams held while waiting for a missing one
  double idle_timeout_s = 0;          // end after this long without data; 0: wait for the end
  double block_latency_s = 0.002;     // hand out a partial block after this long without data
  double notice_interval_s = 10;      // repeat "waiting" notices this often
  std::function<void(const std::string&)> notice{};  // default: a line on stderr

  // Throws InvalidArgument naming the first bad value and its valid range.
  void validate() const;
};

// The configuration keys of `[source] kind = "udp"` (docs/configuration.md); throws
// InvalidArgument naming an unknown key or a bad value.
UdpSourceConfig udpSourceConfigFrom(const Parameters& parameters);
const ParameterSchema& udpSourceSchema();

struct UdpReceiverStats {
  std::uint64_t datagrams_received = 0;  // everything the socket delivered
  std::uint64_t bytes_received = 0;
  std::uint64_t datagrams_accepted = 0;  // decoded into the stream
  std::uint64_t tags = 0;                // records decoded from accepted datagrams
  std::uint64_t events = 0;              // time tags plus missed-event counts among them
  std::uint64_t datagrams_lost = 0;
  std::uint64_t events_lost = 0;  // the sender's count of what the lost datagrams held
  std::uint64_t gaps = 0;         // overflow intervals inserted for losses
  std::uint64_t duplicates = 0;
  std::uint64_t reordered = 0;       // arrived after a later one, still in time: used
  std::uint64_t late = 0;            // arrived after being declared lost: dropped
  std::uint64_t foreign = 0;         // from another sender: dropped (or by the kernel)
  std::uint64_t truncated = 0;       // larger than the largest datagram of the format
  std::uint64_t time_backwards = 0;  // base time before the stream
  std::uint64_t restarts = 0;        // the sender's numbering started again
  std::array<std::uint64_t, wire::kStatusCount> invalid{};  // by wire::Status
  std::uint64_t socket_drops = 0;  // dropped by the kernel, socket buffer full (SO_RXQ_OVFL)
  std::uint64_t ring_full = 0;     // times the receiving thread found no free slot
  std::uint64_t first_sequence = 0;
  std::uint64_t largest_datagram = 0;     // bytes: the sender's MTU is this + 28
  std::int64_t receive_buffer_bytes = 0;  // what the kernel granted

  std::uint64_t malformed() const;
  // Every counter under its name, for the results file.
  Parameters toParameters() const;
};

class UdpStreamSource : public Source {
 public:
  explicit UdpStreamSource(UdpSourceConfig config);
  ~UdpStreamSource() override;
  UdpStreamSource(const UdpStreamSource&) = delete;
  UdpStreamSource& operator=(const UdpStreamSource&) = delete;

  bool next(BlockBuffer& out) override;
  std::size_t maxBlockTags() const override { return capacity_; }
  std::string describe() const override;

  // Safe from any thread.
  UdpReceiverStats stats() const;
  void requestStop() override;

  int port() const { return bound_.port; }
  const UdpEndpoint& endpoint() const { return bound_; }
  // Wall-clock seconds from the first to the last datagram accepted so far.
  double activeSeconds() const;

 private:
  enum Counter : std::size_t {
    kReceived,
    kBytes,
    kAccepted,
    kTags,
    kEvents,
    kLost,
    kEventsLost,
    kGaps,
    kDuplicates,
    kReordered,
    kLate,
    kForeign,
    kForeignDrops,  // the foreign socket's own drops: a total, stored
    kTruncated,
    kTimeBackwards,
    kSocketDrops,
    kRingFull,
    kLargest,
    kRestarts,
    kInvalid,  // kStatusCount counters follow
    kCounterCount = kInvalid + wire::kStatusCount,
  };
  struct Stashed {
    bool used = false;
    wire::Header header;
    std::vector<std::byte> bytes;
  };
  using Clock = std::chrono::steady_clock;

  void receiveLoop();
  // Counts what reached the socket for other senders, without waiting.
  void countForeign();
  void handleDatagram(std::span<const std::byte> bytes, std::uint8_t slot_flags, BlockBuffer& out);
  bool process(std::span<const std::byte> bytes, const wire::Header& header, BlockBuffer& out);
  // Decodes into scratch_; a malformed datagram is counted and false returned.
  bool validContent(std::span<const std::byte> bytes, const wire::Header& header);
  // The checks process() makes that do not depend on the datagrams before it: made before a
  // datagram ahead is held or lets its sequence number declare others lost.
  bool validAhead(std::span<const std::byte> bytes, const wire::Header& header);
  // Resolves the oldest missing datagram: processes it from the stash or declares it lost.
  void settleOne(BlockBuffer& out);
  void settleUntil(std::uint32_t sequence, BlockBuffer& out);
  // Processes held datagrams while the next one expected is among them.
  void drainStash(BlockBuffer& out);
  // Settles until nothing is held: the end of the stream or of a quiet spell.
  void settleStash(BlockBuffer& out);
  // At the end of the stream: marks datagrams declared lost that no datagram used followed.
  void closeTailLoss(BlockBuffer& out);
  // A start datagram of a sender that began its numbering again (restarted from the same
  // address): whether it is one, and going on with its stream or ending at it.
  bool isRestart(const wire::Header& header) const;
  void restart(std::span<const std::byte> bytes, const wire::Header& header, BlockBuffer& out);
  bool isStashed(std::uint32_t sequence) const;
  bool wasSeen(std::uint32_t sequence) const;
  void ensureRoom(BlockBuffer& out, std::size_t tags);
  void maybeNotice(Clock::time_point now);
  void count(Counter counter, std::uint64_t amount = 1) {
    counters_[counter].fetch_add(amount, std::memory_order_relaxed);
  }

  UdpSourceConfig config_;
  UdpEndpoint bound_;
  SocketFd socket_;
  SocketFd foreign_socket_;       // with a named sender: everything else sent to the port
  sockaddr_in sender_address_{};  // the named sender, parsed once
  std::size_t capacity_;
  DatagramRing ring_;
  std::array<std::atomic<std::uint64_t>, kCounterCount> counters_{};
  std::atomic<bool> stop_{false};
  std::atomic<int> receive_error_{0};
  std::int64_t receive_buffer_granted_ = 0;
  std::thread receiver_;

  // Decoding side: used by the thread that calls next().
  std::size_t filled_ = 0;  // records in the block being built
  bool started_ = false;    // a datagram has been seen that decodes
  bool any_processed_ = false;
  bool ended_ = false;
  bool finished_ = false;
  timestamp_t block_begin_ = 0;
  timestamp_t position_ = 0;  // the earliest time the next record may have
  timestamp_t end_time_ = 0;
  std::uint32_t expected_sequence_ = 0;
  std::uint32_t expected_events_ = 0;
  std::uint32_t newest_sequence_ = 0;  // the highest sequence number accepted or held
  bool in_overflow_ = false;           // of the stream handed out
  std::uint64_t pending_lost_ = 0;     // declared lost, overflow marks not yet written
  std::vector<Stashed> stash_;
  std::size_t stashed_ = 0;
  std::uint64_t used_or_held_ = 0;          // datagrams used or held so far
  std::vector<Tag> scratch_;                // for checking a datagram before holding it
  std::array<std::uint64_t, 1024> seen_{};  // (1 << 32 | sequence) of recent accepted ones
  Clock::time_point waiting_since_;         // construction, then the last datagram used or held
  Clock::time_point last_notice_;
  // A sender restarted: the base time of the start datagram used, whether the next datagram
  // used follows a restart (an interval first), and why the stream cannot follow one.
  bool start_used_ = false;
  timestamp_t start_time_ = 0;
  bool restarting_ = false;
  std::string restart_error_;  // thrown once the stream received has ended
  std::atomic<std::uint64_t> first_sequence_{0};
  std::atomic<std::int64_t> first_accepted_ns_{0};
  std::atomic<std::int64_t> last_accepted_ns_{0};
};

}  // namespace tagflow
