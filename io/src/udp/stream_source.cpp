#include "tagflow/io/udp/stream_source.hpp"

#include <arpa/inet.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <sstream>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

constexpr std::size_t kBatch = 64;
constexpr std::size_t kMaxReorderWindow = 64;
constexpr std::uint16_t kMaxMissedPerTag = 0xFFFF;
constexpr auto kPollInterval = std::chrono::milliseconds(100);

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool samePeer(const sockaddr_in& a, const sockaddr_in& b) {
  return a.sin_addr.s_addr == b.sin_addr.s_addr && a.sin_port == b.sin_port;
}

// A flood from elsewhere needs no room: it is only counted.
constexpr int kForeignBufferBytes = 256 << 10;

// A UDP socket bound to `address`; `shared` lets the stream's and the foreign socket share
// the port (SO_REUSEPORT: only sockets of the same user can join, and only if they ask).
SocketFd boundSocket(const sockaddr_in& address, bool shared) {
  SocketFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) throw IoError("udp source: cannot create a socket: " + systemErrorText(errno));
  const int on = 1;
  if (shared && setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0) {
    throw IoError("udp source: cannot share the port with the foreign-datagram socket: " +
                  systemErrorText(errno));
  }
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &address.sin_addr, text, sizeof text);
    throw IoError("udp source: cannot bind " + std::string(text) + ":" +
                  std::to_string(ntohs(address.sin_port)) + ": " + systemErrorText(error) +
                  (error == EADDRINUSE ? " (another program receives on this port)" : ""));
  }
  return fd;
}

// The magic and version of the wire format: what a stream's sender sends.
bool ofTheWireFormat(const std::byte* bytes, std::size_t length) {
  wire::Header header;
  const wire::Status status = wire::parseHeader(std::span<const std::byte>(bytes, length), header);
  return status != wire::Status::TooShort && status != wire::Status::BadMagic &&
         status != wire::Status::BadVersion;
}

UdpSourceConfig validated(UdpSourceConfig config) {
  config.validate();
  return config;
}

// Whole seconds, or tenths below ten seconds: a timeout of 0.5 s must not read "1 s".
std::string formatSeconds(double seconds) {
  std::ostringstream out;
  out << (seconds < 10 ? std::round(seconds * 10) / 10 : std::round(seconds)) << " s";
  return out.str();
}

}  // namespace

void UdpSourceConfig::validate() const {
  socketAddress({address, port}, "udp source", true);
  if (!sender.empty())
    socketAddress(parseEndpoint(sender, "udp source sender"), "udp source sender");
  if (block_size < 1 || block_size > (std::size_t{1} << 26)) {
    throw InvalidArgument("udp source: block_size " + std::to_string(block_size) +
                          " is invalid (valid: 1..67108864)");
  }
  if (receive_buffer_bytes < 65536) {
    throw InvalidArgument("udp source: receive_buffer " + std::to_string(receive_buffer_bytes) +
                          " bytes is invalid (valid: 65536..2147483647)");
  }
  if (ring_datagrams < 2 * kBatch || ring_datagrams > (std::size_t{1} << 20)) {
    throw InvalidArgument("udp source: ring_datagrams " + std::to_string(ring_datagrams) +
                          " is invalid (valid: 128..1048576)");
  }
  checkCpu(receive_cpu, "udp source receive_cpu");
  if (reorder_window > kMaxReorderWindow) {
    throw InvalidArgument("udp source: reorder_window " + std::to_string(reorder_window) +
                          " is invalid (valid: 0..64 datagrams)");
  }
  if (!(idle_timeout_s >= 0 && idle_timeout_s <= 1e6)) {
    throw InvalidArgument("udp source: idle_timeout_s " + std::to_string(idle_timeout_s) +
                          " is invalid (valid: 0 to wait for the sender's end, or up to 1e6)");
  }
  if (!(block_latency_s > 0 && block_latency_s <= 10)) {
    throw InvalidArgument("udp source: block_latency_s " + std::to_string(block_latency_s) +
                          " is invalid (valid: > 0 and <= 10)");
  }
  if (!(notice_interval_s > 0)) {
    throw InvalidArgument("udp source: notice_interval_s " + std::to_string(notice_interval_s) +
                          " is invalid (valid: > 0)");
  }
}

