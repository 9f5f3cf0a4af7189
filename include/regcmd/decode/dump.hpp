#pragma once
// Reading regcmd dumps, as captured from a board or written by hand.
//
//   binary: the raw buffer, 8-byte little-endian entries (what a capture shim writes)
//   text:   one hex entry per line, "0x" optional, '#' starts a comment, blank lines skipped;
//           UTF-8 with an optional byte-order mark, CRLF or LF, form feeds and ANSI escape
//           sequences (coloured grep output) allowed, the escapes dropped (text_filter.hpp)
//
// `detect` reads the first 8 bytes: binary if they hold a control byte other than tab, LF,
// VT, FF, CR and ESC, text otherwise. Every entry the NPU reads holds a 0x00 or 0x01 byte in
// its target (0x<block>01 for a register, 0x0000, 0x0041 and 0x0081 for the special words),
// so the first entry decides; a stray byte further into a text dump (or a byte that is not
// UTF-8 anywhere in it) is then an error naming its offset, never a reason to decode text as
// binary.
//
// A dump is parsed in pieces and its entries handed on as they complete, so reading takes
// no memory that grows with the dump unless the caller keeps the entries. Any input yields
// entries or a message saying what is wrong and where; nothing else.

#include <algorithm>
#include <array>
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
#include <regcmd/decode/text_filter.hpp>

namespace regcmd {

enum class dump_format { detect, binary, text };

struct dump {
  std::vector<entry> entries;
  std::string error;  // empty on success
  bool ok() const { return error.empty(); }
};

// Why `entries` are not a program of whole tasks, each ended by an op-enable entry (what
// accounting and replaying a dump need); empty when they are. Zero entries after the last
// task are padding.
inline std::string task_structure_problem(std::span<const entry> entries) {
  std::size_t after_last = 0;
  bool any = false;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (kind_of(entries[i]) == entry_kind::op_enable) {
      any = true;
      after_last = i + 1;
    }
  if (!any) return "the dump has no op-enable entry (target 0x0081), so no task";
  for (std::size_t i = after_last; i < entries.size(); ++i)
    if (kind_of(entries[i]) != entry_kind::zero)
      return "entry " + std::to_string(i) + " follows the last op-enable entry: every task ends with one";
  return {};
}

// Whether a dump that starts with `head` is text: it holds no control byte but whitespace
// and ESC. Every binary entry has one (its target's 0x00 or 0x01); a text dump with a
// byte that is not UTF-8 is still text, and its error says where.
inline bool looks_like_text(std::span<const std::uint8_t> head) {
  for (std::uint8_t b : head)
    if ((b < 0x20 && !(b >= '\t' && b <= '\r') && b != 0x1b) || b == 0x7f) return false;
  return true;
}

// Parses a dump fed in pieces of any size. Every completed entry goes to `sink(entry)`,
// which returns false to stop reading.
class dump_parser {
 public:
  explicit dump_parser(dump_format format = dump_format::detect) : format_(format) {}

  // False once stopped by the sink, finished, or on an error (error() then says what).
  template <class Sink>
  bool feed(std::span<const std::uint8_t> bytes, Sink&& sink) {
    if (stopped_) return false;
    if (!started_) {
      const std::size_t n = std::min(bytes.size(), head_.size() - held_);
      std::copy_n(bytes.begin(), n, head_.begin() + static_cast<std::ptrdiff_t>(held_));
      held_ += n;
      bytes = bytes.subspan(n);
      if (held_ < head_.size()) return true;
      if (!start(sink)) return false;
    }
    return format_ == dump_format::binary ? binary(bytes, sink) : text(bytes, sink);
  }

  // The end of the input: the last line, or what the input lacks.
  template <class Sink>
  bool finish(Sink&& sink) {
    if (stopped_) return false;
    if (!started_ && !start(sink)) return false;
    bool ok = true;
    if (format_ == dump_format::binary) {
      if (held_ != 0)
        error_ = "truncated binary dump: " + std::to_string(offset_) +
                 " bytes is not a whole number of 8-byte entries (" + std::to_string(offset_ % 8) +
                 " trailing bytes after entry " + std::to_string(offset_ / 8) + ")";
      ok = error_.empty();
    } else if (!filter_.at_boundary()) {
      error_ = "byte " + std::to_string(offset_) + " (line " + std::to_string(line_) + "): the input ends inside " +
               std::string(filter_.open_sequence()) + begun(offset_);
      ok = false;
    } else {
      ok = end_line(sink);
    }
    stopped_ = true;
    return ok;
  }

