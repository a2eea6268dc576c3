// Bad input to the link: addresses, ports, MTUs, rates, CPUs, a port in use, all refused with
// messages that name the value and the valid range; a receiver without data says that it is
// waiting, and where.
#include <catch2/catch.hpp>

#include <cmath>
#include <future>
#include <thread>

#include "support/drain.hpp"
#include "tagflow/core/error.hpp"
#include "udp/udp_support.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

TEST_CASE("Bad sender settings are refused with the valid range", "[udp][arguments]") {
  const auto make = [](auto change) {
    UdpSenderConfig config = loopbackSender(4750);
    change(config);
    UdpStreamSender sender(config);
  };
  CHECK_THROWS_MATCHES(
      make([](auto& c) { c.address = "300.1.2.3"; }), InvalidArgument,
      Catch::Matchers::Message("udp sender destination address '300.1.2.3' is invalid (valid: a "
                               "dotted IPv4 address such as 192.168.1.10)"));
  CHECK_THROWS_WITH(make([](auto& c) { c.address = "localhost"; }), Contains("'localhost'"));
  CHECK_THROWS_MATCHES(
      make([](auto& c) { c.port = 0; }), InvalidArgument,
      Catch::Matchers::Message("udp sender destination port 0 is invalid (valid: 1..65535)"));
  CHECK_THROWS_WITH(make([](auto& c) { c.port = 70000; }), Contains("port 70000 is invalid"));
  CHECK_THROWS_MATCHES(make([](auto& c) { c.mtu = 575; }), InvalidArgument,
                       Catch::Matchers::Message("MTU 575 is invalid (valid: 576..9500)"));
  CHECK_THROWS_WITH(make([](auto& c) { c.mtu = 9501; }), Contains("MTU 9501 is invalid"));
  CHECK_THROWS_WITH(make([](auto& c) { c.rate = 0; }),
                    Contains("rate 0.000000 tags/s is invalid (valid: > 0"));
  CHECK_THROWS_WITH(make([](auto& c) { c.rate = -5; }), Contains("rate -5.000000"));
  CHECK_THROWS_WITH(make([](auto& c) { c.rate = std::nan(""); }), Contains("is invalid"));
  CHECK_THROWS_WITH(make([](auto& c) { c.cpu = 4096; }),
                    Contains("udp sender cpu: CPU 4096 is not available (valid: -1 for any, or 0"));
  CHECK_NOTHROW(make([](auto& c) { c.mtu = 576; }));
  CHECK_NOTHROW(make([](auto& c) { c.mtu = 9500; }));
  CHECK_THROWS_WITH(parseEndpoint("127.0.0.1", "--to"),
                    Contains("--to '127.0.0.1' is invalid (valid: IPV4_ADDRESS:PORT"));
  CHECK_THROWS_WITH(parseEndpoint("127.0.0.1:x", "--to"), Contains("--to port 'x' is invalid"));
  CHECK(parseEndpoint("10.0.0.2:4750", "--to").port == 4750);
}

TEST_CASE("Bad receiver settings are refused, and a port in use is named", "[udp][arguments]") {
  const auto make = [](auto change) {
    UdpSourceConfig config = loopbackReceiver();
    change(config);
    UdpStreamSource source(config);
  };
  CHECK_THROWS_WITH(make([](auto& c) { c.address = "1.2.3"; }),
                    Contains("udp source address '1.2.3' is invalid"));
  CHECK_THROWS_WITH(make([](auto& c) { c.port = -1; }),
                    Contains("udp source port -1 is invalid (valid: 0..65535, 0 lets the system "
                             "choose)"));
  CHECK_THROWS_WITH(make([](auto& c) { c.receive_cpu = 4096; }),
                    Contains("CPU 4096 is not available"));
  CHECK_THROWS_WITH(make([](auto& c) { c.reorder_window = 65; }),
                    Contains("reorder_window 65 is invalid (valid: 0..64 datagrams)"));
  CHECK_THROWS_WITH(make([](auto& c) { c.block_size = 0; }), Contains("block_size 0 is invalid"));
  CHECK_THROWS_WITH(make([](auto& c) { c.idle_timeout_s = -1; }),
                    Contains("idle_timeout_s -1.000000 is invalid"));
  // A local address this machine does not have.
  CHECK_THROWS_AS(make([](auto& c) { c.address = "192.0.2.1"; }), IoError);

  UdpStreamSource first(loopbackReceiver());
  UdpSourceConfig same = loopbackReceiver();
  same.port = first.port();
  CHECK_THROWS_MATCHES(
      UdpStreamSource(same), IoError,
      Catch::Matchers::Message("udp source: cannot bind 127.0.0.1:" + std::to_string(first.port()) +
                               ": Address already in use (another program receives on this "
                               "port)"));
}

TEST_CASE("A receiver without data says that it is waiting, and where", "[udp][arguments]") {
  std::vector<std::string> notices;
  UdpSourceConfig config = loopbackReceiver(&notices);
  config.notice_interval_s = 0.1;
  UdpStreamSource receiver(config);
  auto stopper = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(350));
    receiver.requestStop();
  });
  BlockBuffer block;
  CHECK_FALSE(receiver.next(block));
  stopper.get();
  REQUIRE(notices.size() >= 2);
  CHECK(notices[0] == "waiting for datagrams on 127.0.0.1:" + std::to_string(receiver.port()));
  CHECK_THAT(notices[1], Contains("still waiting for datagrams on 127.0.0.1:"));
  CHECK(receiver.stats().datagrams_received == 0);
}