const ParameterSchema& udpSourceSchema() {
  static const ParameterSchema schema(
      "udp",
      "a stream received over UDP in the tagflow wire format (tagflow stream send, hardware)",
      {ParameterSpec::text("address")
           .byDefault(std::string("0.0.0.0"))
           .help("local IPv4 address to receive on (0.0.0.0: all)"),
       ParameterSpec::integer("port")
           .atLeast(0)
           .atMost(65535)
           .byDefault(std::int64_t{4750})
           .help("UDP port (0: any free port)"),
       ParameterSpec::text("sender")
           .byDefault(std::string())
           .help("ADDRESS:PORT of the only sender accepted (empty: the sender of the first "
                 "datagram of the wire format)"),
       ParameterSpec::integer("block_size")
           .atLeast(1)
           .atMost(1 << 26)
           .byDefault(std::int64_t{16384})
           .help("tags per block"),
       ParameterSpec::integer("receive_buffer")
           .unit("bytes")
           .atLeast(65536)
           .atMost(2147483647)
           .byDefault(std::int64_t{64 << 20})
           .help("socket receive buffer"),
       ParameterSpec::integer("ring_datagrams")
           .atLeast(2 * kBatch)
           .atMost(1 << 20)
           .byDefault(std::int64_t{4096})
           .help("datagrams between receiving and decoding"),
       ParameterSpec::integer("receive_cpu")
           .atLeast(-1)
           .atMost(65535)
           .byDefault(std::int64_t{-1})
           .help("pin the receiving thread to this CPU (-1: any)"),
       ParameterSpec::integer("reorder_window")
           .atLeast(0)
           .atMost(static_cast<double>(kMaxReorderWindow))
           .byDefault(std::int64_t{8})
           .help("datagrams held to put reordered ones back"),
       ParameterSpec::real("idle_timeout_s")
           .unit("s")
           .atLeast(0)
           .byDefault(0.0)
           .help("end after this long without data once the first datagram came (0: wait for the "
                 "end of the stream)")});
  return schema;
}

UdpSourceConfig udpSourceConfigFrom(const Parameters& given) {
  const Parameters p = udpSourceSchema().validate(given, "source 'udp'");
  UdpSourceConfig config;
  config.address = p.getString("address");
  config.port = static_cast<int>(p.getInt("port"));
  config.sender = p.getString("sender");
  config.block_size = static_cast<std::size_t>(p.getInt("block_size"));
  config.receive_buffer_bytes = static_cast<int>(p.getInt("receive_buffer"));
  config.ring_datagrams = static_cast<std::size_t>(p.getInt("ring_datagrams"));
  config.receive_cpu = static_cast<int>(p.getInt("receive_cpu"));
  config.reorder_window = static_cast<std::size_t>(p.getInt("reorder_window"));
  config.idle_timeout_s = p.getDouble("idle_timeout_s");
  config.validate();
  return config;
}

std::uint64_t UdpReceiverStats::malformed() const {
  std::uint64_t total = truncated + time_backwards;
  for (std::uint64_t count : invalid) total += count;
  return total;
}

Parameters UdpReceiverStats::toParameters() const {
  const auto value = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
  Parameters p{{"kind", std::string("udp")},
               {"datagrams_received", value(datagrams_received)},
               {"bytes_received", value(bytes_received)},
               {"datagrams_accepted", value(datagrams_accepted)},
               {"tags", value(tags)},
               {"events", value(events)},
               {"datagrams_lost", value(datagrams_lost)},
               {"events_lost", value(events_lost)},
               {"gaps", value(gaps)},
               {"duplicates", value(duplicates)},
               {"reordered", value(reordered)},
               {"late", value(late)},
               {"foreign", value(foreign)},
               {"restarts", value(restarts)},
               {"malformed", value(malformed())},
               {"malformed_truncated", value(truncated)},
               {"malformed_time_backwards", value(time_backwards)}};
  for (std::size_t i = 1; i < invalid.size(); ++i) {
    p.set("malformed_" + std::string(wire::statusName(static_cast<wire::Status>(i))),
          value(invalid[i]));
  }
  p.set("socket_drops", value(socket_drops));
  p.set("ring_full", value(ring_full));
  p.set("first_sequence", value(first_sequence));
  p.set("largest_datagram_bytes", value(largest_datagram));
  p.set("receive_buffer_bytes", receive_buffer_bytes);
  return p;
}

