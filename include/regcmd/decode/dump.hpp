#pragma once
// Reading regcmd dumps, as captured from a board or written by hand.
//
//   binary: the raw buffer, 8-byte little-endian entries (what a capture shim writes)
//   text:   one hex entry per line, "0x" optional, '#' starts a comment, blank lines skipped
//
// `detect` picks text unless the input has a control byte other than tab, CR or LF: every
// binary entry has some (its target's low byte is 0x01, and most values hold zero bytes),
// while text may carry UTF-8 in its comments.
// Any input yields entries or a message saying what is wrong and where; nothing else.

#include <array>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <regcmd/core/entry.hpp>

namespace regcmd {

enum class dump_format { detect, binary, text };

struct dump {
  std::vector<entry> entries;
  std::string error;  // empty on success
  bool ok() const { return error.empty(); }
};

inline bool looks_like_text(std::span<const std::uint8_t> bytes) {
  for (std::uint8_t b : bytes)
    if ((b < 0x20 && b != '\n' && b != '\r' && b != '\t') || b == 0x7f) return false;
  return true;
}

inline dump parse_binary_dump(std::span<const std::uint8_t> bytes) {
  dump out;
  if (bytes.size() % 8 != 0) {
    out.error = "truncated binary dump: " + std::to_string(bytes.size()) +
                " bytes is not a whole number of 8-byte entries (" + std::to_string(bytes.size() % 8) +
                " trailing bytes after entry " + std::to_string(bytes.size() / 8) + ")";
    return out;
  }
  out.entries.reserve(bytes.size() / 8);
  for (std::size_t i = 0; i < bytes.size(); i += 8)
    out.entries.push_back(entry::from_bytes(bytes.subspan(i).first<8>()));
  return out;
}

inline dump parse_text_dump(std::string_view text) {
  dump out;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
    if (line.empty()) continue;
    std::string_view digits = line;
    if (digits.size() >= 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) digits.remove_prefix(2);
    bool valid = !digits.empty() && digits.size() <= 16;
    std::uint64_t bits = 0;
    for (char c : digits) {
      if (!valid) break;
      const int v = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (v < 0) valid = false;
      bits = bits << 4 | static_cast<std::uint64_t>(v < 0 ? 0 : v);
    }
    if (!valid) {
      std::string shown(line.substr(0, 40));
      for (char& c : shown)
        if (!(c >= 0x20 && c < 0x7f)) c = '?';
      out.error = "line " + std::to_string(line_number) + ": '" + shown + (line.size() > 40 ? "...'" : "'") +
                  " is not a 64-bit hex entry (expected up to 16 hex digits, 0x optional)";
      out.entries.clear();
      return out;
    }
    out.entries.push_back(entry::from_bits(bits));
  }
  return out;
}

inline dump parse_dump(std::span<const std::uint8_t> bytes, dump_format format = dump_format::detect) {
  if (format == dump_format::detect) format = looks_like_text(bytes) ? dump_format::text : dump_format::binary;
  if (format == dump_format::binary) return parse_binary_dump(bytes);
  return parse_text_dump(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// The most a dump may hold: 512 MiB is 64 Mi entries, hundreds of times the largest program
// regcmd builds (a 1000-task plan is 864 KiB); an endless input (/dev/zero, a pipe that never
// closes) stops here with an error instead of taking the memory.
inline constexpr std::size_t max_dump_bytes = std::size_t{512} << 20;

// Reads a dump from a file, or standard input for "-". Every failure is a message naming
// the file and the reason.
inline dump read_dump(const std::string& path, dump_format format = dump_format::detect) {
  const bool from_stdin = path == "-";
  std::error_code ec;
  if (!from_stdin && std::filesystem::is_directory(path, ec)) return {{}, "cannot read '" + path + "': it is a directory"};
  std::FILE* f = from_stdin ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) return {{}, "cannot open '" + path + "': " + std::strerror(errno)};
  std::vector<std::uint8_t> bytes;
  std::string error;
  std::array<std::uint8_t, 1 << 16> chunk;
  while (error.empty()) {
    const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), f);
    if (bytes.size() + n > max_dump_bytes) error = "'" + path + "' holds more than 512 MiB: not a regcmd dump";
    else bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
    if (n < chunk.size()) {
      if (std::ferror(f) && error.empty()) error = "cannot read '" + path + "': " + std::strerror(errno);
      break;
    }
  }
  if (!from_stdin) std::fclose(f);
  if (!error.empty()) return {{}, error};
  dump d = parse_dump(bytes, format);
  if (!d.ok()) d.error = path + ": " + d.error;
  return d;
}

}  // namespace regcmd
