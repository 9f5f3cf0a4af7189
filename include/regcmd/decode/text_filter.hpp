#pragma once
// Which bytes of a text dump are text, one byte at a time (a dump is read in pieces).
//
// Text is UTF-8 (checked strictly: no overlong forms, surrogates or code points past
// U+10FFFF), printable ASCII, tab, LF, VT, FF (a page break from a printer-style listing)
// and CR (CRLF files). ANSI escape sequences are dropped, as a terminal would not print
// them: grep --color writes `ESC[01;31m ESC[K` around a match, tput writes `ESC(B`.
//
//   CSI        ESC [ (0x20-0x3f)* final 0x40-0x7e         colours, erase-line
//   OSC        ESC ] ... ended by BEL or ESC \            window titles, hyperlinks
//   the rest   ESC (0x20-0x2f)* final 0x30-0x7e           character sets, keypad modes
//
// Anything else (NUL and the other control bytes, DEL, a byte that breaks UTF-8, an escape
// sequence cut by a stray byte) is not text.

#include <cstdint>
#include <string_view>

namespace regcmd {

class text_filter {
 public:
  enum class verdict { keep, drop, bad };

  constexpr verdict operator()(std::uint8_t b) {
    switch (state_) {
      case state::ground: return ground(b);
      case state::utf8:
        if (b < lo_ || b > hi_) return bad("breaks a UTF-8 character");
        lo_ = 0x80, hi_ = 0xbf;
        if (--continuation_ == 0) state_ = state::ground;
        return verdict::keep;
      case state::escape:
        if (b == '[') return drop(state::csi);
        if (b == ']') return drop(state::osc);
        [[fallthrough]];
      case state::escape_intermediate:
        if (b >= 0x20 && b <= 0x2f) return drop(state::escape_intermediate);
        if (b >= 0x30 && b <= 0x7e) return drop(state::ground);
        return bad("breaks an escape sequence");
      case state::csi:
        if (b >= 0x20 && b <= 0x3f) return verdict::drop;
        if (b >= 0x40 && b <= 0x7e) return drop(state::ground);
        return bad("breaks an escape sequence");
      case state::osc:
        if (b == 0x07) return drop(state::ground);
        if (b == 0x1b) return drop(state::osc_escape);
        if (b < 0x20 || b == 0x7f) return bad("breaks an escape sequence");
        return verdict::drop;
      case state::osc_escape:
        if (b == '\\') return drop(state::ground);
        return bad("breaks an escape sequence");
    }
    return verdict::bad;
  }

  // False while a UTF-8 character or an escape sequence is open: the input may not end there.
  constexpr bool at_boundary() const { return state_ == state::ground; }
  // What is open: "a UTF-8 character", "an escape sequence", or nothing.
  constexpr std::string_view open_sequence() const {
    return state_ == state::ground ? "" : state_ == state::utf8 ? "a UTF-8 character" : "an escape sequence";
  }
  // Why the last byte was bad, to follow the byte: "is a control byte".
  constexpr std::string_view why() const { return why_; }

 private:
  enum class state { ground, utf8, escape, escape_intermediate, csi, osc, osc_escape };

  constexpr verdict ground(std::uint8_t b) {
    if (b == 0x1b) return drop(state::escape);
    if ((b >= 0x20 && b < 0x7f) || (b >= '\t' && b <= '\r')) return verdict::keep;
    if (b < 0x80) return bad("is a control byte");
    // The lead byte sets how many continuation bytes follow and the range of the first
    // (Unicode 15, table 3-7).
    if (b >= 0xc2 && b <= 0xdf) return lead(1, 0x80, 0xbf);
    if (b == 0xe0) return lead(2, 0xa0, 0xbf);
    if (b == 0xed) return lead(2, 0x80, 0x9f);
    if (b >= 0xe1 && b <= 0xef) return lead(2, 0x80, 0xbf);
    if (b == 0xf0) return lead(3, 0x90, 0xbf);
    if (b >= 0xf1 && b <= 0xf3) return lead(3, 0x80, 0xbf);
    if (b == 0xf4) return lead(3, 0x80, 0x8f);
    return bad("cannot start a UTF-8 character");
  }
  constexpr verdict lead(int continuation, std::uint8_t lo, std::uint8_t hi) {
    state_ = state::utf8, continuation_ = continuation, lo_ = lo, hi_ = hi;
    return verdict::keep;
  }
  constexpr verdict drop(state next) {
    state_ = next;
    return verdict::drop;
  }
  constexpr verdict bad(std::string_view why) {
    why_ = why;
    state_ = state::ground;
    return verdict::bad;
  }

  state state_ = state::ground;
  int continuation_ = 0;
  std::uint8_t lo_ = 0x80, hi_ = 0xbf;
  std::string_view why_;
};

}  // namespace regcmd
