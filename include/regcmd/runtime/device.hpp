#pragma once
// The NPU device node: opening it, telling which driver serves it, ioctls, reset.
//
// Two drivers serve the RK3588 NPU, each through its own node and uapi:
//   rknpu   the vendor DRM driver (vendor kernels): the card node, usually /dev/dri/card1
//           (the primary node: raw RKNPU_SUBMIT does not work on renderD129,
//           regcmd-isa-reference "Submission model"); fact sheet §1
//   rocket  the mainline accel driver (Linux 6.18+): /dev/accel/accelN; fact sheet §3
// The same programs run on both; buffer.hpp, rknpu_jobs.hpp and rocket_jobs.hpp do what
// differs.

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <xf86drm.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <regcmd/core/error.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/runtime/npu_state.hpp>
#include <regcmd/runtime/rknpu_uapi.hpp>
#include <regcmd/runtime/system_calls.hpp>

namespace regcmd::runtime {

enum class driver : std::uint8_t { rknpu, rocket };

constexpr std::string_view name_of(driver d) { return d == driver::rknpu ? "rknpu" : "rocket"; }

inline constexpr const char* default_device_path = "/dev/dri/card1";

// Where open() looks when no node is given: the rknpu card node first (card1 on the vendor
// images, card0 when no display driver took it), then the rocket accel nodes.
inline constexpr std::array<const char*, 8> device_search_paths{
    "/dev/dri/card1",    "/dev/dri/card0",    "/dev/dri/card2",    "/dev/dri/card3",
    "/dev/accel/accel0", "/dev/accel/accel1", "/dev/accel/accel2", "/dev/accel/accel3"};

// An ioctl on any fd the device handed out (its own, a dma-buf's, a sync_file's), restarted
// when interrupted; a failure is an error naming the request.
inline status fd_ioctl(const system_calls& calls, int fd, unsigned long request, void* arg, std::string_view what) {
  int rc;
  do rc = calls.ioctl(fd, request, arg);
  while (rc < 0 && (errno == EINTR || errno == EAGAIN));
  if (rc < 0) {
    const int e = errno;
    return make_error(e == ETIMEDOUT ? rules::submit_timeout : rules::ioctl_failed, "device")
        .with_note(what)
        .with_errno(e);
  }
  return {};
}

// What the node's driver says of its device: the compatible strings of its device tree node
// (sysfs, by the node's device number), separated by spaces. Empty where the node has no
// such node (an emulated device, a kernel without a device tree).
inline std::string compatible_of_node(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) return {};
  const std::string path = "/sys/dev/char/" + std::to_string(major(st.st_rdev)) + ":" +
                           std::to_string(minor(st.st_rdev)) + "/device/of_node/compatible";
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::replace(text.begin(), text.end(), '\0', ' ');  // a list of NUL-terminated strings
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// One open of a node: its fd, its driver, the calls it was opened with and the node's NPU
// state. Devices, buffers, jobs and sessions share it, so it stays open while any of them
// lives: a buffer may outlive the device object it was made on, and moving a device moves
// only the reference.
class device_file {
 public:
  device_file(int fd, driver kind, std::string path, std::string version, std::int32_t iommu_domain = 0,
              const system_calls& calls = os_calls())
      : calls_{&calls},
        fd_{fd},
        driver_{kind},
        path_{std::move(path)},
        version_{std::move(version)},
        iommu_domain_{iommu_domain},
        npu_{npu_state_of(fd_, path_)} {}
  device_file(const device_file&) = delete;
  device_file& operator=(const device_file&) = delete;
  ~device_file() { calls_->close(fd_); }

  int fd() const { return fd_; }
  const system_calls& calls() const { return *calls_; }
  driver kind() const { return driver_; }
  const std::string& path() const { return path_; }
  const std::string& version() const { return version_; }
  std::int32_t iommu_domain() const { return iommu_domain_; }
  npu_state& npu() const { return *npu_; }
  status ioctl(unsigned long request, void* arg, std::string_view what) const {
    return fd_ioctl(*calls_, fd_, request, arg, what);
  }

 private:
  const system_calls* calls_;
  int fd_;
  driver driver_;
  std::string path_;
  std::string version_;
  std::int32_t iommu_domain_;
  std::shared_ptr<npu_state> npu_;
};

// A handle to an open node: copies share the open file (a session keeps one), which
// closes with the last device, buffer or prepared program using it.
class device {
 public:
  device() = default;

  // Opens `path`, else $REGCMD_DEVICE, else the first node of device_search_paths served
  // by rknpu or rocket, and checks its driver. Buffers and jobs of the device live in IOMMU
  // domain `iommu_domain` (a 4 GiB address space each): rknpu names it in MEM_CREATE and
  // SUBMIT (driver 0.9.6+); on rocket every open file is a domain of its own already.
  // `calls` are the process's default (the C library's, system_calls.hpp) unless the node is
  // another's (the emulated device in this process: emulator/in_process.hpp).
  static result<device> open(std::string path = {}, std::int32_t iommu_domain = 0,
                             const system_calls& calls = default_calls()) {
    if (iommu_domain < 0 || iommu_domain >= rknpu::max_iommu_domains)
      return make_error(rules::device_open, "device")
          .with_note("IOMMU domain " + std::to_string(iommu_domain) + ": 0..15");
    if (path.empty()) {
      const char* env = std::getenv("REGCMD_DEVICE");
      if (env && *env) path = env;
    }
    if (!path.empty()) return open_node(path, iommu_domain, calls);
    // Searching: report the most telling failure: a node we may not open, else one of
    // another driver, else that there is none.
    error best =
        make_error(rules::device_missing, "device").with_note("searched /dev/dri/card[0-3], /dev/accel/accel[0-3]");
    int best_rank = 0;
    for (const char* candidate : device_search_paths) {
      auto d = open_node(candidate, iommu_domain, calls);
      if (d) return d;
      const rule& r = *d.err().violated;
      const int rank = r == rules::device_permission ? 3
                       : r == rules::wrong_driver    ? 1
                       : r == rules::device_missing  ? 0
                                                     : 2;
      if (rank > best_rank) {
        best = d.err();
        best_rank = rank;
      }
    }
    return best;
  }

