#include "tagflow/serve/server.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "control.hpp"
#include "snapshot.hpp"
#include "static_files.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/io/source_registry.hpp"

namespace tagflow {

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxConnections = 128;
constexpr std::uint32_t kMaxHeaderBytes = 16 * 1024;
constexpr std::uint64_t kMaxBodyBytes = 64 * 1024;
constexpr auto kHttpTimeout = std::chrono::seconds(30);

// Stands for the source when the graph's is not named: the page then shows no statistics.
class UnnamedSource final : public Source {
 public:
  bool next(BlockBuffer&) override { return false; }
  std::size_t maxBlockTags() const override { return 0; }
  std::string describe() const override { return "(not described)"; }
};

std::string randomToken() {
  std::random_device device;
  std::string token;
  for (int i = 0; i < 4; ++i) token += fmt::format("{:08x}", device());
  return token;
}

std::string_view view(beast::string_view text) {
  return {text.data(), text.size()};
}

bool isLoopback(const net::ip::address& address) {
  return address.is_loopback();
}

// As host names and media types compare.
bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  return beast::iequals(beast::string_view(a.data(), a.size()),
                        beast::string_view(b.data(), b.size()));
}

// The name in a Host header: "127.0.0.1:8080" -> "127.0.0.1", "[::1]:8080" -> "::1".
std::string_view hostName(std::string_view host) {
  if (host.starts_with('[')) return host.substr(1, host.find(']') - 1);
  return host.substr(0, host.find(':'));
}

bool isLoopbackName(std::string_view name) {
  if (equalsIgnoringCase(name, "localhost")) return true;
  boost::system::error_code error;
  const net::ip::address address = net::ip::make_address(name, error);
  return !error && isLoopback(address);
}

// Content-Type application/json, with parameters or without.
bool isJson(const Request& request) {
  const auto field = request.find(http::field::content_type);
  if (field == request.end()) return false;
  std::string_view type = view(field->value());
  type = type.substr(0, type.find(';'));
  while (type.ends_with(' ') || type.ends_with('\t')) type.remove_suffix(1);
  return equalsIgnoringCase(type, "application/json");
}

// The value of `key` in a query string "a=1&token=x", %-decoded.
std::optional<std::string> queryValue(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const std::size_t end = query.find('&');
    const std::string_view pair = query.substr(0, end);
    const std::size_t equals = pair.find('=');
    if (pair.substr(0, equals) == key && equals != std::string_view::npos) {
      return serve_detail::percentDecode(pair.substr(equals + 1));
    }
    if (end == std::string_view::npos) break;
    query.remove_prefix(end + 1);
  }
  return std::nullopt;
}

// Compares in time independent of where the strings differ.
bool sameSecret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

Response textResponse(const Request& request, http::status status, std::string body,
                      std::string content_type) {
  Response response{status, request.version()};
  response.set(http::field::server, "tagflow");
  response.set(http::field::content_type, content_type);
  response.set(http::field::cache_control, "no-store");
  response.keep_alive(request.keep_alive());
  response.body() = std::move(body);
  response.prepare_payload();
  return response;
}

// For HEAD of an answer that is made anew for each request: its length is known only once it
// is made, which a HEAD need not pay for (RFC 9110 lets it go without Content-Length).
Response unmadeResponse(const Request& request, std::string content_type) {
  Response response = textResponse(request, http::status::ok, {}, std::move(content_type));
  response.erase(http::field::content_length);
  return response;
}

Response jsonResponse(const Request& request, http::status status, const nlohmann::json& body) {
  return textResponse(request, status, body.dump(), "application/json");
}

Response errorResponse(const Request& request, http::status status, std::string message) {
  return jsonResponse(request, status, {{"error", std::move(message)}});
}

std::string readWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot read back the results file " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

class Server::Impl : public MeasurementGraph::Observer {
 public:
  Impl(MeasurementGraph& graph, ServeOptions options);
  ~Impl();
  // The graph is being destroyed: waits for a read of it in progress, and reads it no more.
  void graphEnding() override;

  int port() const { return port_; }
  const std::string& token() const { return token_; }
  double cpuSeconds();
  std::string url() const;
  void setRunState(RunState state, std::string error);
  void setFinalProfile(Profile profile);
  void requestStop();
  bool stopRequested() const { return stop_requested_.load(); }
  void waitUntilStopRequested();

