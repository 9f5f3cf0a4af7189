// libFuzzer target: any bytes as a graph description file (regcmd/cli/graph_file.hpp). A file is
// a graph (one line for each op, in order) or one problem on one line that names a line of
// the file; a graph builds or breaks a rule, and the op it fails at is one of its lines.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <regcmd/programs/graph/graph.hpp>

#include <regcmd/cli/graph_file.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const regcmd::cli::graph_file f = regcmd::cli::parse_graph_file(text);
  const std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  if (!f.problem.empty()) {
    if (f.problem.find('\n') != std::string::npos || f.problem_line > lines) __builtin_trap();
    return 0;
  }
  if (f.graph.count == 0 || f.lines.size() != f.graph.count || f.lines.back() > lines) __builtin_trap();
  if (!std::is_sorted(f.lines.begin(), f.lines.end())) __builtin_trap();
  const auto built = regcmd::build(f.graph);
  if (built) {
    if (built.value().view().tasks.empty()) __builtin_trap();
    return 0;
  }
  const std::size_t line = regcmd::cli::failing_line(f, [](const regcmd::large_graph_spec& g) { return regcmd::build(g).ok(); });
  if (std::find(f.lines.begin(), f.lines.end(), line) == f.lines.end()) __builtin_trap();
  return 0;
}
