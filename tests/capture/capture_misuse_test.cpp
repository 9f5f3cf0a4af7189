// The capture shim under programs that do not tidy up and in directories it does not own:
// a closed file's buffers are not found through a reused fd number, a mapping unmapped in
// part is not read, a second process continues the numbering, a directory that cannot be
// made is said once and the program still runs. Run with LD_PRELOAD=libregcmd-capture.so:libregcmd-emu.so,
// REGCMD_CAPTURE_DIR and REGCMD_DEVICE naming the rknpu or the rocket node.
#include <regcmd/testing/doctest.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "raw_node.hpp"
#include "runtime_support.hpp"

extern char** environ;

using namespace regcmd::testing;
namespace fs = std::filesystem;

namespace {

std::vector<std::uint8_t> read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read ", p.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string read_text(const fs::path& p) {
  const auto bytes = read(p);
  return {bytes.begin(), bytes.end()};
}

std::vector<std::uint8_t> bytes_of(const std::vector<std::uint64_t>& code) {
  std::vector<std::uint8_t> out(code.size() * 8);
  std::memcpy(out.data(), code.data(), out.size());
  return out;
}

// The highest NNNN of the captures (NNNN.txt) in `dir`, 0 when there are none.
unsigned highest_capture(const fs::path& dir) {
  unsigned highest = 0;
  if (!fs::exists(dir)) return 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() == 8 && name.ends_with(".txt") && name.find_first_not_of("0123456789") == 4)
      highest = std::max(highest, static_cast<unsigned>(std::stoul(name.substr(0, 4))));
  }
  return highest;
}

fs::path capture_file(const fs::path& dir, unsigned number, const char* suffix) {
  char name[16];
  std::snprintf(name, sizeof name, "%04u", number);
  return dir / (name + std::string(suffix));
}