  // A moved-from or default device has no file: its ioctls fail with EBADF.
  int fd() const { return file_ ? file_->fd() : -1; }
  driver kind() const { return file_ ? file_->kind() : driver::rknpu; }
  // The SoC whose numbers (cores, IOVA limit, program rules) this device is used with: the
  // one its node's device tree names, else RK3588; for_soc() sets it.
  const soc::soc_info& soc() const { return soc_; }
  bool soc_detected() const { return soc_detected_; }
  // The node's device tree compatible strings (compatible_of_node), empty where it has none.
  const std::string& compatible() const { return compatible_; }
  // The same open device, used as the SoC `s` (regcmd-run --soc): a copy, so sessions
  // already made keep theirs.
  device for_soc(const soc::soc_info& s) const {
    device d = *this;
    d.soc_ = s;
    return d;
  }
  const std::string& path() const { return file_ ? file_->path() : empty(); }
  // e.g. "rknpu 0.9.7 (20240424)", "rocket 1.0.0 (0)"
  const std::string& driver_version() const { return file_ ? file_->version() : empty(); }
  std::int32_t iommu_domain() const { return file_ ? file_->iommu_domain() : 0; }
  // The open file this device, its buffers and its sessions share.
  const std::shared_ptr<const device_file>& file() const { return file_; }
  const system_calls& calls() const { return file_ ? file_->calls() : os_calls(); }

  status ioctl(unsigned long request, void* arg, std::string_view what) const {
    return fd_ioctl(calls(), fd(), request, arg, what);
  }

  // RKNPU_ACT_RESET: a soft reset of the NPU. The rocket uapi has no reset: its kernel
  // resets a core itself when a job times out.
  status reset() const {
    if (kind() == driver::rocket) return make_error(rules::reset_unsupported, "device").with_note(path());
    rknpu::action a{rknpu::action_reset, 0};
    return ioctl(rknpu::ioctl_action, &a, "RKNPU_ACTION reset");
  }

 private:
  static const std::string& empty() {
    static const std::string nothing;
    return nothing;
  }

  // DRM_IOCTL_VERSION as drmGetVersion asks it (the lengths, then the strings), through
  // `calls`: the driver's name and "name major.minor.patch (date)"; nullopt when the node
  // does not answer it.
  static std::optional<std::pair<std::string, std::string>> drm_version_of(const system_calls& calls, int fd) {
    drm_version v{};
    if (!fd_ioctl(calls, fd, DRM_IOCTL_VERSION, &v, "DRM_IOCTL_VERSION")) return std::nullopt;
    std::string name(std::min<std::size_t>(v.name_len, 64), '\0'), date(std::min<std::size_t>(v.date_len, 64), '\0');
    drm_version strings{};
    strings.name_len = name.size();
    strings.name = name.data();
    strings.date_len = date.size();
    strings.date = date.data();
    if (!fd_ioctl(calls, fd, DRM_IOCTL_VERSION, &strings, "DRM_IOCTL_VERSION")) return std::nullopt;
    name.resize(std::min(name.size(), strings.name_len));
    date.resize(std::min(date.size(), strings.date_len));
    return std::pair{name, name + " " + std::to_string(strings.version_major) + "." + std::to_string(strings.version_minor) +
                               "." + std::to_string(strings.version_patchlevel) + " (" + date + ")"};
  }

  static result<device> open_node(const std::string& path, std::int32_t iommu_domain, const system_calls& calls) {
    const int fd = calls.open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      const int e = errno;
      const rule& r = e == ENOENT || e == ENODEV || e == ENXIO ? rules::device_missing
                      : e == EACCES || e == EPERM              ? rules::device_permission
                                                               : rules::device_open;
      return make_error(r, "device").with_note(path).with_errno(e);
    }
    const auto v = drm_version_of(calls, fd);
    if (!v) {
      calls.close(fd);
      return make_error(rules::wrong_driver, "device").with_note(path + ": not a DRM device");
    }
    const auto& [name, version] = *v;
    if (name != "rknpu" && name != "rocket") {
      calls.close(fd);
      return make_error(rules::wrong_driver, "device").with_note(path + ": driver '" + name + "'");
    }
    device d;
    d.file_ = std::make_shared<const device_file>(fd, name == "rknpu" ? driver::rknpu : driver::rocket, path, version,
                                                  iommu_domain, calls);
    d.compatible_ = compatible_of_node(fd);
    if (const auto soc = soc::soc_from_compatible(d.compatible_)) {
      d.soc_ = *soc;
      d.soc_detected_ = true;
    }
    return d;
  }

  std::shared_ptr<const device_file> file_;
  soc::soc_info soc_ = soc::family[0];  // RK3588 unless the node says otherwise
  bool soc_detected_ = false;
  std::string compatible_;
};

}  // namespace regcmd::runtime