  // Called on the server's thread by the sessions.
  bool admitConnection() { return connections_.load() < kMaxConnections; }
  std::atomic<std::size_t>& connections() { return connections_; }
  // Why a data or control request (/api, /ws) is refused; nullopt when it is not.
  std::optional<std::string> refusal(const Request& request) const;
  Response handle(const Request& request);
  class HttpSession;
  class WebSocketSession;
  void addClient(const std::shared_ptr<WebSocketSession>& client);

 private:
  void accept();
  void scheduleTick();
  void broadcastSnapshot();
  bool hasToken(const Request& request) const;
  std::string snapshotText();
  Response respond(const Request& request);
  Response resultsFile(const Request& request);
  std::string resultsFileBytes();
  Response control(const Request& request);

  MeasurementGraph& graph_;
  // Held while the server's thread reads the graph; once the graph has ended (destroyed
  // before this server) its endpoints answer 503 and no snapshot is made.
  std::mutex graph_mutex_;
  std::atomic<bool> graph_ended_{false};
  ServeOptions options_;
  UnnamedSource unnamed_source_;
  const Source& source_;
  std::string web_root_;
  std::string token_;
  Clock::time_point started_ = Clock::now();

  // Declared before the I/O context: the sessions its destructor destroys still count down.
  std::atomic<std::size_t> connections_{0};
  net::io_context io_;
  tcp::acceptor acceptor_{io_};
  net::steady_timer ticker_{io_};
  std::string address_text_;
  int port_ = 0;
  std::vector<std::weak_ptr<WebSocketSession>> clients_;  // the server's thread only
  std::uint64_t snapshots_sent_ = 0;

  mutable std::mutex state_mutex_;
  serve_detail::RunStatus status_;
  std::optional<Profile> final_profile_;
  std::atomic<bool> stop_requested_{false};
  std::condition_variable stop_cv_;

  std::thread thread_;
};

// Counts itself as a connection while it lives.
class ConnectionCount {
 public:
  explicit ConnectionCount(std::atomic<std::size_t>& count) : count_(count) { ++count_; }
  ~ConnectionCount() { --count_; }
  ConnectionCount(const ConnectionCount&) = delete;
  ConnectionCount& operator=(const ConnectionCount&) = delete;

 private:
  std::atomic<std::size_t>& count_;
};

// A page's WebSocket: snapshots go out as text messages; a slow page gets the newest snapshot
// when it is ready for one, never a growing queue. What the page sends is read and dropped
// (the read also answers pings and notices a closed connection).
class Server::Impl::WebSocketSession : public std::enable_shared_from_this<WebSocketSession> {
 public:
  WebSocketSession(tcp::socket socket, Impl& server, Request upgrade)
      : stream_(std::move(socket)),
        server_(server),
        upgrade_(std::move(upgrade)),
        count_(server.connections()) {}

  void run() {
    stream_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    stream_.read_message_max(kMaxBodyBytes);
    stream_.auto_fragment(false);  // a snapshot goes out as one frame
    stream_.async_accept(upgrade_, [self = shared_from_this()](beast::error_code error) {
      if (error) return;
      self->server_.addClient(self);
      self->read();
    });
  }

  void send(std::shared_ptr<const std::string> message) {
    if (writing_) {
      pending_ = std::move(message);
      return;
    }
    writing_ = std::move(message);
    stream_.text(true);
    stream_.async_write(net::buffer(*writing_),
                        [self = shared_from_this()](beast::error_code error, std::size_t) {
                          self->writing_.reset();
                          if (error || !self->pending_) return;
                          self->send(std::exchange(self->pending_, nullptr));
                        });
  }

 private:
  void read() {
    stream_.async_read(incoming_,
                       [self = shared_from_this()](beast::error_code error, std::size_t) {
                         if (error) return;
                         self->incoming_.consume(self->incoming_.size());
                         self->read();
                       });
  }

  websocket::stream<beast::tcp_stream> stream_;
  Impl& server_;
  Request upgrade_;
  ConnectionCount count_;
  beast::flat_buffer incoming_;
  std::shared_ptr<const std::string> writing_;
  std::shared_ptr<const std::string> pending_;
};

