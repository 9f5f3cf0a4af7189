#pragma once
// The rknpu DRM device: opening the node, checking it is the rknpu driver, ioctls, reset.

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <xf86drm.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include <regcmd/core/error.hpp>
#include <regcmd/runtime/errors.hpp>
#include <regcmd/runtime/rknpu_uapi.hpp>

namespace regcmd::runtime {

// The vendor driver's card node (the primary node: raw RKNPU_SUBMIT does not work on
// renderD129, regcmd-isa-reference "Submission model").
inline constexpr const char* default_device_path = "/dev/dri/card1";

class device {
 public:
  device() = default;
  device(device&& other) noexcept { *this = std::move(other); }
  device& operator=(device&& other) noexcept {
    if (this != &other) {
      close_fd();
      fd_ = std::exchange(other.fd_, -1);
      path_ = std::move(other.path_);
      version_ = std::move(other.version_);
    }
    return *this;
  }
  device(const device&) = delete;
  device& operator=(const device&) = delete;
  ~device() { close_fd(); }

  // Opens `path`, else $REGCMD_DEVICE, else /dev/dri/card1, and checks its driver.
  static result<device> open(std::string path = {}) {
    if (path.empty()) {
      const char* env = std::getenv("REGCMD_DEVICE");
      path = env && *env ? env : default_device_path;
    }
    device d;
    d.path_ = path;
    d.fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (d.fd_ < 0) {
      const int e = errno;
      const rule& r = e == ENOENT ? rules::device_missing : e == EACCES || e == EPERM ? rules::device_permission
                                                                                       : rules::device_open;
      return make_error(r, "device").with_note(path).with_errno(e);
    }
    drmVersionPtr v = drmGetVersion(d.fd_);
    if (v == nullptr) return make_error(rules::wrong_driver, "device").with_note(path + ": not a DRM device");
    const std::string name(v->name, static_cast<std::size_t>(v->name_len));
    d.version_ = name + " " + std::to_string(v->version_major) + "." + std::to_string(v->version_minor) + "." +
                 std::to_string(v->version_patchlevel) + " (" + std::string(v->date, static_cast<std::size_t>(v->date_len)) + ")";
    drmFreeVersion(v);
    if (name != "rknpu") return make_error(rules::wrong_driver, "device").with_note(path + ": driver '" + name + "'");
    return d;
  }

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // e.g. "rknpu 0.9.7 (20240424)"
  const std::string& driver_version() const { return version_; }

  status ioctl(unsigned long request, void* arg, std::string_view what) const {
    int rc;
    do rc = ::ioctl(fd_, request, arg);
    while (rc < 0 && (errno == EINTR || errno == EAGAIN));
    if (rc < 0) {
      const int e = errno;
      return make_error(e == ETIMEDOUT ? rules::submit_timeout : rules::ioctl_failed, "device").with_note(what).with_errno(e);
    }
    return {};
  }

  // RKNPU_ACT_RESET: a soft reset of the NPU.
  status reset() const {
    rknpu::action a{rknpu::action_reset, 0};
    return ioctl(rknpu::ioctl_action, &a, "RKNPU_ACTION reset");
  }

 private:
  void close_fd() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
  std::string path_;
  std::string version_;
};

}  // namespace regcmd::runtime