  const std::string& error() const { return error_; }

 private:
  // The first bytes are in: the format is known, and a text dump's byte-order mark is skipped.
  template <class Sink>
  bool start(Sink& sink) {
    started_ = true;
    const std::array<std::uint8_t, 8> first = head_;  // binary() keeps a partial entry in head_
    std::span<const std::uint8_t> head(first.data(), held_);
    held_ = 0;
    if (format_ == dump_format::detect) format_ = looks_like_text(head) ? dump_format::text : dump_format::binary;
    if (format_ == dump_format::text && head.size() >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf) {
      head = head.subspan(3);
      offset_ = sequence_start_ = 3;
    }
    return format_ == dump_format::binary ? binary(head, sink) : text(head, sink);
  }

  template <class Sink>
  bool emit(entry e, Sink& sink) {
    if (!sink(e)) stopped_ = true;
    return !stopped_;
  }

  template <class Sink>
  bool binary(std::span<const std::uint8_t> bytes, Sink& sink) {
    offset_ += bytes.size();
    while (!bytes.empty()) {
      if (held_ == 0 && bytes.size() >= 8) {
        if (!emit(entry::from_bytes(bytes.first<8>()), sink)) return false;
        bytes = bytes.subspan(8);
        continue;
      }
      head_[held_++] = bytes.front();
      bytes = bytes.subspan(1);
      if (held_ == 8) {
        held_ = 0;
        if (!emit(entry::from_bytes(std::span<const std::uint8_t, 8>(head_)), sink)) return false;
      }
    }
    return true;
  }

  static constexpr bool is_space(std::uint8_t b) { return b == ' ' || (b >= '\t' && b <= '\r'); }

  template <class Sink>
  bool text(std::span<const std::uint8_t> bytes, Sink& sink) {
    for (std::uint8_t b : bytes) {
      const std::uint64_t at = offset_++;
      const text_filter::verdict v = filter_(b);
      if (v == text_filter::verdict::bad) {
        error_ = "byte " + std::to_string(at) + " (line " + std::to_string(line_) + "): " + hex_byte(b) + " " +
                 std::string(filter_.why()) + begun(at) +
                 ", not text (a text dump holds UTF-8, tabs, CR, LF, form feeds and ANSI escape sequences;"
                 " --binary reads 8-byte entries)";
        stopped_ = true;
        return false;
      }
      if (filter_.at_boundary()) sequence_start_ = offset_;
      if (v == text_filter::verdict::drop) continue;
      if (b == '\n') {
        if (!end_line(sink)) return false;
        continue;
      }
      if (comment_) continue;
      if (b == '#') {
        comment_ = true;
        continue;
      }
      if (length_ == 0 && is_space(b)) continue;
      if (length_ < content_.size()) content_[length_] = static_cast<char>(b);
      ++length_;
      if (!is_space(b)) trimmed_ = length_;
    }
    return true;
  }

  // A line is complete: its entry, if it holds one (what is left without comment and
  // surrounding whitespace).
  template <class Sink>
  bool end_line(Sink& sink) {
    const std::uint64_t number = line_++;
    const std::size_t size = trimmed_;
    comment_ = false;
    length_ = trimmed_ = 0;
    if (size == 0) return true;
    std::string_view digits(content_.data(), std::min(size, content_.size()));
    if (digits.size() >= 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) digits.remove_prefix(2);
    bool valid = size <= content_.size() && !digits.empty() && digits.size() <= 16;
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
      std::string shown(content_.data(), std::min<std::size_t>(size, 40));
      for (char& c : shown)
        if (!(c >= 0x20 && c < 0x7f)) c = '?';
      error_ = "line " + std::to_string(number) + ": '" + shown + (size > 40 ? "...'" : "'") +
               " is not a 64-bit hex entry (expected up to 16 hex digits, 0x optional)";
      stopped_ = true;
      return false;
    }
    return emit(entry::from_bits(bits), sink);
  }

