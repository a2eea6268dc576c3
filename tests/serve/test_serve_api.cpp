// serve() and Server from C++: the page's snapshot of a finished run equals the measurement's
// own getters; "Stop run" ends serve() with the run's profile; a failing run is shown with
// its error and rethrown once stopped; bad options and a taken port are refused naming the
// value; a measurement removed while a snapshot reads it is not destroyed under it.
#include <catch2/catch.hpp>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "tagflow/core/error.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/serve/server.hpp"

using namespace tagflow;
using Catch::Contains;
using namespace std::chrono_literals;

namespace {

namespace http = boost::beast::http;

// One request on a fresh connection: (status, body).
std::pair<int, std::string> request(int port, http::verb verb, const std::string& target,
                                    const std::string& body = {}) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
  http::request<http::string_body> out{verb, target, 11};
  out.set(http::field::host, "127.0.0.1");
  if (verb == http::verb::post) out.set(http::field::content_type, "application/json");
  out.body() = body;
  out.prepare_payload();
  http::write(socket, out);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> in;
  http::read(socket, buffer, in);
  return {in.result_int(), in.body()};
}

nlohmann::json snapshot(int port) {
  const auto [status, body] = request(port, http::verb::get, "/api/snapshot");
  REQUIRE(status == 200);
  return nlohmann::json::parse(body);
}

// Polls until the run's state is no longer "running".
nlohmann::json awaitRunEnd(int port) {
  for (int i = 0; i < 600; ++i) {
    nlohmann::json now = snapshot(port);
    if (now["run"]["state"] != "running") return now;
    std::this_thread::sleep_for(50ms);
  }
  FAIL("the run did not end within 30 s");
  return {};
}

SyntheticConfig shortStream() {
  SyntheticConfig config;
  config.channels = {SyntheticChannel::poisson(1, 1e6), SyntheticChannel::poisson(2, 3e5)};
  config.duration_ps = 20'000'000'000;  // 20 ms
  config.seed = 9;
  return config;
}

class FailingMeasurement : public Measurement {
 public:
  FailingMeasurement() : Measurement("Failing", "failing", {}) {}

 protected:
  void processTimeTags(std::span<const Tag>) override {
    throw DataError("the detector caught fire");
  }
  void clearData() override {}
  void collectResults(ResultSet&) const override {}
};

// The order of a snapshot against a removal: the snapshot reads the gate, which waits (at most
// 1 s) for the removal of the watched measurement; the watched one notes a read made after its
// removal had returned, when its owner could already have destroyed it.
struct RemovalRace {
  std::mutex mutex;
  std::condition_variable changed;
  bool gate_entered = false;
  bool removed = false;
  bool read_after_removal = false;
};

class Gate : public Measurement {
 public:
  explicit Gate(RemovalRace& race) : Measurement("Gate", "gate", {}), race_(race) {}

 protected:
  void processTimeTags(std::span<const Tag>) override {}
  void clearData() override {}
  void collectResults(ResultSet&) const override {
    std::unique_lock lock(race_.mutex);
    race_.gate_entered = true;
    race_.changed.notify_all();
    race_.changed.wait_for(lock, 1s, [this] { return race_.removed; });
  }

 private:
  RemovalRace& race_;
};

class Watched : public Measurement {
 public:
  explicit Watched(RemovalRace& race) : Measurement("Watched", "watched", {}), race_(race) {}

 protected:
  void processTimeTags(std::span<const Tag>) override {}
  void clearData() override {}
  void collectResults(ResultSet&) const override {
    std::lock_guard lock(race_.mutex);
    if (race_.removed) race_.read_after_removal = true;
  }

 private:
  RemovalRace& race_;
};

}  // namespace