UdpStreamSource::UdpStreamSource(UdpSourceConfig config)
    : config_(validated(std::move(config))),
      capacity_(config_.block_size + wire::kMaxWords + 64),
      ring_(config_.ring_datagrams) {
  if (!config_.notice) {
    config_.notice = [](const std::string& line) { std::cerr << "udp source: " << line << "\n"; };
  }
  const sockaddr_in address = socketAddress({config_.address, config_.port}, "udp source", true);
  const bool named_sender = !config_.sender.empty();
  sockaddr_in stream_address = address;
  if (named_sender) {
    // The two sockets share the port, which would also let another receiver of this user
    // join them: a plain bind first says whether the port is free (and picks one for port 0).
    const SocketFd probe = boundSocket(address, false);
    socklen_t probe_length = sizeof stream_address;
    getsockname(probe.get(), reinterpret_cast<sockaddr*>(&stream_address), &probe_length);
  }
  socket_ = boundSocket(stream_address, named_sender);
  receive_buffer_granted_ = setSocketBuffer(socket_.get(), true, config_.receive_buffer_bytes);
  const int on = 1;
  if (setsockopt(socket_.get(), SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on) != 0) {
    throw IoError("udp source: cannot enable SO_RXQ_OVFL: " + systemErrorText(errno));
  }
  const timeval poll{
      0, static_cast<suseconds_t>(
             std::chrono::duration_cast<std::chrono::microseconds>(kPollInterval).count())};
  setsockopt(socket_.get(), SOL_SOCKET, SO_RCVTIMEO, &poll, sizeof poll);
  sockaddr_in local{};
  socklen_t length = sizeof local;
  getsockname(socket_.get(), reinterpret_cast<sockaddr*>(&local), &length);
  bound_ = UdpEndpoint{config_.address, ntohs(local.sin_port)};
  if (named_sender) {
    // The kernel gives a datagram to the socket connected to its sender before an unconnected
    // one on the same port; datagrams that reach the stream's socket before the connection
    // are still sorted out by the receiving thread.
    foreign_socket_ = boundSocket(local, true);
    setSocketBuffer(foreign_socket_.get(), true, kForeignBufferBytes);
    sender_address_ =
        socketAddress(parseEndpoint(config_.sender, "udp source sender"), "udp source sender");
    if (::connect(socket_.get(), reinterpret_cast<const sockaddr*>(&sender_address_),
                  sizeof sender_address_) != 0) {
      throw IoError("udp source: cannot restrict the stream to sender " + config_.sender + ": " +
                    systemErrorText(errno));
    }
  }
  stash_.resize(config_.reorder_window);
  for (auto& slot : stash_) slot.bytes.resize(DatagramRing::kSlotBytes);
  waiting_since_ = Clock::now();
  // receive_cpu was checked above: the thread pins itself, where an error would come too late.
  receiver_ = std::thread([this] { receiveLoop(); });
}

UdpStreamSource::~UdpStreamSource() {
  stop_.store(true, std::memory_order_relaxed);
  if (receiver_.joinable()) receiver_.join();
}

std::string UdpStreamSource::describe() const {
  std::ostringstream out;
  out << "udp address=" << bound_.address << " port=" << bound_.port
      << " block_size=" << config_.block_size << " receive_buffer=" << receive_buffer_granted_
      << " reorder_window=" << config_.reorder_window;
  if (!config_.sender.empty()) out << " sender=" << config_.sender;
  if (config_.receive_cpu >= 0) out << " receive_cpu=" << config_.receive_cpu;
  if (config_.idle_timeout_s > 0) out << " idle_timeout_s=" << config_.idle_timeout_s;
  return out.str();
}

void UdpStreamSource::requestStop() {
  stop_.store(true, std::memory_order_relaxed);
  ring_.wakeConsumer();
}

UdpReceiverStats UdpStreamSource::stats() const {
  const auto get = [&](std::size_t counter) {
    return counters_[counter].load(std::memory_order_relaxed);
  };
  UdpReceiverStats s;
  s.datagrams_received = get(kReceived);
  s.bytes_received = get(kBytes);
  s.datagrams_accepted = get(kAccepted);
  s.tags = get(kTags);
  s.events = get(kEvents);
  s.datagrams_lost = get(kLost);
  s.events_lost = get(kEventsLost);
  s.gaps = get(kGaps);
  s.duplicates = get(kDuplicates);
  s.reordered = get(kReordered);
  s.late = get(kLate);
  s.foreign = get(kForeign) + get(kForeignDrops);
  s.truncated = get(kTruncated);
  s.time_backwards = get(kTimeBackwards);
  s.restarts = get(kRestarts);
  for (std::size_t i = 0; i < wire::kStatusCount; ++i) s.invalid[i] = get(kInvalid + i);
  s.socket_drops = get(kSocketDrops);
  s.ring_full = get(kRingFull);
  s.largest_datagram = get(kLargest);
  s.first_sequence = first_sequence_.load(std::memory_order_relaxed);
  s.receive_buffer_bytes = receive_buffer_granted_;
  return s;
}

double UdpStreamSource::activeSeconds() const {
  const std::int64_t first = first_accepted_ns_.load(std::memory_order_relaxed);
  const std::int64_t last = last_accepted_ns_.load(std::memory_order_relaxed);
  return first == 0 ? 0.0 : static_cast<double>(last - first) * 1e-9;
}

