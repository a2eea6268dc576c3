// Helpers for the stream-link tests: datagrams encoded into memory, decoded back, sent raw
// from one test socket, a sender running in a thread, and a receiver bound to a free port of
// the loopback interface (so tests running side by side never share a port).
#pragma once

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tagflow/io/udp/stream_sender.hpp"
#include "tagflow/io/udp/stream_source.hpp"
#include "tagflow/io/udp/wire.hpp"

namespace tagflow::test {

using Datagram = std::vector<std::byte>;

// Collects an encoder's datagrams with sequence numbers and running event counts, as a
// sender would stamp them.
class MemorySink : public wire::DatagramSink {
 public:
  explicit MemorySink(std::size_t words) : scratch_(wire::kHeaderWords + words) {}

  std::uint32_t* openDatagram() override { return scratch_.data(); }
  void closeDatagram(std::uint32_t* datagram, const wire::Header& facts,
                     std::uint32_t events) override {
    wire::Header header = facts;
    numbering_.stamp(header, events);
    wire::writeHeader(datagram, header);
    const auto* bytes = reinterpret_cast<const std::byte*>(datagram);
    datagrams.emplace_back(bytes, bytes + wire::kHeaderBytes + 4 * std::size_t{facts.word_count});
    event_counts.push_back(events);
  }

  std::vector<Datagram> datagrams;
  std::vector<std::uint32_t> event_counts;

 private:
  std::vector<std::uint32_t> scratch_;
  wire::DatagramNumbering numbering_;
};

// Every record of `datagrams`, decoded one by one; each must be valid.
inline std::vector<Tag> decodeAll(const std::vector<Datagram>& datagrams) {
  std::vector<Tag> tags;
  for (const Datagram& datagram : datagrams) {
    wire::Header header;
    REQUIRE(wire::parseHeader(datagram, header) == wire::Status::Ok);
    std::vector<Tag> out(header.word_count);
    const wire::Decoded decoded =
        wire::decodeWords(header, datagram.data() + wire::kHeaderBytes, out.data());
    REQUIRE(decoded.status == wire::Status::Ok);
    tags.insert(tags.end(), out.begin(), out.begin() + static_cast<std::ptrdiff_t>(decoded.tags));
  }
  return tags;
}

// A datagram crafted field by field: `header` (its word count is that of `words`), then
// `words` as they are.
inline Datagram crafted(std::uint32_t sequence, std::uint32_t events_before, timestamp_t base_time,
                        const std::vector<std::uint32_t>& words = {}, std::uint8_t flags = 0) {
  wire::Header header;
  header.flags = flags;
  header.word_count = static_cast<std::uint16_t>(words.size());
  header.sequence = sequence;
  header.events_before = events_before;
  header.base_time = base_time;
  std::vector<std::uint32_t> buffer(wire::kHeaderWords + words.size());
  wire::writeHeader(buffer.data(), header);
  std::copy(words.begin(), words.end(), buffer.begin() + wire::kHeaderWords);
  const auto* bytes = reinterpret_cast<const std::byte*>(buffer.data());
  return Datagram(bytes, bytes + 4 * buffer.size());
}

// A wire word: a time tag of rising input `channel` (1..18) `delta` ps after the one before.
inline std::uint32_t risingWord(int channel, std::uint32_t delta) {
  return static_cast<std::uint32_t>(channel - 1) << wire::kDeltaBits | delta;
}

// Ends a receiver that would otherwise wait for ever: requestStop() after `seconds`, unless
// destroyed first. For tests of a receiver that must end by itself.
class StopAfter {
 public:
  StopAfter(Source& source, double seconds)
      : thread_([this, &source, seconds] {
          std::unique_lock lock(mutex_);
          if (!done_.wait_for(lock, std::chrono::duration<double>(seconds),
                              [this] { return cancelled_; })) {
            fired_ = true;
            source.requestStop();
          }
        }) {}
  ~StopAfter() {
    {
      std::lock_guard lock(mutex_);
      cancelled_ = true;
    }
    done_.notify_all();
    thread_.join();
  }
  StopAfter(const StopAfter&) = delete;
  StopAfter& operator=(const StopAfter&) = delete;
  // Whether it had to stop the receiver (checked once the receiver ended).
  bool fired() {
    std::lock_guard lock(mutex_);
    return fired_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  bool cancelled_ = false;
  bool fired_ = false;
  std::thread thread_;
};

// A plain UDP socket for crafted datagrams, connected to a receiver on the loopback.
class RawSender {
 public:
  explicit RawSender(int port) : fd_(::socket(AF_INET, SOCK_DGRAM, 0)) {
    REQUIRE(fd_ >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  }
  ~RawSender() { ::close(fd_); }
  RawSender(const RawSender&) = delete;
  RawSender& operator=(const RawSender&) = delete;

  void send(const void* data, std::size_t size) const {
    REQUIRE(::send(fd_, data, size, 0) == static_cast<ssize_t>(size));
  }
  void send(const Datagram& datagram) const { send(datagram.data(), datagram.size()); }
  // As many as the socket takes in one call, without waiting; safe outside the test thread.
  std::size_t sendBatch(std::vector<Datagram>& datagrams) const {
    std::vector<iovec> pieces(datagrams.size());
    std::vector<mmsghdr> messages(datagrams.size());
    for (std::size_t i = 0; i < datagrams.size(); ++i) {
      pieces[i] = iovec{datagrams[i].data(), datagrams[i].size()};
      messages[i].msg_hdr.msg_iov = &pieces[i];
      messages[i].msg_hdr.msg_iovlen = 1;
    }
    const int sent = sendmmsg(fd_, messages.data(), static_cast<unsigned>(messages.size()), 0);
    return sent > 0 ? static_cast<std::size_t>(sent) : 0;
  }

 private:
  int fd_;
};

// A receiver on 127.0.0.1, any free port, ending after `idle_s` without data; its notices
// are kept.
inline UdpSourceConfig loopbackReceiver(std::vector<std::string>* notices = nullptr,
                                        double idle_s = 2.0) {
  UdpSourceConfig config;
  config.address = "127.0.0.1";
  config.port = 0;
  config.idle_timeout_s = idle_s;
  config.block_size = 4096;
  config.receive_buffer_bytes = 8 << 20;
  config.ring_datagrams = 1024;
  config.notice = [notices](const std::string& line) {
    if (notices != nullptr) notices->push_back(line);
  };
  return config;
}

inline UdpSenderConfig loopbackSender(int port) {
  UdpSenderConfig config;
  config.address = "127.0.0.1";
  config.port = port;
  config.flush_interval_s = 10;  // datagrams fill up whatever the timing: packing is fixed
  return config;
}

}  // namespace tagflow::test
