// Server: the live view of a running MeasurementGraph in a web browser (docs/serve.md). It
// serves the page from its folder, and under /api and /ws: snapshots of every measurement, the
// live profile and the source's statistics (over a WebSocket, `update_hz` times a second), the
// controls (start, stop, clear, startFor of a measurement; stop the run), and the current
// results as the HDF5 file `tagflow run` writes.
//
// One thread of the server's own does all network work; the graph's run never waits for it: a
// snapshot reads each measurement through its getters (the measurement's lock, briefly), and
// nothing is computed while no page is connected. Only MeasurementGraph::remove() waits, for a
// snapshot that reads the measurement it removes, so that its owner may destroy it after. A
// malformed request or WebSocket frame ends that connection with an error, never the server or
// the run. A graph destroyed before its server (not at the same time, from two threads) waits
// for a read of it in progress; after that the server answers its data and control requests
// with 503 and sends no snapshots. Python's Server keeps its Graph alive.
//
// Safe by default: listens on 127.0.0.1; on any other address every /api and /ws request must
// carry the token (a random one unless given), which url() includes. Requests of other sites'
// pages are refused: a foreign Origin, a Host that is not a loopback name while no token is
// required, a control request that is not JSON.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/core/profile.hpp"
#include "tagflow/core/source.hpp"

namespace tagflow {

struct ServeOptions {
  std::string address = "127.0.0.1";
  int port = 8080;        // 0: any free port (port() says which)
  double update_hz = 10;  // snapshots per second to each page, 1 to 60
  std::string web_root;   // the page's folder; empty: defaultWebRoot()
  // Required with every data and control request when not empty. Empty: none on a loopback
  // address, a random one on any other.
  std::string token;
  // The source the page describes; nullptr: none (a graph does not expose its source).
  const Source* source = nullptr;
  std::string config_text;  // stored with the downloaded results
};

enum class RunState { Running, Finished, Stopped, Failed };

class Server {
 public:
  // Listens at once. InvalidArgument naming the value for a bad address, port, rate or web
  // folder; IoError naming the address when it cannot be bound.
  Server(MeasurementGraph& graph, ServeOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const;
  const std::string& token() const;
  // http://ADDRESS:PORT/, with ?token=... when a token is required.
  std::string url() const;

  // CPU time the server's thread has used so far, in seconds: what the view costs the machine
  // (tagflow-bench --serve).
  double cpuSeconds() const;

  // What the page shows about the run. Once the run has ended, `final_profile` (what run()
  // returned) replaces the live profile.
  void setRunState(RunState state, std::string error = {});
  void setFinalProfile(Profile final_profile);

  // "Stop run" on the page does this: asks the graph to stop and wakes
  // waitUntilStopRequested(). Safe from any thread and from signal-handling threads.
  void requestStop();
  bool stopRequested() const;
  void waitUntilStopRequested();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The page's folder: $TAGFLOW_WEB_ROOT, else share/tagflow/web next to the running
// executable's folder (build tree and installed layout), else the build's and the install's.
std::string defaultWebRoot();

// Runs `graph` to the end of its stream (or `duration_ps`) while serving its live view, then
// keeps serving the final results until the page's "Stop run" (or another thread's
// server.requestStop()). `on_listening` gets the URL to open. Rethrows the run's exception
// after the page has shown it and was stopped.
Profile serve(MeasurementGraph& graph, const ServeOptions& options, timestamp_t duration_ps = -1,
              const std::function<void(Server&)>& on_listening = {});

}  // namespace tagflow