void UdpStreamSource::receiveLoop() {
  try {
    pinCurrentThread(config_.receive_cpu, "udp source receive_cpu");
  } catch (const std::exception&) {
    receive_error_.store(EINVAL, std::memory_order_relaxed);
    stop_.store(true, std::memory_order_release);
    ring_.wakeConsumer();
    return;
  }
  std::array<mmsghdr, kBatch> messages{};
  std::array<iovec, kBatch> vectors{};
  std::array<sockaddr_in, kBatch> peers{};
  struct alignas(cmsghdr) Control {
    std::byte bytes[CMSG_SPACE(sizeof(std::uint32_t))];
  };
  std::array<Control, kBatch> controls{};
  // A named sender is the peer from the start; otherwise the sender of the first datagram of
  // the wire format (anything else before it is foreign: one stray datagram must not decide).
  sockaddr_in stream_peer = sender_address_;
  bool have_peer = !config_.sender.empty();
  bool was_full = false;
  std::uint64_t largest = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const std::size_t room = std::min(ring_.writable(), kBatch);
    if (room == 0) {
      if (!was_full) count(kRingFull);
      was_full = true;
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      continue;
    }
    was_full = false;
    for (std::size_t j = 0; j < room; ++j) {
      vectors[j] = iovec{ring_.writeSlot(j), DatagramRing::kSlotBytes};
      msghdr& header = messages[j].msg_hdr;
      header.msg_name = &peers[j];
      header.msg_namelen = sizeof peers[j];
      header.msg_iov = &vectors[j];
      header.msg_iovlen = 1;
      header.msg_control = controls[j].bytes;
      header.msg_controllen = sizeof controls[j].bytes;
      header.msg_flags = 0;
    }
    const int received = recvmmsg(socket_.get(), messages.data(), static_cast<unsigned>(room),
                                  MSG_WAITFORONE, nullptr);
    if (foreign_socket_.get() >= 0) countForeign();
    if (received < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      receive_error_.store(errno, std::memory_order_relaxed);
      stop_.store(true, std::memory_order_release);
      ring_.wakeConsumer();
      return;
    }
    std::uint64_t bytes = 0;
    std::size_t kept = 0;
    std::uint64_t foreign = 0;
    for (std::size_t j = 0; j < static_cast<std::size_t>(received); ++j) {
      const msghdr& header = messages[j].msg_hdr;
      const std::uint32_t length = messages[j].msg_len;
      bytes += length;
      const sockaddr_in& peer = peers[j];
      if (!have_peer && ofTheWireFormat(ring_.writeSlot(j), length)) {
        stream_peer = peer;
        have_peer = true;
      }
      if (samePeer(peer, stream_peer)) {
        // Slots stay contiguous: a datagram after a foreign one moves down into its slot.
        if (kept != j) std::memcpy(ring_.writeSlot(kept), ring_.writeSlot(j), length);
        DatagramRing::SlotInfo& info = ring_.writeInfo(kept++);
        info.length = length;
        info.flags = (header.msg_flags & MSG_TRUNC) != 0 ? DatagramRing::kTruncated : 0;
        largest = std::max<std::uint64_t>(largest, length);
      } else {
        ++foreign;
      }
      for (cmsghdr* c = CMSG_FIRSTHDR(&header); c != nullptr;
           c = CMSG_NXTHDR(const_cast<msghdr*>(&header), c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
          std::uint32_t drops;
          std::memcpy(&drops, CMSG_DATA(c), sizeof drops);
          counters_[kSocketDrops].store(drops, std::memory_order_relaxed);
        }
      }
    }
    count(kReceived, static_cast<std::uint64_t>(received));
    count(kBytes, bytes);
    if (foreign > 0) count(kForeign, foreign);
    counters_[kLargest].store(largest, std::memory_order_relaxed);
    if (kept > 0) ring_.publish(kept);
  }
}

void UdpStreamSource::countForeign() {
  // Only the count matters: each datagram is read truncated into one small buffer.
  constexpr std::size_t kMessages = 64;
  std::array<std::byte, 64> scratch;
  std::array<iovec, kMessages> vectors;
  std::array<mmsghdr, kMessages> messages{};
  for (std::size_t j = 0; j < kMessages; ++j) {
    vectors[j] = iovec{scratch.data(), scratch.size()};
    messages[j].msg_hdr.msg_iov = &vectors[j];
    messages[j].msg_hdr.msg_iovlen = 1;
  }
  // Bounded, so that a flood cannot keep the thread from the stream's socket.
  for (int round = 0; round < 16; ++round) {
    const int received =
        recvmmsg(foreign_socket_.get(), messages.data(), kMessages, MSG_DONTWAIT, nullptr);
    if (received <= 0) break;
    std::uint64_t bytes = 0;
    for (int j = 0; j < received; ++j) bytes += messages[static_cast<std::size_t>(j)].msg_len;
    count(kReceived, static_cast<std::uint64_t>(received));
    count(kForeign, static_cast<std::uint64_t>(received));
    count(kBytes, bytes);
  }
  std::array<std::uint32_t, SK_MEMINFO_VARS> memory{};
  socklen_t length = sizeof memory;
  if (getsockopt(foreign_socket_.get(), SOL_SOCKET, SO_MEMINFO, memory.data(), &length) == 0) {
    counters_[kForeignDrops].store(memory[SK_MEMINFO_DROPS], std::memory_order_relaxed);
  }
}

