// A receiver told its sender (`sender = "ADDRESS:PORT"`) takes datagrams from nowhere else,
// from the first one on: a valid stream from another port is counted as foreign and never
// becomes the stream. Under a flood of random and forged datagrams from another port, sent as
// fast as one core can, a real stream of ten seconds arrives exactly as the same source read
// directly, and the receiver ends as soon as the real stream does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <random>
#include <thread>

#include "support/drain.hpp"
#include "support/synthetic.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "udp/udp_support.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

// A port of 127.0.0.1 that was free a moment ago, for a sender that must be named in advance.
int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  socklen_t length = sizeof address;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

// What a Source hands out, reduced to what must match: every record, in order, and the span.
struct StreamDigest {
  std::uint64_t hash = 14695981039346656037ull;
  std::uint64_t records = 0;
  timestamp_t begin = -1;
  timestamp_t end = -1;

  void add(const Tag& tag) {
    for (const std::uint64_t word :
         {static_cast<std::uint64_t>(tag.type), static_cast<std::uint64_t>(tag.channel),
          static_cast<std::uint64_t>(tag.missed_events), static_cast<std::uint64_t>(tag.time)}) {
      hash = (hash ^ word) * 1099511628211ull;
    }
    ++records;
  }
  bool operator==(const StreamDigest&) const = default;
};

StreamDigest digest(Source& source) {
  StreamDigest digest;
  BlockBuffer block;
  block.storage.reserve(source.maxBlockTags());
  while (source.next(block)) {
    if (digest.begin < 0) digest.begin = block.begin_time;
    digest.end = block.end_time;
    for (const Tag& tag : block.tags) digest.add(tag);
  }
  return digest;
}

// Sends junk to `port` from its own socket until stopped: random bytes of random length,
// and forged datagrams of the wire format with random sequence numbers and times.
class Flood {
 public:
  explicit Flood(int port) : socket_(port), forged_(forgedDatagrams()), junk_(junkDatagrams()) {}

  std::uint64_t run(const std::atomic<bool>& stop) {
    std::mt19937_64 random(99);
    std::vector<std::vector<std::byte>> batch(32);
    std::uint64_t sent = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      for (auto& datagram : batch) {
        if (random() % 2 == 0) {
          datagram = junk_[random() % junk_.size()];
        } else {
          datagram = forged_[random() % forged_.size()];
          wire::Header header;
          wire::parseHeader(datagram, header);  // forged from valid ones: it parses
          header.sequence = static_cast<std::uint32_t>(random() % 64);
          header.base_time = static_cast<timestamp_t>(random() % 1'000'000'000);
          wire::writeHeader(reinterpret_cast<std::uint32_t*>(datagram.data()), header);
        }
      }
      sent += socket_.sendBatch(batch);
    }
    return sent;
  }

