#pragma once
// The NPU device node: opening it, telling which driver serves it, ioctls, reset.
//
// Two drivers serve the RK3588 NPU, each through its own node and uapi:
//   rknpu   the vendor DRM driver (vendor kernels): the card node, usually /dev/dri/card1
//           (the primary node: raw RKNPU_SUBMIT does not work on renderD129,
//           regcmd-isa-reference "Submission model"); fact sheet §1
//   rocket  the mainline accel driver (Linux 6.18+): /dev/accel/accelN; fact sheet §3
// The same programs run on both; buffer.hpp and session.hpp do what differs.

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <xf86drm.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include <regcmd/core/error.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/runtime/rknpu_uapi.hpp>

namespace regcmd::runtime {

enum class driver : std::uint8_t { rknpu, rocket };

constexpr std::string_view name_of(driver d) { return d == driver::rknpu ? "rknpu" : "rocket"; }

inline constexpr const char* default_device_path = "/dev/dri/card1";

// Where open() looks when no node is given: the rknpu card node first (card1 on the vendor
// images, card0 when no display driver took it), then the rocket accel nodes.
inline constexpr std::array<const char*, 8> device_search_paths{
    "/dev/dri/card1", "/dev/dri/card0", "/dev/dri/card2", "/dev/dri/card3",
    "/dev/accel/accel0", "/dev/accel/accel1", "/dev/accel/accel2", "/dev/accel/accel3"};

// An ioctl on any fd (the device's, a dma-buf's, a sync_file's), restarted when
// interrupted; a failure is an error naming the request.
inline status fd_ioctl(int fd, unsigned long request, void* arg, std::string_view what) {
  int rc;
  do rc = ::ioctl(fd, request, arg);
  while (rc < 0 && (errno == EINTR || errno == EAGAIN));
  if (rc < 0) {
    const int e = errno;
    return make_error(e == ETIMEDOUT ? rules::submit_timeout : rules::ioctl_failed, "device").with_note(what).with_errno(e);
  }
  return {};
}

class device {
 public:
  device() = default;
  device(device&& other) noexcept { *this = std::move(other); }
  device& operator=(device&& other) noexcept {
    if (this != &other) {
      close_fd();
      fd_ = std::exchange(other.fd_, -1);
      driver_ = other.driver_;
      path_ = std::move(other.path_);
      version_ = std::move(other.version_);
    }
    return *this;
  }
  device(const device&) = delete;
  device& operator=(const device&) = delete;
  ~device() { close_fd(); }

  // Opens `path`, else $REGCMD_DEVICE, else the first node of device_search_paths served
  // by rknpu or rocket, and checks its driver.
  static result<device> open(std::string path = {}) {
    if (path.empty()) {
      const char* env = std::getenv("REGCMD_DEVICE");
      if (env && *env) path = env;
    }
    if (!path.empty()) return open_node(path);
    // Searching: report the most telling failure: a node we may not open, else one of
    // another driver, else that there is none.
    error best = make_error(rules::device_missing, "device").with_note("searched /dev/dri/card[0-3], /dev/accel/accel[0-3]");
    int best_rank = 0;
    for (const char* candidate : device_search_paths) {
      auto d = open_node(candidate);
      if (d) return d;
      const std::string_view id = d.err().id();
      const int rank = id == "device-permission" ? 3 : id == "wrong-driver" ? 1 : id == "device-missing" ? 0 : 2;
      if (rank > best_rank) {
        best = d.err();
        best_rank = rank;
      }
    }
    return best;
  }

  int fd() const { return fd_; }
  driver kind() const { return driver_; }
  const std::string& path() const { return path_; }
  // e.g. "rknpu 0.9.7 (20240424)", "rocket 1.0.0 (0)"
  const std::string& driver_version() const { return version_; }

  status ioctl(unsigned long request, void* arg, std::string_view what) const { return fd_ioctl(fd_, request, arg, what); }

  // RKNPU_ACT_RESET: a soft reset of the NPU. The rocket uapi has no reset: its kernel
  // resets a core itself when a job times out.
  status reset() const {
    if (driver_ == driver::rocket) return make_error(rules::reset_unsupported, "device").with_note(path_);
    rknpu::action a{rknpu::action_reset, 0};
    return ioctl(rknpu::ioctl_action, &a, "RKNPU_ACTION reset");
  }

 private:
  static result<device> open_node(const std::string& path) {
    device d;
    d.path_ = path;
    d.fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (d.fd_ < 0) {
      const int e = errno;
      const rule& r = e == ENOENT || e == ENODEV || e == ENXIO ? rules::device_missing
                      : e == EACCES || e == EPERM             ? rules::device_permission
                                                              : rules::device_open;
      return make_error(r, "device").with_note(path).with_errno(e);
    }
    drmVersionPtr v = drmGetVersion(d.fd_);
    if (v == nullptr) return make_error(rules::wrong_driver, "device").with_note(path + ": not a DRM device");
    const std::string name(v->name, static_cast<std::size_t>(v->name_len));
    d.version_ = name + " " + std::to_string(v->version_major) + "." + std::to_string(v->version_minor) + "." +
                 std::to_string(v->version_patchlevel) + " (" + std::string(v->date, static_cast<std::size_t>(v->date_len)) + ")";
    drmFreeVersion(v);
    if (name == "rknpu") {
      d.driver_ = driver::rknpu;
    } else if (name == "rocket") {
      d.driver_ = driver::rocket;
    } else {
      return make_error(rules::wrong_driver, "device").with_note(path + ": driver '" + name + "'");
    }
    return d;
  }

  void close_fd() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
  driver driver_ = driver::rknpu;
  std::string path_;
  std::string version_;
};

}  // namespace regcmd::runtime