bool UdpStreamSource::next(BlockBuffer& out) {
  if (finished_) return false;
  if (out.storage.size() < capacity_) out.storage.resize(capacity_);
  out.special.clear();
  filled_ = 0;
  auto last_data = Clock::now();
  while (filled_ < config_.block_size && !ended_) {
    if (ring_.readable() > 0) {
      const DatagramRing::SlotInfo info = ring_.readInfo();
      const std::uint64_t used_before = used_or_held_;
      handleDatagram(std::span<const std::byte>(ring_.readSlot(), info.length), info.flags, out);
      ring_.release();
      // Only the stream's progress counts as data: late, duplicate and malformed datagrams
      // neither keep a block open nor hold off the idle timeout.
      if (used_or_held_ != used_before) {
        last_data = Clock::now();
        waiting_since_ = last_data;
      }
      continue;
    }
    if (stop_.load(std::memory_order_acquire)) {
      if (const int error = receive_error_.load(std::memory_order_relaxed); error != 0) {
        throw IoError("udp source on " + bound_.text() +
                      ": receiving failed: " + systemErrorText(error));
      }
      settleStash(out);
      closeTailLoss(out);
      ended_ = true;
      break;
    }
    const auto now = Clock::now();
    const double quiet = std::chrono::duration<double>(now - last_data).count();
    if (quiet >= config_.block_latency_s && stashed_ > 0) {
      settleStash(out);
      continue;
    }
    if (quiet >= config_.block_latency_s && filled_ > 0) break;
    const double idle = std::chrono::duration<double>(now - waiting_since_).count();
    if (any_processed_ && config_.idle_timeout_s > 0 && idle >= config_.idle_timeout_s) {
      config_.notice("no datagrams for " + formatSeconds(config_.idle_timeout_s) + " on " +
                     bound_.text() + ": ending the stream (idle_timeout_s)");
      settleStash(out);
      closeTailLoss(out);
      ended_ = true;
      break;
    }
    maybeNotice(now);
    const auto wait = filled_ > 0 || stashed_ > 0
                          ? std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::duration<double>(config_.block_latency_s))
                          : std::chrono::duration_cast<std::chrono::microseconds>(kPollInterval);
    ring_.waitReadable(wait);
  }
  if (!any_processed_) {
    finished_ = true;
    return false;
  }
  const timestamp_t end = ended_ ? std::max(position_, end_time_) : position_;
  if (filled_ == 0 && end == block_begin_) {
    finished_ = true;
    if (!restart_error_.empty()) throw DataError(restart_error_);
    return false;
  }
  out.tags = std::span<const Tag>(out.storage.data(), filled_);
  out.begin_time = block_begin_;
  out.end_time = end;
  block_begin_ = end;
  return true;
}

void UdpStreamSource::maybeNotice(Clock::time_point now) {
  const double waited = std::chrono::duration<double>(now - waiting_since_).count();
  const double since_notice = std::chrono::duration<double>(now - last_notice_).count();
  if (!any_processed_) {
    if (last_notice_ < waiting_since_) {
      config_.notice("waiting for datagrams on " + bound_.text());
      last_notice_ = now;
    } else if (since_notice >= config_.notice_interval_s) {
      // Datagrams that came but cannot start the stream are named: a wrong sender or format.
      const UdpReceiverStats counts = stats();
      std::string ignored;
      if (counts.foreign > 0) {
        ignored += "; " + std::to_string(counts.foreign) +
                   " foreign (another sender, or not of the wire format) ignored";
      }
      if (counts.malformed() > 0) {
        ignored += "; " + std::to_string(counts.malformed()) + " malformed ignored";
      }
      config_.notice("still waiting for datagrams on " + bound_.text() + " (" +
                     formatSeconds(waited) + ignored + ")");
      last_notice_ = now;
    }
  } else if (waited >= config_.notice_interval_s &&
             (last_notice_ < waiting_since_ || since_notice >= config_.notice_interval_s)) {
    config_.notice("no datagrams for " + formatSeconds(waited) + " on " + bound_.text() +
                   "; waiting for more or the end of the stream");
    last_notice_ = now;
  }
}

