#pragma once
// Linux ioctl request codes, computed from the argument's size with the asm-generic
// encoding (dir << 30 | size << 16 | type << 8 | nr; the same on arm64 and x86-64), so each
// uapi header states its structs once and checks the codes against the fact sheet.

#include <cstddef>
#include <cstdint>

namespace regcmd::ioctl_codes {

inline constexpr std::uint32_t dir_write = 1;  // _IOW: the caller passes the struct in
inline constexpr std::uint32_t dir_read_write = 3;  // _IOWR: and the kernel writes it back

constexpr unsigned long encode(std::uint32_t dir, char type, std::uint32_t nr, std::size_t size) {
  return static_cast<unsigned long>(dir << 30 | static_cast<std::uint32_t>(size) << 16 |
                                    static_cast<std::uint32_t>(static_cast<unsigned char>(type)) << 8 | nr);
}
constexpr unsigned long iow(char type, std::uint32_t nr, std::size_t size) { return encode(dir_write, type, nr, size); }
constexpr unsigned long iowr(char type, std::uint32_t nr, std::size_t size) { return encode(dir_read_write, type, nr, size); }

// The argument size a request code carries (what DRM copies in and out).
constexpr std::size_t size_of(unsigned long request) { return (request >> 16) & 0x3fff; }
// The command number of a request (what a DRM driver dispatches on).
constexpr std::uint32_t number_of(unsigned long request) { return static_cast<std::uint32_t>(request & 0xff); }

// DRM: type 'd', driver commands from 0x40.
inline constexpr char drm_type = 'd';
inline constexpr std::uint32_t drm_command_base = 0x40;

}  // namespace regcmd::ioctl_codes
