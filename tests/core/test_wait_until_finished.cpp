// waitUntilFinished(timeout_ms): waits for a startFor() run; < 0 without limit, 0 polls;
// false on timeout, on an unbounded run (at once) and when the stream ended first. mayFinish()
// tells a waiter in slices whether to go on.
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <future>
#include <thread>

#include "support/probe.hpp"

using namespace tagflow;
using namespace tagflow::test;
using namespace std::chrono_literals;

namespace {

// Runs `wait` on another thread. If it has not returned within `limit`, stops `measurement`
// (which wakes every waiter, so the test ends instead of hanging) and returns false.
bool returnsWithin(Measurement& measurement, std::chrono::milliseconds limit,
                   std::function<bool()> wait, bool& result) {
  auto future = std::async(std::launch::async, std::move(wait));
  if (future.wait_for(limit) != std::future_status::ready) {
    measurement.stop();
    future.wait();
    return false;
  }
  result = future.get();
  return true;
}

}  // namespace

TEST_CASE("waitUntilFinished returns false at once on an unbounded run", "[lifecycle][wait]") {
  Probe probe("probe");
  bool result = true;
  REQUIRE(returnsWithin(
      probe, 10s, [&] { return probe.waitUntilFinished(-1); }, result));
  CHECK_FALSE(result);
  CHECK_FALSE(probe.waitUntilFinished(0));
  CHECK(probe.isRunning());
  CHECK_FALSE(probe.mayFinish());
  probe.stop();
  CHECK(probe.mayFinish());  // stopped: finished
}

TEST_CASE("waitUntilFinished times out while the duration is not reached", "[lifecycle][wait]") {
  Probe probe("probe");
  BlockFeeder feed(probe);
  probe.startFor(1000);
  feed.feed(0, 400);
  CHECK_FALSE(probe.waitUntilFinished(0));
  CHECK(probe.mayFinish());
  const auto began = std::chrono::steady_clock::now();
  CHECK_FALSE(probe.waitUntilFinished(30));
  CHECK(std::chrono::steady_clock::now() - began >= 29ms);
  CHECK(probe.isRunning());
}

TEST_CASE("waitUntilFinished wakes when another thread completes the duration",
          "[lifecycle][wait]") {
  Probe probe("probe");
  BlockFeeder feed(probe);
  probe.startFor(1000);
  std::thread graph_side([&] {
    std::this_thread::sleep_for(20ms);
    for (timestamp_t begin = 0; begin < 2000; begin += 300) feed.feed(begin, begin + 300);
  });
  const bool unlimited = probe.waitUntilFinished(-1);
  graph_side.join();
  CHECK(unlimited);
  CHECK_FALSE(probe.isRunning());
  CHECK(probe.getCaptureDuration() == 1000);
  CHECK(probe.waitUntilFinished(-1));  // a finished run stays finished
}

TEST_CASE("waitUntilFinished with a timeout returns true once the run finishes",
          "[lifecycle][wait]") {
  Probe probe("probe");
  BlockFeeder feed(probe);
  probe.startFor(500);
  std::thread graph_side([&] {
    std::this_thread::sleep_for(10ms);
    feed.feed(0, 600);
  });
  const auto began = std::chrono::steady_clock::now();
  const bool finished = probe.waitUntilFinished(20000);
  graph_side.join();
  CHECK(finished);
  CHECK(std::chrono::steady_clock::now() - began < 15s);
}

TEST_CASE("waitUntilFinished returns false when the stream ends before the duration",
          "[lifecycle][wait]") {
  Probe probe("probe");
  BlockFeeder feed(probe);
  probe.startFor(1000);
  feed.feed(0, 400);
  probe.streamEnded();
  bool result = true;
  REQUIRE(returnsWithin(
      probe, 10s, [&] { return probe.waitUntilFinished(-1); }, result));
  CHECK_FALSE(result);
  CHECK(probe.getCaptureDuration() == 400);
  CHECK_FALSE(probe.mayFinish());
}

TEST_CASE("stop() ends a pending startFor wait", "[lifecycle][wait]") {
  Probe probe("probe");
  probe.startFor(1000);
  std::thread stopper([&] {
    std::this_thread::sleep_for(10ms);
    probe.stop();
  });
  bool result = false;
  const bool returned = returnsWithin(
      probe, 10s, [&] { return probe.waitUntilFinished(-1); }, result);
  stopper.join();
  REQUIRE(returned);
  CHECK(result);
  CHECK_FALSE(probe.isRunning());
}