// One HTTP connection: requests in turn (keep-alive), each with bounded header and body and a
// timeout; a request that does not parse gets 400 and the connection is closed.
class Server::Impl::HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, Impl& server)
      : stream_(std::move(socket)), server_(server), count_(server.connections()) {}

  void run() { read(); }

 private:
  void read() {
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    parser_->body_limit(kMaxBodyBytes);
    stream_.expires_after(kHttpTimeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code error, std::size_t) { self->onRead(error); });
  }

  void onRead(beast::error_code error) {
    if (error == http::error::end_of_stream || error == beast::error::timeout ||
        error == net::error::operation_aborted) {
      close();
      return;
    }
    if (error) {
      if (error.category() == http::make_error_code(http::error::bad_target).category()) {
        Request bad;
        bad.version(11);
        bad.keep_alive(false);
        write(errorResponse(bad, http::status::bad_request,
                            "malformed HTTP request: " + error.message()));
      } else {
        close();
      }
      return;
    }
    Request request = parser_->release();
    if (websocket::is_upgrade(request)) {
      upgrade(std::move(request));
      return;
    }
    write(server_.handle(request), request.method() == http::verb::head);
  }

  void upgrade(Request request) {
    const std::string_view target = view(request.target());
    if (target.substr(0, target.find('?')) != "/ws") {
      write(errorResponse(request, http::status::not_found, "WebSocket only at /ws"));
      return;
    }
    if (const auto why = server_.refusal(request)) {
      write(errorResponse(request, http::status::forbidden, *why));
      return;
    }
    stream_.expires_never();
    std::make_shared<WebSocketSession>(stream_.release_socket(), server_, std::move(request))
        ->run();
  }

  // A HEAD answer ends with its headers, also when they give no Content-Length (which would
  // otherwise mean that the body runs to the end of the connection).
  void write(Response response, bool head = false) {
    auto shared = std::make_shared<Response>(std::move(response));
    http::async_write(
        stream_, *shared,
        [self = shared_from_this(), shared, head](beast::error_code error, std::size_t) {
          if (error || (head ? !shared->keep_alive() : shared->need_eof())) {
            self->close();
          } else {
            self->read();
          }
        });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  Impl& server_;
  ConnectionCount count_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
};

Server::Impl::Impl(MeasurementGraph& graph, ServeOptions options)
    : graph_(graph),
      options_(std::move(options)),
      source_(options_.source != nullptr ? *options_.source : unnamed_source_),
      web_root_(options_.web_root.empty() ? defaultWebRoot() : options_.web_root) {
  if (!(options_.update_hz >= 1 && options_.update_hz <= 60)) {
    throw InvalidArgument(
        fmt::format("update rate {} Hz is invalid (valid: 1 to 60)", options_.update_hz));
  }
  if (options_.port < 0 || options_.port > 65535) {
    throw InvalidArgument(
        fmt::format("port {} is invalid (valid: 0 to 65535, 0 for any free port)", options_.port));
  }
  std::error_code fs_error;
  if (!std::filesystem::is_regular_file(std::filesystem::path(web_root_) / "index.html",
                                        fs_error)) {
    throw InvalidArgument("web folder '" + web_root_ +
                          "' has no index.html (set TAGFLOW_WEB_ROOT or the web_root option)");
  }
  boost::system::error_code error;
  const net::ip::address address = net::ip::make_address(options_.address, error);
  // make_address reads up to a NUL character; what follows it would be dropped unseen.
  if (error || options_.address.find('\0') != std::string::npos) {
    std::string shown = options_.address;  // a NUL would end the message too
    for (std::size_t at = shown.find('\0'); at != std::string::npos; at = shown.find('\0', at)) {
      shown.replace(at, 1, "\\0");
    }
    throw InvalidArgument("address '" + shown +
                          "' is invalid (valid: an IPv4 or IPv6 address, e.g. 127.0.0.1)");
  }
  token_ = options_.token;
  if (token_.empty() && !isLoopback(address)) token_ = randomToken();

  const tcp::endpoint endpoint(address, static_cast<unsigned short>(options_.port));
  acceptor_.open(endpoint.protocol(), error);
  if (!error) acceptor_.set_option(net::socket_base::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (!error) acceptor_.listen(net::socket_base::max_listen_connections, error);
  if (error) {
    throw IoError(fmt::format("cannot listen on {}:{}: {}", options_.address, options_.port,
                              error.message()));
  }
  port_ = acceptor_.local_endpoint().port();
  address_text_ = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  accept();
  scheduleTick();
  thread_ = std::thread([this] {
    // A handler that throws ends only what it was doing; the server goes on.
    for (;;) {
      try {
        io_.run();
        return;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "tagflow serve: %s\n", e.what());
      }
    }
  });
  graph_.attach(*this);
}