// A fresh directory of its own for one case.
fs::path fresh_directory() {
  std::string pattern = (fs::temp_directory_path() / "regcmd-capture-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

// Buffers for one submit on `f`: the regcmd, and on rknpu the task descriptors; mapped and
// left so (a program may close its file with its mappings still there).
struct one_submit {
  raw::bo regcmd, tasks;
  std::uint8_t *regcmd_map = nullptr, *tasks_map = nullptr;
  explicit one_submit(const raw::file& f) : regcmd{raw::create(f, 4096)} {
    regcmd_map = raw::map(f, regcmd);
    if (!f.rocket()) {
      tasks = raw::create(f, 4096);
      tasks_map = raw::map(f, tasks);
    }
  }
  int run(const raw::file& f, const std::vector<std::uint64_t>& code) {
    return raw::submit(f, regcmd, regcmd_map, code, &tasks, tasks_map);
  }
};

constexpr const char* child_case = "child process: one submit of the program REGCMD_TEST_SEED names";

struct child_result {
  int status = -1;  // the exit status, or -signal
  std::string out, err;
};

// Runs this test program's child case in a new process, with `env` set over this
// process's environment; its stdout and stderr kept in files of `dir`.
child_result run_child(const fs::path& dir, const std::vector<std::string>& env) {
  std::vector<std::string> strings = env;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry = *e;
    const bool replaced = std::any_of(env.begin(), env.end(), [&](const std::string& v) {
      return entry.substr(0, entry.find('=') + 1) == std::string_view(v).substr(0, v.find('=') + 1);
    });
    if (!replaced) strings.emplace_back(entry);
  }
  // Under qemu-user (the aarch64 tests on a PC, REGCMD_TEST_EMULATOR names it) the child is
  // started through the emulator too, and the libraries to preload go to it as the guest's.
  const char* emulator = std::getenv("REGCMD_TEST_EMULATOR");
  std::vector<std::string> args;
  if (emulator && *emulator) {
    std::erase_if(strings, [](const std::string& v) { return v.starts_with("QEMU_SET_ENV="); });
    for (auto& v : strings)
      if (v.starts_with("LD_PRELOAD=")) v = "QEMU_SET_ENV=" + v;
    for (std::string_view rest = emulator; !rest.empty();) {
      const std::size_t space = std::min(rest.find(' '), rest.size());
      if (space > 0) args.emplace_back(rest.substr(0, space));
      rest.remove_prefix(std::min(space + 1, rest.size()));
    }
  }
  std::vector<char*> envp;
  for (auto& s : strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  args.push_back(fs::read_symlink("/proc/self/exe").string());
  args.push_back("--no-skip=true");
  args.push_back(std::string("--test-case=") + child_case);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out = (dir / "child.stdout").string(), err = (dir / "child.stderr").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE_MESSAGE(spawned == 0, "posix_spawn: ", std::strerror(spawned));
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  child_result r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

}  // namespace

// Not run on its own: the cases below start it as a second process.
TEST_CASE("child process: one submit of the program REGCMD_TEST_SEED names" * doctest::skip()) {
  const char* seed = std::getenv("REGCMD_TEST_SEED");
  REQUIRE(seed != nullptr);
  raw::file f{raw::node_under_test()};
  one_submit s{f};
  const std::uint64_t before = stats().submits;
  s.run(f, raw::program(static_cast<std::uint32_t>(std::stoul(seed))));
  // whatever the shim did, the submit reached the device
  CHECK(stats().submits == before + 1);
}

TEST_CASE("a reused fd number does not find the closed file's buffers") {
  const char* dir_env = std::getenv("REGCMD_CAPTURE_DIR");
  REQUIRE_MESSAGE(dir_env != nullptr, "run with REGCMD_CAPTURE_DIR");
  const fs::path dir = dir_env;
  const raw::node n = raw::node_under_test();
  const std::vector<std::uint64_t> first_program = raw::program(1), second_program = raw::program(2);

  raw::file first{n};
  const int fd = first.fd();
  one_submit old{first};
  old.run(first, first_program);
  // Closed with its buffers still mapped: on a kernel the mappings keep the old BOs and
  // their bytes (the GEM handles and IOVAs die with the file). The emulated device frees
  // them, so the old regcmd mapping is put back holding the old program.
  first.close();
  void* again = ::mmap(old.regcmd_map, old.regcmd.size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (again == old.regcmd_map) std::memcpy(again, first_program.data(), first_program.size() * 8);

  raw::file second{n};
  REQUIRE_MESSAGE(second.fd() == fd, "the second open must reuse the fd number");
  one_submit fresh{second};
  const unsigned number = highest_capture(dir) + 1;
  fresh.run(second, second_program);
  CHECK(highest_capture(dir) == number);
  const auto captured = read(capture_file(dir, number, "-regcmd.bin"));
  CHECK_MESSAGE(captured == bytes_of(second_program),
                std::string(captured == bytes_of(first_program) ? "the closed file's program was recorded" : "other bytes were recorded"));
  if (again != MAP_FAILED) ::munmap(again, old.regcmd.size);
}

TEST_CASE("a buffer unmapped in part: the device still has its pages, the shim does not read the hole") {
  // Unmapping frees none of a BO's pages (its GEM object holds them), so the NPU still
  // reads the program and the submit is the device's to answer; the shim can only read
  // what is still mapped and records the task as not found.
  const char* dir_env = std::getenv("REGCMD_CAPTURE_DIR");
  REQUIRE_MESSAGE(dir_env != nullptr, "run with REGCMD_CAPTURE_DIR");
  const fs::path dir = dir_env;
  raw::file f{raw::node_under_test()};
  one_submit s{f};  // its task descriptors (rknpu)
  const raw::bo code = raw::create(f, 8192);
  std::uint8_t* code_map = raw::map(f, code);
  const std::vector<std::uint64_t> program = raw::program(6);
  std::memcpy(code_map + 4096, program.data(), program.size() * 8);
  REQUIRE(::munmap(code_map + 4096, 4096) == 0);
  raw::bo second_page = code;  // the program where the NPU finds it
  second_page.iova += 4096;
  std::vector<std::uint8_t> copy(program.size() * 8);  // raw::submit writes it there again
  const std::uint64_t submits = stats().submits;
  const unsigned number = highest_capture(dir) + 1;
  raw::submit(f, second_page, copy.data(), program, &s.tasks, s.tasks_map);
  CHECK(stats().submits == submits + 1);
  REQUIRE(highest_capture(dir) == number);
  CHECK(read(capture_file(dir, number, "-regcmd.bin")).empty());
  CHECK(read_text(capture_file(dir, number, ".txt")).find("NOT FOUND") != std::string::npos);
}

TEST_CASE("a second process numbers its captures after those already in the directory") {
  const fs::path dir = fresh_directory();
  { std::ofstream{dir / "0007.txt"} << "an earlier capture\n"; }
  const std::string capture_dir = "REGCMD_CAPTURE_DIR=" + dir.string();
  const child_result first = run_child(dir, {capture_dir, "REGCMD_TEST_SEED=3"});
  REQUIRE_MESSAGE(first.status == 0, first.out, first.err);
  const child_result second = run_child(dir, {capture_dir, "REGCMD_TEST_SEED=4"});
  REQUIRE_MESSAGE(second.status == 0, second.out, second.err);
  CHECK(read_text(dir / "0007.txt") == "an earlier capture\n");
  CHECK(fs::exists(capture_file(dir, 8, ".txt")));
  CHECK(fs::exists(capture_file(dir, 9, ".txt")));
  if (fs::exists(capture_file(dir, 9, "-regcmd.bin"))) {
    CHECK(read(capture_file(dir, 8, "-regcmd.bin")) == bytes_of(raw::program(3)));
    CHECK(read(capture_file(dir, 9, "-regcmd.bin")) == bytes_of(raw::program(4)));
  }
  CHECK_FALSE(fs::exists(capture_file(dir, 1, ".txt")));
  fs::remove_all(dir);
}

TEST_CASE("a capture directory that cannot be made is one line on stderr; the program still runs") {
  const fs::path dir = fresh_directory();
  { std::ofstream{dir / "a-file"} << "not a directory\n"; }
  const fs::path unmakeable = dir / "a-file" / "captures";
  const child_result child = run_child(dir, {"REGCMD_CAPTURE_DIR=" + unmakeable.string(), "REGCMD_TEST_SEED=5"});
  CHECK_MESSAGE(child.status == 0, child.out);
  CAPTURE(child.err);
  CHECK(std::count(child.err.begin(), child.err.end(), '\n') == 1);
  CHECK(child.err.ends_with("\n"));
  CHECK(child.err.find(unmakeable.string()) != std::string::npos);
  CHECK_FALSE(fs::exists(unmakeable));
  fs::remove_all(dir);
}