  // Where the UTF-8 character or escape sequence that `at` breaks began, if before it.
  std::string begun(std::uint64_t at) const {
    return sequence_start_ < at ? " (begun at byte " + std::to_string(sequence_start_) + ")" : "";
  }

  static std::string hex_byte(std::uint8_t b) {
    constexpr char digits[] = "0123456789abcdef";
    return {'0', 'x', digits[b >> 4], digits[b & 15]};
  }

  dump_format format_;
  bool started_ = false, stopped_ = false;
  std::array<std::uint8_t, 8> head_{};  // the first bytes until the format is known, then a partial entry
  std::size_t held_ = 0;
  std::uint64_t offset_ = 0;  // bytes of input consumed
  std::string error_;
  // text: the current line, its first bytes kept (enough to show and parse), its length counted
  text_filter filter_;
  std::uint64_t line_ = 1;
  std::uint64_t sequence_start_ = 0;  // where the open UTF-8 character or escape sequence began
  bool comment_ = false;
  std::array<char, 64> content_{};
  std::size_t length_ = 0, trimmed_ = 0;  // without leading whitespace; up to the last non-space
};

inline dump parse_dump(std::span<const std::uint8_t> bytes, dump_format format = dump_format::detect) {
  dump out;
  out.entries.reserve(bytes.size() / 8);
  dump_parser parser(format);
  auto keep = [&](entry e) {
    out.entries.push_back(e);
    return true;
  };
  if (!(parser.feed(bytes, keep) && parser.finish(keep))) {
    out.error = parser.error();
    out.entries.clear();
  }
  return out;
}

// The most a dump may hold: 512 MiB is 64 Mi entries, hundreds of times the largest program
// regcmd builds (a 1000-task plan is 864 KiB); an endless input (/dev/zero, a pipe that never
// closes) stops here with an error instead of running on.
inline constexpr std::size_t max_dump_bytes = std::size_t{512} << 20;

// Reads the dump at `path` ('-': standard input) in 64 KiB pieces, calling `sink(entry)` for
// each entry until the end, an error or `sink` returning false. Returns the error, naming
// the file and the reason (empty if none).
template <class Sink>
std::string scan_dump(const std::string& path, dump_format format, Sink&& sink) {
  const bool from_stdin = path == "-";
  std::error_code ec;
  if (!from_stdin && std::filesystem::is_directory(path, ec)) return "cannot read '" + path + "': it is a directory";
  std::FILE* f = from_stdin ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) return "cannot open '" + path + "': " + std::strerror(errno);
  dump_parser parser(format);
  std::string error;
  std::array<std::uint8_t, 1 << 16> chunk;
  std::size_t total = 0;
  for (;;) {
    const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), f);
    total += n;
    if (total > max_dump_bytes) {
      error = "'" + path + "' holds more than 512 MiB: not a regcmd dump";
      break;
    }
    if (n < chunk.size() && std::ferror(f)) {
      error = "cannot read '" + path + "': " + std::strerror(errno);
      break;
    }
    if (!parser.feed(std::span(chunk.data(), n), sink)) break;
    if (n < chunk.size()) {
      parser.finish(sink);
      break;
    }
  }
  if (!from_stdin) std::fclose(f);
  if (error.empty() && !parser.error().empty()) error = path + ": " + parser.error();
  return error;
}

// Reads a whole dump into memory: 8 bytes an entry.
inline dump read_dump(const std::string& path, dump_format format = dump_format::detect) {
  dump d;
  std::error_code ec;
  if (path != "-" && std::filesystem::is_regular_file(path, ec))
    d.entries.reserve(std::min<std::uintmax_t>(std::filesystem::file_size(path, ec), max_dump_bytes) / 8);
  d.error = scan_dump(path, format, [&](entry e) {
    d.entries.push_back(e);
    return true;
  });
  if (!d.ok()) d.entries = {};
  return d;
}

}  // namespace regcmd