void UdpStreamSource::handleDatagram(std::span<const std::byte> bytes, std::uint8_t slot_flags,
                                     BlockBuffer& out) {
  if ((slot_flags & DatagramRing::kTruncated) != 0) return count(kTruncated);
  wire::Header header;
  const wire::Status status = wire::parseHeader(bytes, header);
  if (status != wire::Status::Ok)
    return count(static_cast<Counter>(kInvalid + static_cast<std::size_t>(status)));
  if (!started_) {
    // The first datagram fixes the numbering: only one that decodes may.
    if (!validContent(bytes, header)) return;
    // The sender numbers its datagrams from 0 and counts its events from 0: what came before
    // the first datagram seen is loss, found by the usual rules. One just after the start may
    // be a reordered early one, and the missing ones are waited for; one further on is a
    // receiver started late, whose missed datagrams are declared lost at once.
    started_ = true;
    expected_events_ = 0;
    if (header.sequence <= config_.reorder_window) {
      expected_sequence_ = 0;
    } else {
      expected_sequence_ = header.sequence;
      pending_lost_ = header.sequence;
    }
    newest_sequence_ = expected_sequence_;
    position_ = header.base_time;
    block_begin_ = header.base_time;
  } else if (!any_processed_ && header.base_time < position_) {
    // Until a datagram is used, the stream starts at the earliest one held.
    if (!validContent(bytes, header)) return;
    position_ = header.base_time;
    block_begin_ = header.base_time;
  }
  if (isRestart(header)) return restart(bytes, header, out);
  const auto ahead = static_cast<std::int32_t>(header.sequence - expected_sequence_);
  const bool seen = ahead < 0 ? wasSeen(header.sequence) : ahead > 0 && isStashed(header.sequence);
  // The start and the end are sent several times by design: their copies are not duplicates.
  if (seen && header.word_count == 0) return;
  if (seen) return count(kDuplicates);
  if (ahead < 0) return count(kLate);
  // A datagram ahead is checked in full before it is held or its sequence number settles
  // anything: a malformed one must neither stand in for a good copy nor declare the datagrams
  // before it lost. The one expected is checked as it is used.
  if (ahead > 0 && !validAhead(bytes, header)) return;
  if (static_cast<std::int32_t>(header.sequence - newest_sequence_) < 0) {
    count(kReordered);  // a later one came first
  } else {
    newest_sequence_ = header.sequence;
  }
  if (ahead == 0) {
    if (process(bytes, header, out)) drainStash(out);
    return;
  }
  const bool ends = (header.flags & wire::kFlagEndOfStream) != 0;
  if (ends || static_cast<std::size_t>(ahead) > config_.reorder_window) {
    // Too far ahead to wait for the missing ones (or nothing follows): settle the oldest.
    const std::uint32_t keep_from =
        ends ? header.sequence
             : header.sequence - static_cast<std::uint32_t>(config_.reorder_window);
    settleUntil(keep_from, out);
    drainStash(out);
    if (header.sequence == expected_sequence_) {
      if (process(bytes, header, out)) drainStash(out);
      return;
    }
  }
  Stashed& slot = stash_[header.sequence % stash_.size()];
  slot.used = true;
  slot.header = header;
  slot.bytes.assign(bytes.begin(), bytes.end());
  ++stashed_;
  ++used_or_held_;
}

bool UdpStreamSource::validContent(std::span<const std::byte> bytes, const wire::Header& header) {
  scratch_.resize(header.word_count);
  const wire::Decoded decoded =
      wire::decodeWords(header, bytes.data() + wire::kHeaderBytes, scratch_.data());
  wire::Status status = decoded.status;
  if (status == wire::Status::Ok &&
      (header.base_time == std::numeric_limits<timestamp_t>::max() ||
       (decoded.tags > 0 && decoded.last_time == std::numeric_limits<timestamp_t>::max()))) {
    status = wire::Status::TimeOverflow;  // no block could end after it
  }
  if (status != wire::Status::Ok) {
    count(static_cast<Counter>(kInvalid + static_cast<std::size_t>(status)));
    return false;
  }
  return true;
}

bool UdpStreamSource::validAhead(std::span<const std::byte> bytes, const wire::Header& header) {
  if (header.base_time < position_) {
    count(kTimeBackwards);
    return false;
  }
  // The overflow flag is left to process(): it matters only when nothing before the datagram
  // is lost, which is settled only by datagrams already checked.
  return validContent(bytes, header);
}