TEST_CASE("serve() shows the finished run until Stop run, then returns its profile",
          "[graph][serve]") {
  SyntheticSource source(shortStream());
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  auto& counter =
      graph.emplace<Counter>("counter", std::vector<channel_t>{1, 2}, 1'000'000'000, 20);
  ServeOptions options;
  options.port = 0;
  options.source = &source;
  std::promise<int> port_promise;
  auto served = std::async(std::launch::async, [&] {
    return serve(graph, options, -1, [&](Server& server) {
      CHECK(server.url() == "http://127.0.0.1:" + std::to_string(server.port()) + "/");
      CHECK(server.token().empty());
      port_promise.set_value(server.port());
    });
  });
  const int port = port_promise.get_future().get();
  const nlohmann::json done = awaitRunEnd(port);
  CHECK(done["run"]["state"] == "finished");
  CHECK(done["source"]["description"] == source.describe());
  const nlohmann::json& shown = done["measurements"][0];
  CHECK(shown["name"] == "counter");
  CHECK(shown["arrays"]["data"]["shape"] == nlohmann::json::array({2, 20}));
  CHECK(shown["arrays"]["data"]["data"].get<std::vector<std::int64_t>>() == counter.getData());
  CHECK(shown["capture_duration_ps"] == counter.getCaptureDuration());
  CHECK(served.wait_for(200ms) == std::future_status::timeout);  // still serving

  CHECK(request(port, http::verb::post, "/api/control", R"({"action": "stop_run"})") ==
        std::pair<int, std::string>{200, R"({"ok":true})"});
  const Profile profile = served.get();
  CHECK(profile.tags == done["profile"]["tags"].get<std::uint64_t>());
  CHECK(profile.stream_duration_ps == 20'000'000'000);
}

TEST_CASE("serve() shows a failing run's error and rethrows it once stopped", "[graph][serve]") {
  SyntheticSource source(shortStream());
  MeasurementGraph graph(source);
  graph.emplace<FailingMeasurement>();
  ServeOptions options;
  options.port = 0;
  std::promise<Server*> server_promise;
  auto served = std::async(std::launch::async, [&] {
    return serve(graph, options, -1, [&](Server& server) { server_promise.set_value(&server); });
  });
  Server* server = server_promise.get_future().get();
  const nlohmann::json failed = awaitRunEnd(server->port());
  CHECK(failed["run"]["state"] == "failed");
  CHECK_THAT(failed["run"]["error"].get<std::string>(), Contains("the detector caught fire"));
  server->requestStop();
  CHECK_THROWS_WITH(served.get(), Contains("the detector caught fire"));
}

TEST_CASE("A server refuses bad options and a taken port, naming them", "[serve]") {
  SyntheticSource source(shortStream());
  MeasurementGraph graph(source);
  graph.emplace<Counter>("counter", std::vector<channel_t>{1});
  const auto refused = [&](auto change) {
    ServeOptions options;
    options.port = 0;
    change(options);
    return Server(graph, options);
  };
  CHECK_THROWS_WITH(refused([](ServeOptions& o) { o.update_hz = 0.5; }),
                    Contains("update rate 0.5 Hz is invalid (valid: 1 to 60)"));
  CHECK_THROWS_WITH(refused([](ServeOptions& o) { o.port = 70000; }),
                    Contains("port 70000 is invalid (valid: 0 to 65535"));
  CHECK_THROWS_WITH(refused([](ServeOptions& o) { o.address = "localhost:80"; }),
                    Contains("address 'localhost:80' is invalid"));
  CHECK_THROWS_WITH(refused([](ServeOptions& o) { o.web_root = "/nonexistent"; }),
                    Contains("web folder '/nonexistent' has no index.html"));
  ServeOptions first;
  first.port = 0;
  const Server taken(graph, first);
  ServeOptions second;
  second.port = taken.port();
  CHECK_THROWS_AS(Server(graph, second), IoError);
  CHECK_THROWS_WITH(Server(graph, second),
                    Contains("cannot listen on 127.0.0.1:" + std::to_string(taken.port())));
  ServeOptions open;
  open.port = 0;
  open.address = "0.0.0.0";
  const Server public_server(graph, open);
  CHECK(public_server.token().size() == 32);
  CHECK_THAT(public_server.url(), Contains("?token=" + public_server.token()));
}

TEST_CASE("Removing a measurement waits for the snapshot that reads it", "[graph][serve]") {
  SyntheticSource source(shortStream());
  MeasurementGraph graph(source);
  RemovalRace race;
  graph.emplace<Gate>(race);
  Watched watched(race);
  graph.add(watched);
  ServeOptions options;
  options.port = 0;
  const Server server(graph, options);
  auto reading = std::async(
      std::launch::async, [&] { return request(server.port(), http::verb::get, "/api/snapshot"); });
  {
    std::unique_lock lock(race.mutex);
    race.changed.wait(lock, [&] { return race.gate_entered; });
  }
  std::thread remover([&] {
    graph.remove(watched);
    std::lock_guard lock(race.mutex);
    race.removed = true;
    race.changed.notify_all();
  });
  const auto [status, body] = reading.get();
  remover.join();
  CHECK_FALSE(race.read_after_removal);
  REQUIRE(status == 200);
  CHECK(nlohmann::json::parse(body)["measurements"].size() == 2);
  CHECK(snapshot(server.port())["measurements"].size() == 1);
}

TEST_CASE("A graph destroyed before its server is read no more", "[graph][serve]") {
  SyntheticSource source(shortStream());
  auto graph = std::make_unique<MeasurementGraph>(source);
  graph->emplace<Counter>("counter", std::vector<channel_t>{1});
  ServeOptions options;
  options.port = 0;
  Server server(*graph, options);
  const int port = server.port();
  REQUIRE(snapshot(port)["measurements"].size() == 1);
  // A page keeps asking while the graph goes (each answer whole: a snapshot, or 503 after).
  std::atomic<bool> graph_gone{false};
  auto asking = std::async(std::launch::async, [&] {
    int after = 0;
    while (after < 3) {
      const bool gone_before = graph_gone.load();
      const auto [status, body] = request(port, http::verb::get, "/api/snapshot");
      CHECK((status == 200 || status == 503));
      if (gone_before) {
        CHECK(status == 503);
        ++after;
      }
    }
  });
  std::this_thread::sleep_for(20ms);
  graph.reset();  // the Counter it owns goes with it
  graph_gone = true;
  asking.get();
  const auto [status, body] = request(port, http::verb::get, "/api/snapshot");
  CHECK(status == 503);
  CHECK_THAT(body, Contains("has ended"));
  CHECK(request(port, http::verb::post, "/api/control", R"({"action":"stop_run"})").first == 503);
  CHECK(request(port, http::verb::get, "/").first == 200);  // the page itself is still there
  server.requestStop();
  CHECK(server.stopRequested());
}
