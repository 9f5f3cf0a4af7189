#pragma once
// A tool's output: every byte reaches its file, or the tool says in one line why not.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

#include <regcmd/version.hpp>

namespace regcmd::cli {

// --version: "<tool> <version>" on standard output, exit status 0 (as --help).
inline int print_version(const char* tool) {
  std::printf("%s %s\n", tool, version_string);
  return 0;
}

// -h / --help (the usage on standard output) and --version, wherever on the command line:
// the exit status to return at once, or -1 for any other argument.
inline int help_or_version(std::string_view a, const char* usage, const char* tool) {
  if (a == "-h" || a == "--help") return std::fputs(usage, stdout), 0;
  if (a == "--version") return print_version(tool);
  return -1;
}

// A tool's main, with the one failure C++ raises anywhere: an allocation the process may not
// make (a shape, a program or a dump too large for its memory or its address-space limit)
// ends the tool with one line and exit status 2, as every other error, never an abort.
template <class Main>
int guarded_main(const char* tool, int argc, char** argv, Main&& main) {
  try {
    return main(argc, argv);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  std::fprintf(stderr, "%s: out of memory: what this command needs does not fit the memory this process may use\n", tool);
  return 2;
}

// Writes and flushes `text`; on failure prints "<tool>: cannot write <what>: <reason>".
inline bool write_out(std::FILE* out, std::string_view text, const char* tool, const std::string& what = "the output") {
  errno = 0;
  const bool ok = std::fwrite(text.data(), 1, text.size(), out) == text.size() && std::fflush(out) == 0;
  if (!ok) std::fprintf(stderr, "%s: cannot write %s: %s\n", tool, what.c_str(), std::strerror(errno ? errno : EIO));
  return ok;
}

// Output written piece by piece as it is made (a 200 MiB dump decodes to gigabytes of text):
// the first failed write ends it, and finish() says why in the same one line as write_out.
class output_stream {
 public:
  output_stream(std::FILE* out, const char* tool) : out_(out), tool_(tool) {}

  // False from the first failed write on; later writes are dropped.
  bool write(std::string_view text) {
    if (error_ != 0) return false;
    errno = 0;
    if (std::fwrite(text.data(), 1, text.size(), out_) != text.size()) error_ = errno ? errno : EIO;
    return error_ == 0;
  }
  bool ok() const { return error_ == 0; }

  // Flushes; on failure prints "<tool>: cannot write the output: <reason>".
  bool finish() {
    errno = 0;
    if (error_ == 0 && std::fflush(out_) != 0) error_ = errno ? errno : EIO;
    if (error_ != 0) std::fprintf(stderr, "%s: cannot write the output: %s\n", tool_, std::strerror(error_));
    return error_ == 0;
  }

 private:
  std::FILE* out_;
  const char* tool_;
  int error_ = 0;
};

// The same into the file `path`, created or truncated.
inline bool write_file(const std::string& path, std::string_view text, const char* tool) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "%s: cannot write '%s': %s\n", tool, path.c_str(), std::strerror(errno));
    return false;
  }
  const bool written = write_out(f, text, tool, "'" + path + "'");
  const bool closed = std::fclose(f) == 0;
  if (written && !closed) std::fprintf(stderr, "%s: cannot write '%s': %s\n", tool, path.c_str(), std::strerror(errno));
  return written && closed;
}

}  // namespace regcmd::cli
