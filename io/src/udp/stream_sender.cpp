#include "tagflow/io/udp/stream_sender.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <thread>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

constexpr std::size_t kMaxBatch = 1024;
constexpr auto kEndRepeatSpacing = std::chrono::milliseconds(2);

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void UdpSenderConfig::validate() const {
  socketAddress({address, port}, "udp sender destination");
  if (!local.empty())
    socketAddress(parseEndpoint(local, "udp sender local address"), "udp sender local address");
  wire::wordsPerDatagram(mtu);
  if (!(rate > 0)) {
    throw InvalidArgument("udp sender: rate " + std::to_string(rate) +
                          " tags/s is invalid (valid: > 0; leave it out to send as fast as "
                          "possible)");
  }
  checkCpu(cpu, "udp sender cpu");
  if (batch < 1 || batch > kMaxBatch) {
    throw InvalidArgument("udp sender: batch " + std::to_string(batch) +
                          " is invalid (valid: 1..1024 datagrams)");
  }
  if (send_buffer_bytes < 65536) {
    throw InvalidArgument("udp sender: send buffer " + std::to_string(send_buffer_bytes) +
                          " bytes is invalid (valid: >= 65536)");
  }
  if (marker_repeats < 1 || marker_repeats > 100) {
    throw InvalidArgument("udp sender: marker_repeats " + std::to_string(marker_repeats) +
                          " is invalid (valid: 1..100)");
  }
  if (!(flush_interval_s > 0 && flush_interval_s <= 10)) {
    throw InvalidArgument("udp sender: flush_interval_s " + std::to_string(flush_interval_s) +
                          " is invalid (valid: > 0 and <= 10)");
  }
}

// The datagrams of one sendmmsg call: each message is two pieces, the header and the words,
// so that replay() can send a prepared stream's words in place behind fresh headers.
class UdpStreamSender::Batch : public wire::DatagramSink {
 public:
  Batch(UdpStreamSender& sender, std::size_t capacity, std::size_t words_per_datagram)
      : sender_(sender),
        start_copies_(sender.config_.marker_repeats),
        capacity_(capacity),
        slot_words_(wire::kHeaderWords + words_per_datagram),
        slots_(capacity * slot_words_),
        headers_(capacity),
        messages_(capacity),
        pieces_(2 * capacity) {}

  std::uint32_t* openDatagram() override {
    if (count_ == capacity_) sender_.sendQueued(*this);
    return slots_.data() + count_ * slot_words_;
  }
  void closeDatagram(std::uint32_t* datagram, const wire::Header& facts,
                     std::uint32_t events) override {
    wire::Header header = facts;
    if (!sender_.stamp(header, events)) return;
    wire::writeHeader(datagram, header);
    queue(datagram, datagram + wire::kHeaderWords, header.word_count, events);
    // The encoder's only word-less datagram is the start (the end is sendEnd's): its copies
    // follow at once, each behind a header of its own, since the slot may be reused.
    if (header.word_count > 0) return;
    for (int copy = 1; copy < start_copies_; ++copy) queuePrepared(header, nullptr, 0);
  }

  // Queues a prepared datagram's words behind a header written here.
  void queuePrepared(const wire::Header& header, const std::uint32_t* words, std::uint32_t events) {
    if (count_ == capacity_) sender_.sendQueued(*this);
    wire::writeHeader(headers_[count_].data(), header);
    queue(headers_[count_].data(), words, header.word_count, events);
  }

  std::span<mmsghdr> messages() { return std::span<mmsghdr>(messages_).first(count_); }
  std::uint64_t events() const { return events_; }
  std::uint64_t bytes() const { return bytes_; }
  void clear() {
    count_ = 0;
    events_ = 0;
    bytes_ = 0;
  }

 private:
  void queue(const std::uint32_t* header, const std::uint32_t* words, std::size_t word_count,
             std::uint32_t events) {
    iovec* piece = &pieces_[2 * count_];
    piece[0] = iovec{const_cast<std::uint32_t*>(header), wire::kHeaderBytes};
    piece[1] = iovec{const_cast<std::uint32_t*>(words), 4 * word_count};
    messages_[count_] = mmsghdr{};
    messages_[count_].msg_hdr.msg_iov = piece;
    messages_[count_].msg_hdr.msg_iovlen = word_count > 0 ? 2 : 1;
    ++count_;
    events_ += events;
    bytes_ += wire::kHeaderBytes + 4 * word_count;
  }