 private:
  static std::vector<Datagram> forgedDatagrams() {
    MemorySink sink(wire::wordsPerDatagram(9000));
    wire::Encoder encoder(wire::wordsPerDatagram(9000));
    encoder.begin(0, sink);
    const auto tags = drainSynthetic(mixedConfig(10'000'000'000, 4096, 1.0, 5)).tags;
    encoder.encode(tags, sink);
    encoder.finish(10'000'000'000, sink);
    return sink.datagrams;
  }
  // Made beforehand: the flood's speed is the socket's, not the random generator's.
  static std::vector<Datagram> junkDatagrams() {
    std::mt19937_64 random(98);
    std::vector<Datagram> junk(256);
    for (auto& datagram : junk) {
      datagram.resize(1 + random() % 9000);
      for (auto& byte : datagram) byte = static_cast<std::byte>(random());
    }
    return junk;
  }

  RawSender socket_;
  std::vector<Datagram> forged_;
  std::vector<Datagram> junk_;
};

}  // namespace

TEST_CASE("A receiver told its sender counts every other datagram as foreign, from the first",
          "[udp][sender]") {
  UdpSourceConfig config = loopbackReceiver(nullptr, 0.5);
  config.sender = "127.0.0.1:" + std::to_string(freeLoopbackPort());
  UdpStreamSource receiver(config);
  // A complete, valid stream, but from another port.
  UdpStreamSender other(loopbackSender(receiver.port()));
  auto sending = std::async(std::launch::async, [&] {
    SyntheticSource source(mixedConfig(20'000'000'000, 4096));
    return other.send(source);
  });
  const UdpSenderStats sent = sending.get();
  // Nothing is accepted, so the idle timeout never starts: the receiver is stopped instead.
  auto stopping = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    receiver.requestStop();
  });
  BlockBuffer block;
  CHECK_FALSE(receiver.next(block));
  stopping.get();
  const UdpReceiverStats stats = receiver.stats();
  CHECK(stats.datagrams_accepted == 0);
  CHECK(stats.foreign == sent.datagrams_sent);  // read or dropped for room, each is counted

  SECTION("a second receiver on the port is refused, as without a sender") {
    UdpSourceConfig second = loopbackReceiver();
    second.port = receiver.port();
    second.sender = config.sender;
    CHECK_THROWS_WITH(UdpStreamSource(second),
                      Catch::Contains("another program receives on this port"));
  }
  SECTION("a sender setting that is not ADDRESS:PORT is refused with the valid form") {
    UdpSourceConfig bad = loopbackReceiver();
    bad.sender = "127.0.0.1";
    CHECK_THROWS_WITH(UdpStreamSource(bad), Catch::Contains("sender '127.0.0.1' is invalid") &&
                                                Catch::Contains("IPV4_ADDRESS:PORT"));
    bad.sender = "127.0.0.1:0";
    CHECK_THROWS_WITH(UdpStreamSource(bad), Catch::Contains("sender port 0 is invalid"));
  }
}

TEST_CASE("A flood from another port leaves the real stream exact and the receiver responsive",
          "[udp][sender][flood]") {
  // About 20 million tags sent in 10 s.
  const SyntheticConfig stream = mixedConfig(2'300'000'000'000, 4096, 1.0, 31);
  const int sender_port = freeLoopbackPort();
  UdpSourceConfig config = loopbackReceiver(nullptr, 5.0);
  config.sender = "127.0.0.1:" + std::to_string(sender_port);
  config.receive_buffer_bytes = 64 << 20;
  config.ring_datagrams = 4096;
  UdpStreamSource receiver(config);

  std::atomic<bool> stop_flood{false};
  Flood flood(receiver.port());
  auto flooding = std::async(std::launch::async, [&] { return flood.run(stop_flood); });
  UdpSenderConfig sender_config = loopbackSender(receiver.port());
  sender_config.local = config.sender;
  sender_config.rate = 2e6;
  sender_config.flush_interval_s = 0.001;
  UdpStreamSender sender(sender_config);
  std::chrono::steady_clock::time_point sender_done;
  auto sending = std::async(std::launch::async, [&] {
    SyntheticSource source(stream);
    const UdpSenderStats stats = sender.send(source);
    sender_done = std::chrono::steady_clock::now();
    return stats;
  });
  const StreamDigest received = digest(receiver);
  const auto received_done = std::chrono::steady_clock::now();
  const UdpSenderStats sent = sending.get();
  stop_flood = true;
  const std::uint64_t flooded = flooding.get();

  SyntheticSource direct_source(stream);
  const StreamDigest direct = digest(direct_source);
  const UdpReceiverStats stats = receiver.stats();
  INFO("flood datagrams " << flooded << ", foreign " << stats.foreign << ", socket drops "
                          << stats.socket_drops << ", ring full " << stats.ring_full);
  CHECK(sent.seconds > 8);
  CHECK(direct.records > 15'000'000);
  CHECK(received == direct);
  CHECK(stats.datagrams_lost == 0);
  CHECK(stats.malformed() == 0);
  CHECK(stats.foreign > 100'000);  // the flood did reach the receiver
  // Responsive: the stream ended with the sender's end, not with the idle timeout.
  CHECK(received_done - sender_done < std::chrono::seconds(1));
}

TEST_CASE("A datagram not of the wire format does not pick the sender when none is named",
          "[udp][sender]") {
  // A stray datagram from another port comes first; the receiver must still lock onto the
  // stream's sender.
  const std::vector<Datagram> stream{crafted(0, 0, 1000),
                                     crafted(1, 0, 1000, {risingWord(1, 0), risingWord(2, 5)}),
                                     crafted(2, 2, 4000, {}, wire::kFlagEndOfStream)};
  const std::string hello = "hello";
  {
    UdpStreamSource receiver(loopbackReceiver(nullptr, 0));  // ends only at the stream's end
    RawSender stray(receiver.port());
    RawSender sender(receiver.port());
    stray.send(hello.data(), hello.size());
    for (const Datagram& datagram : stream) sender.send(datagram);
    StopAfter watchdog(receiver, 5);
    const DrainedStream received = drain(receiver);
    CHECK_FALSE(watchdog.fired());
    requireWellFormed(received);
    const std::vector<Tag> expected{{TagType::TimeTag, 0, 0, 1, 1000},
                                    {TagType::TimeTag, 0, 0, 2, 1005}};
    CHECK((received.tags == expected));
    CHECK(received.end() == 4000);
    const UdpReceiverStats stats = receiver.stats();
    CHECK(stats.foreign == 1);
    CHECK(stats.malformed() == 0);
    CHECK(stats.datagrams_accepted == 3);
  }
  {
    // Nothing else comes: the waiting notice says that something did, and was ignored.
    std::vector<std::string> notices;
    UdpSourceConfig config = loopbackReceiver(&notices, 0);
    config.notice_interval_s = 0.2;
    UdpStreamSource receiver(config);
    RawSender stray(receiver.port());
    stray.send(hello.data(), hello.size());
    StopAfter watchdog(receiver, 0.7);
    CHECK(drain(receiver).blocks.empty());
    CHECK(receiver.stats().foreign == 1);
    CHECK(std::any_of(notices.begin(), notices.end(), [](const std::string& line) {
      return line.find("still waiting for datagrams") != std::string::npos &&
             line.find("1 foreign") != std::string::npos;
    }));
  }
}