Server::Impl::~Impl() {
  if (!graph_ended_.load()) graph_.detach(*this);
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

double Server::Impl::cpuSeconds() {
  clockid_t clock{};
  timespec used{};
  if (pthread_getcpuclockid(thread_.native_handle(), &clock) != 0 ||
      clock_gettime(clock, &used) != 0) {
    return 0;
  }
  return static_cast<double>(used.tv_sec) + 1e-9 * static_cast<double>(used.tv_nsec);
}

std::string Server::Impl::url() const {
  std::string url = fmt::format("http://{}:{}/", address_text_, port_);
  if (!token_.empty()) url += "?token=" + token_;
  return url;
}

void Server::Impl::setRunState(RunState state, std::string error) {
  static constexpr const char* kNames[] = {"running", "finished", "stopped", "failed"};
  std::lock_guard lock(state_mutex_);
  status_.state = kNames[static_cast<int>(state)];
  status_.error = std::move(error);
}

void Server::Impl::setFinalProfile(Profile profile) {
  std::lock_guard lock(state_mutex_);
  final_profile_ = std::move(profile);
}

void Server::Impl::requestStop() {
  // The flag before the graph is asked: whoever sees its run end early must also see why. All
  // under the lock: a woken waitUntilStopRequested() may return and let serve() destroy this
  // server, which it cannot do before the lock is released.
  std::lock_guard lock(state_mutex_);
  stop_requested_.store(true);
  if (!graph_ended_.load()) graph_.requestStop();
  stop_cv_.notify_all();
}

void Server::Impl::graphEnding() {
  std::lock_guard lock(graph_mutex_);
  graph_ended_.store(true);
}

void Server::Impl::waitUntilStopRequested() {
  std::unique_lock lock(state_mutex_);
  stop_cv_.wait(lock, [this] { return stop_requested_.load(); });
}

void Server::Impl::accept() {
  acceptor_.async_accept(net::make_strand(io_),
                         [this](beast::error_code error, tcp::socket socket) {
                           if (error == net::error::operation_aborted) return;
                           if (!error) {
                             if (admitConnection()) {
                               std::make_shared<HttpSession>(std::move(socket), *this)->run();
                             } else {
                               beast::error_code ignored;
                               socket.close(ignored);
                             }
                           }
                           accept();
                         });
}

// Any page a browser shows may send requests here, and the browser says which site's page
// sends one (Origin): only this server's own page may read data or act. Without a token, a name
// of another site that resolves to this address (DNS rebinding) would make that site's page
// this server's own: only loopback names are served then.
std::optional<std::string> Server::Impl::refusal(const Request& request) const {
  const auto host_field = request.find(http::field::host);
  const std::string_view host = host_field == request.end() ? "" : view(host_field->value());
  if (const auto origin = request.find(http::field::origin); origin != request.end()) {
    if (host.empty() || !equalsIgnoringCase(view(origin->value()), "http://" + std::string(host))) {
      return fmt::format("requests from the page of another site ({}) are refused",
                         view(origin->value()));
    }
  }
  if (token_.empty()) {
    if (host.empty() || isLoopbackName(hostName(host))) return std::nullopt;
    return fmt::format("host '{}' is not served here (valid: localhost or a loopback address)",
                       host);
  }
  if (hasToken(request)) return std::nullopt;
  return "this server requires its token: add ?token=... as printed at start";
}

bool Server::Impl::hasToken(const Request& request) const {
  const std::string_view target = view(request.target());
  const std::size_t question = target.find('?');
  if (question != std::string_view::npos) {
    const auto given = queryValue(target.substr(question + 1), "token");
    if (given && sameSecret(*given, token_)) return true;
  }
  const auto header = request.find(http::field::authorization);
  if (header != request.end()) {
    const std::string_view value = view(header->value());
    if (value.substr(0, 6) == "token " && sameSecret(value.substr(6), token_)) return true;
  }
  return false;
}

Response Server::Impl::handle(const Request& request) {
  Response response = respond(request);
  // The headers a GET would get, its Content-Length included; a keep-alive client reads no
  // body after them.
  if (request.method() == http::verb::head) response.body().clear();
  return response;
}

Response Server::Impl::respond(const Request& request) {
  const std::string_view target = view(request.target());
  const std::string_view path = target.substr(0, target.find('?'));
  const bool is_api = path.substr(0, 5) == "/api/" || path == "/ws";
  try {
    if (is_api) {
      if (const auto why = refusal(request)) {
        return errorResponse(request, http::status::forbidden, *why);
      }
    }
    const auto method = request.method();
    std::unique_lock graph_lock(graph_mutex_, std::defer_lock);
    if (path == "/api/control" || path == "/api/graph" || path == "/api/snapshot" ||
        path == "/api/results.h5") {
      graph_lock.lock();
      if (graph_ended_.load()) {
        return errorResponse(request, http::status::service_unavailable,
                             "the graph this view showed has ended (it was destroyed)");
      }
    }
    if (path == "/api/control") {
      if (method != http::verb::post) {
        return errorResponse(request, http::status::method_not_allowed, "use POST");
      }
      // Besides the Origin check: a page of another site may POST text/plain without asking
      // first (no CORS preflight), but not JSON.
      if (!isJson(request)) {
        return errorResponse(request, http::status::unsupported_media_type,
                             "Content-Type must be application/json");
      }
      return control(request);
    }
    if (method != http::verb::get && method != http::verb::head) {
      return errorResponse(request, http::status::method_not_allowed,
                           "method not allowed (valid: GET, HEAD; POST for /api/control)");
    }
    if (path == "/api/graph") {
      return jsonResponse(request, http::status::ok,
                          serve_detail::graphJson(graph_, source_, options_.update_hz));
    }
    if (path == "/api/snapshot") {
      // Each GET makes (and numbers) a snapshot; a HEAD makes none.
      if (method == http::verb::head) return unmadeResponse(request, "application/json");
      return textResponse(request, http::status::ok, snapshotText(), "application/json");
    }
    if (path == "/api/results.h5") return resultsFile(request);
    if (is_api) return errorResponse(request, http::status::not_found, "no such endpoint");
    auto file = serve_detail::readStaticFile(web_root_, path);
    if (!file) return textResponse(request, http::status::not_found, "not found\n", "text/plain");
    return textResponse(request, http::status::ok, std::move(file->body), file->content_type);
  } catch (const std::exception& e) {
    return errorResponse(request, http::status::internal_server_error, e.what());
  }
}

Response Server::Impl::control(const Request& request) {
  bool stream_ended = false;
  {
    std::lock_guard lock(state_mutex_);
    stream_ended = status_.state != "running";
  }
  const serve_detail::ControlOutcome outcome = serve_detail::applyControl(
      graph_, request.body(), [this] { requestStop(); }, stream_ended);
  if (!outcome.ok) return errorResponse(request, http::status::bad_request, outcome.error);
  return jsonResponse(request, http::status::ok, {{"ok", true}});
}

Response Server::Impl::resultsFile(const Request& request) {
  // Writing the file is the cost of this answer: a HEAD gets the headers without it.
  Response response =
      request.method() == http::verb::head
          ? unmadeResponse(request, "application/x-hdf5")
          : textResponse(request, http::status::ok, resultsFileBytes(), "application/x-hdf5");
  response.set(http::field::content_disposition, "attachment; filename=\"results.h5\"");
  return response;
}

std::string Server::Impl::resultsFileBytes() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "tagflow-serve-XXXXXX.h5").string();
  const int fd = ::mkstemps(pattern.data(), 3);
  if (fd < 0) throw IoError("cannot create a temporary file for the results: " + pattern);
  ::close(fd);
  struct RemoveAfter {
    std::string path;
    ~RemoveAfter() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  } remove_after{pattern};

  std::vector<ResultSet> results;
  graph_.withMeasurements([&](const std::vector<Measurement*>& measurements) {
    for (const Measurement* measurement : measurements) {
      results.push_back(measurement->getResults());
    }
  });
  RunInfo info = runInfoOf(source_, graph_, options_.config_text);
  Profile profile;
  {
    std::lock_guard lock(state_mutex_);
    info.checkpoint = !final_profile_.has_value();
    profile = final_profile_ ? *final_profile_ : graph_.liveProfile();
    info.interrupted = status_.state == "stopped";
  }
  writeResultsHdf5(pattern, results, profile, info);
  return readWholeFile(pattern);
}