  UdpStreamSender& sender_;
  int start_copies_;
  std::size_t capacity_;
  std::size_t slot_words_;
  std::vector<std::uint32_t> slots_;
  std::vector<std::array<std::uint32_t, wire::kHeaderWords>> headers_;
  std::vector<mmsghdr> messages_;
  std::vector<iovec> pieces_;
  std::size_t count_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t bytes_ = 0;
};

EncodedStream::EncodedStream(std::span<const Tag> tags, timestamp_t begin_time,
                             timestamp_t end_time, int mtu)
    : begin_time_(begin_time), end_time_(end_time), mtu_(mtu) {
  const std::size_t capacity = wire::wordsPerDatagram(mtu);
  if (end_time <= begin_time ||
      (!tags.empty() && (tags.front().time < begin_time || tags.back().time >= end_time))) {
    throw InvalidArgument("encoded stream: the interval [" + std::to_string(begin_time) + ", " +
                          std::to_string(end_time) + ") ps must hold every tag");
  }
  struct Collect : wire::DatagramSink {
    EncodedStream& stream;
    std::vector<std::uint32_t> scratch;
    Collect(EncodedStream& s, std::size_t words) : stream(s), scratch(wire::kHeaderWords + words) {}
    std::uint32_t* openDatagram() override { return scratch.data(); }
    void closeDatagram(std::uint32_t* datagram, const wire::Header& header,
                       std::uint32_t events) override {
      stream.offsets_.push_back(stream.words_.size());
      stream.words_.insert(stream.words_.end(), datagram + wire::kHeaderWords,
                           datagram + wire::kHeaderWords + header.word_count);
      stream.headers_.push_back(header);
      stream.events_.push_back(events);
    }
  } collect(*this, capacity);
  wire::Encoder encoder(capacity);
  encoder.encode(tags, collect);
  encoder.flush(collect);
  if (encoder.inOverflow()) {
    throw InvalidArgument(
        "encoded stream: it ends inside an overflow interval, so its rounds "
        "cannot follow each other");
  }
}

