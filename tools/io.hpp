#pragma once
// A tool's output: every byte reaches its file, or the tool says in one line why not.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace regcmd::cli {

// Writes and flushes `text`; on failure prints "<tool>: cannot write <what>: <reason>".
inline bool write_out(std::FILE* out, std::string_view text, const char* tool, const std::string& what = "the output") {
  errno = 0;
  const bool ok = std::fwrite(text.data(), 1, text.size(), out) == text.size() && std::fflush(out) == 0;
  if (!ok) std::fprintf(stderr, "%s: cannot write %s: %s\n", tool, what.c_str(), std::strerror(errno ? errno : EIO));
  return ok;
}

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