std::string Server::Impl::snapshotText() {
  std::vector<std::string> unreadable;
  nlohmann::json measurements = serve_detail::measurementsJson(graph_, unreadable);
  serve_detail::RunStatus status;
  Profile profile;
  {
    std::lock_guard lock(state_mutex_);
    status = status_;
    if (final_profile_) profile = *final_profile_;
  }
  // run.error is where the page shows trouble: a measurement that cannot be read is named
  // there, while the page keeps what it last got of it; the next snapshot tries again.
  if (!status.error.empty()) unreadable.insert(unreadable.begin(), status.error);
  status.error = fmt::format("{}", fmt::join(unreadable, "; "));
  if (profile.nodes.empty()) profile = graph_.liveProfile();
  const double elapsed_s = std::chrono::duration<double>(Clock::now() - started_).count();
  return serve_detail::snapshotJson(snapshots_sent_++, elapsed_s, status, profile, source_,
                                    std::move(measurements), serve_detail::channelsJson(graph_))
      .dump();
}

void Server::Impl::addClient(const std::shared_ptr<WebSocketSession>& client) {
  clients_.push_back(client);
  std::lock_guard lock(graph_mutex_);
  if (!graph_ended_.load()) client->send(std::make_shared<const std::string>(snapshotText()));
}

