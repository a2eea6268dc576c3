// `tagflow plot`: the figures are drawn by the Python plotter (tools/plot/tagflow_plot.py, on
// h5py and matplotlib), which this command runs as a child process and whose exit status it
// returns. The script is TAGFLOW_PLOT_SCRIPT from the environment when set, else the copy in
// the source tree this program was built from, else the installed copy
// (<prefix>/share/tagflow/tagflow_plot.py beside <prefix>/bin/tagflow); the interpreter is Debian's
// /usr/bin/python3 (the one with python3-h5py and python3-matplotlib) when present, else python3 on
// PATH.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "commands.hpp"
#include "tagflow/core/error.hpp"

#ifndef TAGFLOW_PLOT_SCRIPT_PATH
#error "TAGFLOW_PLOT_SCRIPT_PATH (the plotter in the source tree) is set by tools/CMakeLists.txt"
#endif

namespace tagflow::cli {

namespace {

std::string plotScript() {
  const char* configured = std::getenv("TAGFLOW_PLOT_SCRIPT");
  std::error_code error;
  std::string script = TAGFLOW_PLOT_SCRIPT_PATH;
  if (configured != nullptr && *configured != '\0') {
    script = configured;
  } else if (!std::filesystem::is_regular_file(script, error)) {
    const auto program = std::filesystem::read_symlink("/proc/self/exe", error);
    script = (program.parent_path().parent_path() / "share/tagflow/tagflow_plot.py").string();
  }
  if (!std::filesystem::is_regular_file(script, error)) {
    throw IoError("plot script '" + script +
                  "' not found (set TAGFLOW_PLOT_SCRIPT to the path of tagflow_plot.py)");
  }
  return script;
}

std::string pythonInterpreter() {
  return ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

}  // namespace

int plotCommand(const PlotOptions& options) {
  std::vector<std::string> arguments{pythonInterpreter(), plotScript(), options.results_path,
                                     "--format", options.format};
  if (!options.output_folder.empty()) {
    arguments.push_back("--output");
    arguments.push_back(options.output_folder);
  }
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);

  std::cout.flush();  // the child's lines must not overtake ours
  pid_t child = 0;
  if (const int error = ::posix_spawnp(&child, argv[0], nullptr, nullptr, argv.data(), environ)) {
    throw IoError("cannot run '" + arguments[0] + "' for the plots: " + std::strerror(error) +
                  " (scripts/setup.sh installs python3 with h5py and matplotlib)");
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR)
      throw IoError(std::string("waiting for the plotter: ") + std::strerror(errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  std::cerr << "tagflow: error: the plotter was stopped by signal " << WTERMSIG(status) << "\n";
  return 1;
}

}  // namespace tagflow::cli