bool UdpStreamSource::isRestart(const wire::Header& header) const {
  // A start datagram (number 0, no words, no events before it) once the numbering has moved
  // on: not a copy of the stream's own start when its base time differs, or when the stream
  // is further on than a copy sent with the start could be overtaken.
  if (!any_processed_ || expected_sequence_ == 0) return false;
  if (header.sequence != 0 || header.word_count != 0 || header.events_before != 0 ||
      (header.flags & wire::kFlagEndOfStream) != 0) {
    return false;
  }
  return (start_used_ && header.base_time != start_time_) ||
         expected_sequence_ > config_.reorder_window + 1;
}

void UdpStreamSource::restart(std::span<const std::byte> bytes, const wire::Header& header,
                              BlockBuffer& out) {
  count(kRestarts);
  settleStash(out);  // the old numbering's held datagrams; its missing ones are loss
  ++used_or_held_;
  if (header.base_time <= position_) {
    // The new stream's time does not follow the old one's: the stream received ends here.
    closeTailLoss(out);
    ended_ = true;
    restart_error_ = "udp source on " + bound_.text() + ": the sender started a new stream (its " +
                     "datagrams numbered from 0 again) at " + std::to_string(header.base_time) +
                     " ps, not after the last time received, " + std::to_string(position_ - 1) +
                     " ps: the stream received ends there; start the receiver again for the " +
                     "new one";
    config_.notice(restart_error_);
    return;
  }
  // The new stream follows after an overflow interval from the last record to its start: what
  // the old sender sent after its last datagram used lies in it, uncounted.
  expected_sequence_ = 0;
  expected_events_ = 0;
  newest_sequence_ = 0;
  seen_.fill(0);
  restarting_ = true;
  if (process(bytes, header, out)) drainStash(out);
}

bool UdpStreamSource::isStashed(std::uint32_t sequence) const {
  if (stash_.empty()) return false;
  const Stashed& slot = stash_[sequence % stash_.size()];
  return slot.used && slot.header.sequence == sequence;
}

bool UdpStreamSource::wasSeen(std::uint32_t sequence) const {
  return seen_[sequence % seen_.size()] == (std::uint64_t{1} << 32 | sequence);
}

void UdpStreamSource::settleOne(BlockBuffer& out) {
  const std::uint32_t sequence = expected_sequence_;
  if (isStashed(sequence)) {
    Stashed& slot = stash_[sequence % stash_.size()];
    slot.used = false;
    --stashed_;
    if (process(slot.bytes, slot.header, out)) return;
  }
  ++pending_lost_;
  ++expected_sequence_;
}

void UdpStreamSource::settleUntil(std::uint32_t sequence, BlockBuffer& out) {
  while (static_cast<std::int32_t>(sequence - expected_sequence_) > 0) settleOne(out);
}

void UdpStreamSource::drainStash(BlockBuffer& out) {
  while (stashed_ > 0 && isStashed(expected_sequence_)) settleOne(out);
}

void UdpStreamSource::settleStash(BlockBuffer& out) {
  while (stashed_ > 0) settleOne(out);
}

void UdpStreamSource::closeTailLoss(BlockBuffer& out) {
  if (pending_lost_ == 0) return;
  // Nothing came after the lost datagrams to say how many events they held or where they
  // ended: the interval opens after the last record and closes on the stream's last
  // picosecond, without MissedEvents.
  count(kLost, pending_lost_);
  count(kGaps);
  pending_lost_ = 0;
  if (!any_processed_ || in_overflow_) return;  // no stream yet, or inside an interval already
  ensureRoom(out, 2);
  for (std::size_t i = 0; i < 2; ++i)
    out.special.push_back(static_cast<std::uint32_t>(filled_ + i));
  const timestamp_t at =
      position_ == std::numeric_limits<timestamp_t>::max() ? position_ - 1 : position_;
  out.storage[filled_++] = Tag{TagType::OverflowBegin, 0, 0, 0, at};
  out.storage[filled_++] = Tag{TagType::OverflowEnd, 0, 0, 0, at};
  position_ = at + 1;
}

void UdpStreamSource::ensureRoom(BlockBuffer& out, std::size_t tags) {
  if (out.storage.size() < filled_ + tags) out.storage.resize(filled_ + tags + config_.block_size);
}