UdpStreamSender::UdpStreamSender(UdpSenderConfig config)
    : config_(std::move(config)), words_per_datagram_(wire::wordsPerDatagram(config_.mtu)) {
  config_.validate();
  const sockaddr_in destination =
      socketAddress({config_.address, config_.port}, "udp sender destination");
  socket_ = SocketFd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (socket_.get() < 0) {
    throw IoError("udp sender: cannot create a socket: " + systemErrorText(errno));
  }
  setSocketBuffer(socket_.get(), false, config_.send_buffer_bytes);
  if (!config_.local.empty()) {
    const sockaddr_in local = socketAddress(
        parseEndpoint(config_.local, "udp sender local address"), "udp sender local address");
    if (::bind(socket_.get(), reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0) {
      throw IoError("udp sender: cannot send from " + config_.local + ": " +
                    systemErrorText(errno));
    }
  }
  if (::connect(socket_.get(), reinterpret_cast<const sockaddr*>(&destination),
                sizeof destination) != 0) {
    throw IoError("udp sender: cannot send to " + config_.address + ":" +
                  std::to_string(config_.port) + ": " + systemErrorText(errno));
  }
  drop_ = config_.drop;
  std::sort(drop_.begin(), drop_.end());
}

UdpSenderStats UdpStreamSender::stats() const {
  UdpSenderStats s;
  s.datagrams_sent = datagrams_sent_.load(std::memory_order_relaxed);
  s.bytes_sent = bytes_sent_.load(std::memory_order_relaxed);
  s.events_sent = events_sent_.load(std::memory_order_relaxed);
  s.datagrams_dropped = datagrams_dropped_.load(std::memory_order_relaxed);
  s.events_dropped = events_dropped_.load(std::memory_order_relaxed);
  s.refused = refused_.load(std::memory_order_relaxed);
  const std::uint64_t numbered = datagrams_numbered_.load(std::memory_order_relaxed);
  s.datagrams_numbered = numbered;
  for (const std::uint32_t sequence : drop_) {
    if (sequence >= numbered) s.drops_not_reached.push_back(sequence);
  }
  const std::int64_t first = first_send_ns_.load(std::memory_order_relaxed);
  s.seconds =
      first == 0
          ? 0.0
          : static_cast<double>(last_send_ns_.load(std::memory_order_relaxed) - first) * 1e-9;
  return s;
}

bool UdpStreamSender::stamp(wire::Header& header, std::uint32_t events) {
  numbering_.stamp(header, events);
  datagrams_numbered_.fetch_add(1, std::memory_order_relaxed);
  if (std::binary_search(drop_.begin(), drop_.end(), header.sequence)) {
    datagrams_dropped_.fetch_add(1, std::memory_order_relaxed);
    events_dropped_.fetch_add(events, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void UdpStreamSender::pace() {
  const auto now = Clock::now();
  if (!started_) {
    started_ = true;
    start_ = now;
  }
  if (!std::isfinite(config_.rate)) return;
  const auto due =
      start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                   static_cast<double>(events_queued_) / config_.rate));
  if (due - now > std::chrono::microseconds(200)) {
    std::this_thread::sleep_until(due - std::chrono::microseconds(100));
  }
  while (Clock::now() < due) __builtin_ia32_pause();
}

void UdpStreamSender::transmit(std::span<mmsghdr> messages) {
  // From the start of the first send: a stream that fits one call still takes time to send.
  if (first_send_ns_.load(std::memory_order_relaxed) == 0) {
    first_send_ns_.store(nowNs(), std::memory_order_relaxed);
  }
  std::size_t sent = 0;
  while (sent < messages.size()) {
    const int result = sendmmsg(socket_.get(), messages.data() + sent,
                                static_cast<unsigned>(messages.size() - sent), 0);
    if (result >= 0) {
      sent += static_cast<std::size_t>(result);
      continue;
    }
    const int error = errno;
    if (error == ECONNREFUSED) {
      // A stale "port unreachable" from an earlier datagram; this one was not sent.
      refused_.fetch_add(1, std::memory_order_relaxed);
    } else if (error == ENOBUFS || error == EAGAIN || error == EINTR) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    } else {
      throw IoError(
          "udp sender: sending to " + config_.address + ":" + std::to_string(config_.port) +
          " failed: " + systemErrorText(error) +
          (error == EMSGSIZE ? " (the datagram does not fit the path MTU; lower --mtu)" : ""));
    }
  }
  last_send_ns_.store(nowNs(), std::memory_order_relaxed);
}

void UdpStreamSender::sendQueued(Batch& batch) {
  if (batch.messages().empty()) return;
  events_queued_ += batch.events();
  pace();
  transmit(batch.messages());
  datagrams_sent_.fetch_add(batch.messages().size(), std::memory_order_relaxed);
  bytes_sent_.fetch_add(batch.bytes(), std::memory_order_relaxed);
  events_sent_.fetch_add(batch.events(), std::memory_order_relaxed);
  batch.clear();
}

void UdpStreamSender::sendEnd(Batch& batch, timestamp_t end_time, bool in_overflow) {
  wire::Header header;
  header.flags = wire::kFlagEndOfStream | (in_overflow ? wire::kFlagInOverflow : 0);
  header.base_time = end_time;
  const bool dropped = !stamp(header, 0);
  if (!dropped) batch.queuePrepared(header, nullptr, 0);
  sendQueued(batch);
  if (dropped) return;
  std::array<std::uint32_t, wire::kHeaderWords> bytes;
  wire::writeHeader(bytes.data(), header);
  iovec piece{bytes.data(), wire::kHeaderBytes};
  mmsghdr message{};
  message.msg_hdr.msg_iov = &piece;
  message.msg_hdr.msg_iovlen = 1;
  for (int copy = 1; copy < config_.marker_repeats; ++copy) {
    std::this_thread::sleep_for(kEndRepeatSpacing);
    transmit(std::span<mmsghdr>(&message, 1));
    datagrams_sent_.fetch_add(1, std::memory_order_relaxed);
    bytes_sent_.fetch_add(wire::kHeaderBytes, std::memory_order_relaxed);
  }
}

UdpSenderStats UdpStreamSender::send(Source& source, timestamp_t duration_ps) {
  pinCurrentThread(config_.cpu, "udp sender cpu");
  Batch batch(*this, config_.batch, words_per_datagram_);
  wire::Encoder encoder(words_per_datagram_);
  BlockBuffer block;
  block.storage.reserve(source.maxBlockTags());
  bool first = true;
  timestamp_t start = 0;
  timestamp_t end = 0;
  auto last_flush = Clock::now();
  try {
    while (!stop_.load(std::memory_order_relaxed) && source.next(block)) {
      if (first) {
        start = block.begin_time;
        end = start;
        encoder.begin(start, batch);
      }
      first = false;
      std::span<const Tag> tags = block.tags;
      const bool last = duration_ps > 0 && block.end_time - start >= duration_ps;
      const timestamp_t block_end = last ? start + duration_ps : block.end_time;
      if (last) tags = tags.first(firstAtOrAfter(tags, block_end));
      encoder.encode(tags, batch);
      end = block_end;
      if (last) break;
      const auto now = Clock::now();
      if (std::chrono::duration<double>(now - last_flush).count() >= config_.flush_interval_s) {
        encoder.flush(batch);
        sendQueued(batch);
        last_flush = now;
      }
    }
  } catch (...) {
    // The stream sent so far stays a stream: what was encoded before the failure goes out,
    // then the end, just after the last tag encoded, so that the receiver does not wait for
    // datagrams that never come. A failure here too leaves the first one to be reported.
    if (!first) {
      try {
        encoder.flush(batch);
        const timestamp_t reached =
            encoder.tagsEncoded() > 0 ? std::max(end, encoder.lastTime() + 1) : end;
        sendEnd(batch, reached, encoder.inOverflow());
      } catch (...) {
      }
    }
    throw;
  }
  encoder.flush(batch);
  sendEnd(batch, end, encoder.inOverflow());  // an empty source sends an empty stream
  return stats();
}

UdpSenderStats UdpStreamSender::replay(const EncodedStream& stream, double seconds) {
  if (stream.mtu() > config_.mtu) {
    throw InvalidArgument("udp sender: the prepared stream's MTU " + std::to_string(stream.mtu()) +
                          " exceeds the sender's " + std::to_string(config_.mtu));
  }
  if (!(seconds > 0)) {
    throw InvalidArgument("udp sender: replay duration " + std::to_string(seconds) +
                          " s is invalid (valid: > 0)");
  }
  pinCurrentThread(config_.cpu, "udp sender cpu");
  Batch batch(*this, config_.batch, words_per_datagram_);
  wire::Encoder(words_per_datagram_).begin(stream.beginTime(), batch);  // the start datagram
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  timestamp_t shift = 0;
  // Whether the stream is inside an overflow interval after the last datagram numbered: the
  // next one's flag says (a round ends outside one, or it could not be repeated).
  bool in_overflow = false;
  for (bool done = stream.datagrams() == 0; !done; shift += stream.span()) {
    for (std::size_t i = 0; i < stream.datagrams(); ++i) {
      wire::Header header = stream.header(i);
      header.base_time += shift;
      if (stamp(header, stream.events(i))) {
        batch.queuePrepared(header, stream.words(i).data(), stream.events(i));
      }
      in_overflow =
          i + 1 < stream.datagrams() && (stream.header(i + 1).flags & wire::kFlagInOverflow) != 0;
      if (i % config_.batch == 0 &&
          (stop_.load(std::memory_order_relaxed) || Clock::now() >= deadline)) {
        done = true;
        break;
      }
    }
    if (done) break;
  }
  // Every datagram sent so far lies before the end of the round in progress.
  sendEnd(batch, stream.endTime() + shift, in_overflow);
  return stats();
}

}  // namespace tagflow
