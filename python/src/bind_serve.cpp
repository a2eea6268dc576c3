// tagflow.Server: the live view of a Graph (serve/ and docs/serve.md), bound as it is; the
// Python function tagflow.serve() runs a graph with it.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "python_graph.hpp"
#include "tagflow/serve/server.hpp"

namespace tagflow::python {

namespace {

// Destroying a Server joins its thread, which may be waiting for the GIL to read a
// CustomMeasurement's results(): the GIL is released meanwhile.
struct DeleteWithoutGil {
  void operator()(Server* server) const {
    py::gil_scoped_release release;
    delete server;
  }
};

}  // namespace

void bindServe(py::module_& module) {
  py::class_<Server, std::unique_ptr<Server, DeleteWithoutGil>>(
      module, "Server", "serves the live view of a graph while it lives (docs/serve.md)")
      .def(py::init([](PythonGraph& graph, const std::string& address, int port, double update_hz,
                       const std::string& token, const std::string& web_root) {
             ServeOptions options;
             options.address = address;
             options.port = port;
             options.update_hz = update_hz;
             options.token = token;
             options.web_root = web_root;
             options.source = &graph.source();
             return std::unique_ptr<Server, DeleteWithoutGil>(new Server(graph.graph(), options));
           }),
           py::arg("graph"), py::arg("address") = "127.0.0.1", py::arg("port") = 8080,
           py::arg("update_hz") = 10.0, py::arg("token") = "", py::arg("web_root") = "",
           py::keep_alive<1, 2>())
      .def_property_readonly("url", &Server::url, "the page's address, with the token if any")
      .def_property_readonly("port", &Server::port)
      .def_property_readonly("token", &Server::token)
      .def_property_readonly("stop_requested", &Server::stopRequested,
                             "the page's \"Stop run\" was pressed (or stop() called)")
      .def("stop", &Server::requestStop, py::call_guard<py::gil_scoped_release>(),
           "stop the graph's run and end serve()")
      .def(
          "_run_ended",
          [](Server& server, PythonGraph& graph, bool failed, const std::string& error) {
            if (graph.lastProfile()) server.setFinalProfile(*graph.lastProfile());
            server.setRunState(failed                   ? RunState::Failed
                               : server.stopRequested() ? RunState::Stopped
                                                        : RunState::Finished,
                               error);
          },
          py::arg("graph"), py::arg("failed") = false, py::arg("error") = "");
}

}  // namespace tagflow::python