bool UdpStreamSource::process(std::span<const std::byte> bytes, const wire::Header& header,
                              BlockBuffer& out) {
  if (header.base_time < position_) {
    count(kTimeBackwards);
    return false;
  }
  if (header.base_time == std::numeric_limits<timestamp_t>::max()) {
    count(static_cast<Counter>(kInvalid + static_cast<std::size_t>(wire::Status::TimeOverflow)));
    return false;
  }
  // A datagram whose event count does not follow the one before it, with nothing lost between
  // them, belongs to another numbering (a sender restarted, its start lost): an interval.
  const bool discontinuity = restarting_ || (pending_lost_ == 0 && any_processed_ &&
                                             header.events_before != expected_events_);
  const bool gap = pending_lost_ > 0 || discontinuity;
  const bool starts_in_overflow = (header.flags & wire::kFlagInOverflow) != 0;
  if (!gap && any_processed_ && starts_in_overflow != in_overflow_) {
    count(static_cast<Counter>(kInvalid + static_cast<std::size_t>(wire::Status::OverflowOrder)));
    return false;
  }
  const std::uint32_t lost_events =
      gap && !discontinuity ? header.events_before - expected_events_ : 0;
  const auto chunks = static_cast<std::size_t>((std::uint64_t{lost_events} + kMaxMissedPerTag - 1) /
                                               kMaxMissedPerTag);
  const bool opens = (gap || !any_processed_) && !in_overflow_ && (gap || starts_in_overflow);
  const bool closes = gap && !starts_in_overflow;
  // The end-of-stream datagram's base time is the end, exclusive: a loss just before it is
  // closed on the stream's last picosecond, so that the stream is as long as the one sent.
  const bool ends = (header.flags & wire::kFlagEndOfStream) != 0;
  // A new stream's start closes the interval just before it, where its first tags may lie.
  const timestamp_t gap_end =
      (ends || restarting_) && header.word_count == 0 && header.base_time > position_
          ? header.base_time - 1
          : header.base_time;
  const std::size_t marks = (opens ? 1 : 0) + chunks + (closes ? 1 : 0);
  ensureRoom(out, marks + header.word_count);

  const std::size_t special_before = out.special.size();
  for (std::size_t i = 0; i < marks; ++i) {
    out.special.push_back(static_cast<std::uint32_t>(filled_ + i));
  }
  Tag* const records = out.storage.data() + filled_ + marks;
  const wire::Decoded decoded =
      wire::decodeWords(header, bytes.data() + wire::kHeaderBytes, records, &out.special,
                        static_cast<std::uint32_t>(filled_ + marks));
  wire::Status status = decoded.status;
  if (status == wire::Status::Ok && decoded.tags > 0 &&
      decoded.last_time == std::numeric_limits<timestamp_t>::max()) {
    status = wire::Status::TimeOverflow;  // the block could not end after it
  }
  if (status != wire::Status::Ok) {
    out.special.resize(special_before);
    count(static_cast<Counter>(kInvalid + static_cast<std::size_t>(status)));
    return false;
  }

  Tag* mark = out.storage.data() + filled_;
  if (opens) {
    // A loss opens at the first picosecond after the last record; a stream that starts inside
    // an overflow opens at its start.
    *mark++ = Tag{TagType::OverflowBegin, 0, 0, 0, gap ? position_ : header.base_time};
  }
  for (std::uint32_t left = lost_events; left > 0;) {
    const auto chunk = static_cast<std::uint16_t>(std::min<std::uint32_t>(left, kMaxMissedPerTag));
    *mark++ = Tag{TagType::MissedEvents, 0, chunk, 0, gap_end};
    left -= chunk;
  }
  if (closes) *mark++ = Tag{TagType::OverflowEnd, 0, 0, 0, gap_end};
  if (gap) {
    count(kLost, pending_lost_);
    count(kEventsLost, lost_events);
    count(kGaps);
    if (discontinuity && !restarting_) count(kRestarts);
    pending_lost_ = 0;
    restarting_ = false;
    if (marks > (opens ? 1u : 0u)) position_ = std::max(position_, gap_end + 1);
  }

  filled_ += marks + decoded.tags;
  in_overflow_ = decoded.in_overflow;
  if (decoded.tags > 0) {
    position_ = decoded.last_time + 1;
  } else {
    position_ = std::max(position_, header.base_time);
  }
  any_processed_ = true;
  ++used_or_held_;
  if (header.sequence == 0 && header.word_count == 0 && !ends) {
    start_used_ = true;
    start_time_ = header.base_time;
  }
  expected_sequence_ = header.sequence + 1;
  expected_events_ = header.events_before + decoded.events;
  seen_[header.sequence % seen_.size()] = std::uint64_t{1} << 32 | header.sequence;
  count(kAccepted);
  count(kTags, decoded.tags);
  count(kEvents, decoded.events);
  const std::int64_t now = nowNs();
  if (first_accepted_ns_.load(std::memory_order_relaxed) == 0) {
    first_accepted_ns_.store(now, std::memory_order_relaxed);
    first_sequence_.store(header.sequence, std::memory_order_relaxed);
  }
  last_accepted_ns_.store(now, std::memory_order_relaxed);
  if (ends) {
    ended_ = true;
    end_time_ = std::max(position_, header.base_time);
  }
  return true;
}

}  // namespace tagflow
