// File I/O tests, in a private temporary directory per test case.
#include <dirent.h>
#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "packer/base/file_io.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

using namespace kpack;

namespace {

using test::TempDir;

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// read_file's error for a file its user may not read. Root reads anything, so as root (CI) the read
// runs in a child that became nobody; the message comes back through a pipe.
std::string denied_read_message(const std::string& path) {
  auto message_of = [&] {
    auto denied = read_file(path);
    return denied.ok() ? std::string("read succeeded") : denied.error().message;
  };
  if (geteuid() != 0) return message_of();
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(pipe_fds[0]);
    const std::string message = setuid(65534) == 0 ? message_of() : "setuid failed";
    _exit(write(pipe_fds[1], message.data(), message.size()) == ssize_t(message.size()) ? 0 : 1);
  }
  close(pipe_fds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, size_t(n));
  close(pipe_fds[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(status == 0);
  return message;
}

std::vector<uint8_t> bytes(const std::string& text) { return {text.begin(), text.end()}; }

std::string read_text(const std::string& path) {
  auto data = read_file(path);
  REQUIRE_MESSAGE(data.ok(), (data.ok() ? "" : data.error().message));
  return {data->begin(), data->end()};
}

}  // namespace

TEST_CASE("read_file reads whole files, empty ones included") {
  TempDir dir;
  write_text(dir / "a", "hello");
  CHECK(read_text(dir / "a") == "hello");
  write_text(dir / "empty", "");
  CHECK(read_text(dir / "empty").empty());

  std::vector<uint8_t> big(3 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 31 + (i >> 11));
  REQUIRE(write_file_atomically(dir / "big", big).ok());
  auto back = read_file(dir / "big");
  REQUIRE(back.ok());
  CHECK(*back == big);
}

TEST_CASE("read_file errors are one line naming the file") {
  TempDir dir;
  auto missing = read_file(dir / "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == dir / "nope" + ": no such file");

  auto directory = read_file(dir.path());
  REQUIRE_FALSE(directory.ok());
  CHECK(directory.error().message == dir.path() + ": is a directory");

  write_text(dir / "secret", "x");
  chmod((dir / "secret").c_str(), 0);
  CHECK(denied_read_message(dir / "secret") == dir / "secret" + ": permission denied");
}

TEST_CASE("write_file_atomically creates, replaces and sets the mode") {
  TempDir dir;
  REQUIRE(write_file_atomically(dir / "out", bytes("first"), 0755).ok());
  CHECK(read_text(dir / "out") == "first");
  struct stat st;
  REQUIRE(stat((dir / "out").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);

  REQUIRE(write_file_atomically(dir / "out", bytes("second, longer"), 0600).ok());
  CHECK(read_text(dir / "out") == "second, longer");
  REQUIRE(stat((dir / "out").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(dir.entries() == std::vector<std::string>{"out"});

  REQUIRE(write_file_atomically(dir / "empty", {}).ok());
  CHECK(read_text(dir / "empty").empty());
}

TEST_CASE("write_file_atomically leaves runs of zeros as holes, with the same bytes and size") {
  TempDir dir;
  std::vector<uint8_t> data(4 << 20, 0);  // 4 MiB: data, 3 MiB of zeros, data, a zero tail
  for (size_t i = 0; i < 100000; ++i) data[i] = static_cast<uint8_t>(i * 7 + 1);
  for (size_t i = (3 << 20) + 5; i < (3 << 20) + 70000; ++i) data[i] = static_cast<uint8_t>(i);
  REQUIRE(write_file_atomically(dir / "sparse", data).ok());
  Result<std::vector<uint8_t>> back = read_file(dir / "sparse");
  REQUIRE(back.ok());
  CHECK(*back == data);
  struct stat st;
  REQUIRE(stat((dir / "sparse").c_str(), &st) == 0);
  CHECK(static_cast<uint64_t>(st.st_size) == data.size());
  // Where the file system keeps holes (ext4, tmpfs, xfs, btrfs), far less than 4 MiB is allocated.
  MESSAGE("4 MiB file, " << st.st_blocks * 512 << " bytes allocated");
  CHECK(static_cast<uint64_t>(st.st_blocks) * 512 < (1u << 20));
}

TEST_CASE("write_file_atomically relative to the working directory") {
  TempDir dir;
  const auto old_cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const Status status = write_file_atomically("plain-name", bytes("x"));
  std::filesystem::current_path(old_cwd);
  REQUIRE(status.ok());
  CHECK(read_text(dir / "plain-name") == "x");
}

TEST_CASE("write_file_atomically failures leave nothing behind") {
  TempDir dir;
  const Status missing_dir = write_file_atomically(dir / "no/such/dir/out", bytes("x"));
  REQUIRE_FALSE(missing_dir.ok());
  CHECK(missing_dir.error().message == dir / "no/such/dir/out" + ": cannot create a temporary file in " +
                                           dir / "no/such/dir" + ": No such file or directory");

  // A directory in the way: refused before any temporary is made; the directory stays.
  std::filesystem::create_directory(dir / "taken");
  write_text(dir / "taken/inside", "keep");
  const Status onto_dir = write_file_atomically(dir / "taken", bytes("x"));
  REQUIRE_FALSE(onto_dir.ok());
  CHECK(onto_dir.error().message == dir / "taken" + ": is a directory");
  CHECK(dir.entries() == std::vector<std::string>{"taken"});
  CHECK(read_text(dir / "taken/inside") == "keep");
}

TEST_CASE("an output's temporary exists from open to commit, and goes when the output is dropped") {
  TempDir dir;
  write_text(dir / "out", "old contents");
  {
    Result<OutputFile> output = OutputFile::open(dir / "out");
    REQUIRE(output.ok());
    CHECK(dir.entries().size() == 2);  // out and .out.kpack-XXXXXX
    REQUIRE(output->commit(bytes("new"), 0644).ok());
    CHECK(dir.entries() == std::vector<std::string>{"out"});
  }
  CHECK(read_text(dir / "out") == "new");
  {
    Result<OutputFile> dropped = OutputFile::open(dir / "out");
    REQUIRE(dropped.ok());
  }
  CHECK(dir.entries() == std::vector<std::string>{"out"});
  CHECK(read_text(dir / "out") == "new");
  // Refused at open, before any work: a directory, a missing one, one where no file can be made.
  CHECK(OutputFile::open(dir.path()).error().message == dir.path() + ": is a directory");
  CHECK(OutputFile::open(dir / "sub/").error().message == dir / "sub/" + ": is a directory");
  CHECK(OutputFile::open("/proc/kpack-test")
            .error()
            .message.rfind("/proc/kpack-test: cannot create a temporary file in /proc: ", 0) == 0);
}

TEST_CASE("an interrupted kpack leaves no temporary behind") {
  TempDir dir;
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    signal(SIGTERM, SIG_DFL);  // the test runner's crash handler out of the way, as in kpack
    Result<OutputFile> output = OutputFile::open(dir / "out");
    if (output) raise(SIGTERM);
    _exit(3);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK(dir.entries().empty());
}

TEST_CASE("a write that runs out of room keeps the old file (file size limit)") {
  // RLIMIT_FSIZE makes write() fail (EFBIG) like a full disk would, without needing a mount.
  TempDir dir;
  write_text(dir / "out", "old contents");
  struct rlimit saved;
  REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
  struct rlimit small = saved;
  small.rlim_cur = 4096;
  const auto old_handler = signal(SIGXFSZ, SIG_IGN);
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  const Status status = write_file_atomically(dir / "out", std::vector<uint8_t>(1 << 20, 0x5A));
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);

  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message == dir / "out" + ": write failed: File too large");
  CHECK(read_text(dir / "out") == "old contents");
  CHECK(dir.entries() == std::vector<std::string>{"out"});
}

TEST_CASE("a full disk is an error and keeps the old file (tmpfs, root only)") {
  if (geteuid() != 0) {
    test::skip_case("file_io.full-disk", "mounting a tiny tmpfs needs root");
    return;
  }
  TempDir dir;
  if (mount("tmpfs", dir.path().c_str(), "tmpfs", 0, "size=64k") != 0) {
    test::skip_case("file_io.full-disk", std::string("cannot mount a tmpfs here: ") + strerror(errno));
    return;
  }
  write_text(dir / "out", "old contents");
  const Status status = write_file_atomically(dir / "out", std::vector<uint8_t>(1 << 20, 0x5A));
  const auto entries = dir.entries();
  const std::string survivor = read_text(dir / "out");
  CHECK(umount(dir.path().c_str()) == 0);

  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message == dir / "out" + ": write failed: No space left on device");
  CHECK(survivor == "old contents");
  CHECK(entries == std::vector<std::string>{"out"});
}