void Server::Impl::scheduleTick() {
  ticker_.expires_after(std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / options_.update_hz)));
  ticker_.async_wait([this](beast::error_code error) {
    if (error) return;
    try {
      broadcastSnapshot();
    } catch (const std::exception& e) {
      // One snapshot that fails must not end the page's updates for good.
      std::fprintf(stderr, "tagflow serve: %s\n", e.what());
    }
    // After the snapshot: a slow one lowers the rate rather than keeping the thread busy.
    scheduleTick();
  });
}

void Server::Impl::broadcastSnapshot() {
  std::erase_if(clients_, [](const auto& client) { return client.expired(); });
  if (clients_.empty()) return;  // nothing is read from the graph while no page looks
  std::unique_lock lock(graph_mutex_);
  if (graph_ended_.load()) return;
  const auto message = std::make_shared<const std::string>(snapshotText());
  lock.unlock();
  for (const auto& weak : clients_) {
    if (const auto client = weak.lock()) client->send(message);
  }
}

Server::Server(MeasurementGraph& graph, ServeOptions options)
    : impl_(std::make_unique<Impl>(graph, std::move(options))) {}
Server::~Server() = default;
int Server::port() const {
  return impl_->port();
}
const std::string& Server::token() const {
  return impl_->token();
}
std::string Server::url() const {
  return impl_->url();
}
double Server::cpuSeconds() const {
  return impl_->cpuSeconds();
}
void Server::setRunState(RunState state, std::string error) {
  impl_->setRunState(state, std::move(error));
}
void Server::setFinalProfile(Profile final_profile) {
  impl_->setFinalProfile(std::move(final_profile));
}
void Server::requestStop() {
  impl_->requestStop();
}
bool Server::stopRequested() const {
  return impl_->stopRequested();
}
void Server::waitUntilStopRequested() {
  impl_->waitUntilStopRequested();
}

std::string defaultWebRoot() {
  if (const char* root = std::getenv("TAGFLOW_WEB_ROOT"); root != nullptr && *root != '\0') {
    return root;
  }
  std::error_code error;
  const auto executable = std::filesystem::read_symlink("/proc/self/exe", error);
  std::vector<std::filesystem::path> candidates;
  if (!error) {
    candidates.push_back(executable.parent_path().parent_path() / "share" / "tagflow" / "web");
  }
  candidates.emplace_back(TAGFLOW_WEB_BUILD_DIR);
  candidates.emplace_back(TAGFLOW_WEB_INSTALL_DIR);
  for (const auto& candidate : candidates) {
    if (std::filesystem::is_regular_file(candidate / "index.html", error)) {
      return candidate.string();
    }
  }
  return candidates.back().string();
}

Profile serve(MeasurementGraph& graph, const ServeOptions& options, timestamp_t duration_ps,
              const std::function<void(Server&)>& on_listening) {
  Server server(graph, options);
  if (on_listening) on_listening(server);
  Profile profile;
  try {
    profile = graph.run(duration_ps);
  } catch (const std::exception& e) {
    server.setRunState(RunState::Failed, e.what());
    server.waitUntilStopRequested();
    throw;
  }
  server.setFinalProfile(profile);
  server.setRunState(server.stopRequested() ? RunState::Stopped : RunState::Finished);
  server.waitUntilStopRequested();
  return profile;
}

}  // namespace tagflow
