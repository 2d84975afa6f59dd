// File access through plain POSIX calls, because the atomic write needs mkstemp, fsync and rename
// on descriptors, and errno gives the one-line reasons users need.
#include "packer/base/file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace kpack {

namespace {

std::string reason(int err) {
  switch (err) {
    case ENOENT: return "no such file";
    case EISDIR: return "is a directory";
    case EACCES: return "permission denied";
    default: return strerror(err);
  }
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }
  // Closes now, because close can report a deferred write error (NFS, quota).
  int close_now() {
    const int ret = close(fd_);
    fd_ = -1;
    return ret;
  }

 private:
  int fd_;
};

bool write_all(int fd, std::span<const uint8_t> data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data = data.subspan(static_cast<size_t>(n));
  }
  return true;
}

// Writes `data` leaving runs of whole zero blocks as holes (a raw image's padding between the stub
// and the kernel is megabytes of zeros), where the file system supports them; reads see zeros either
// way. The file ends at data.size() even when it ends in a hole.
bool write_sparse(int fd, std::span<const uint8_t> data) {
  constexpr size_t kBlock = 64 * 1024;
  static const uint8_t zeros[kBlock] = {};
  size_t written = 0, at = 0;
  while (at < data.size()) {
    size_t n = std::min(kBlock, data.size() - at);
    if (n == kBlock && std::memcmp(data.data() + at, zeros, kBlock) == 0) {
      if (!write_all(fd, data.subspan(written, at - written))) return false;
      at += kBlock;
      written = at;
      if (lseek(fd, static_cast<off_t>(at), SEEK_SET) < 0) return false;
      continue;
    }
    at += n;
  }
  if (!write_all(fd, data.subspan(written))) return false;
  return ftruncate(fd, static_cast<off_t>(data.size())) == 0;
}

// The temporaries an interrupted kpack would otherwise leave behind, for the handler of SIGINT,
// SIGTERM and SIGHUP to remove (unlink is async-signal-safe). Packing has one, extract two.
constexpr int kMaxTemporaries = 4;
char g_temporaries[kMaxTemporaries][PATH_MAX];
volatile sig_atomic_t g_in_use[kMaxTemporaries];

extern "C" void remove_temporaries(int signal_number) {
  for (int i = 0; i < kMaxTemporaries; ++i)
    if (g_in_use[i]) unlink(g_temporaries[i]);
  signal(signal_number, SIG_DFL);
  raise(signal_number);
}

// The slot `temp` takes, or -1 when there is none (it is then removed only on a normal exit).
int register_temporary(const std::string& temp) {
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    // Only where the signal would end the process anyway: one the caller ignores (nohup) stays
    // ignored, one someone else handles stays theirs.
    struct sigaction current {
    }, action{};
    if (sigaction(signal_number, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
    action.sa_handler = remove_temporaries;
    sigemptyset(&action.sa_mask);
    sigaction(signal_number, &action, nullptr);
  }
  if (temp.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kMaxTemporaries; ++i) {
    if (g_in_use[i]) continue;
    std::memcpy(g_temporaries[i], temp.c_str(), temp.size() + 1);
    g_in_use[i] = 1;
    return i;
  }
  return -1;
}

void forget_temporary(int slot) {
  if (slot >= 0) g_in_use[slot] = 0;
}

}  // namespace

Result<std::vector<uint8_t>> read_file(const std::string& path) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return error_in(path, reason(errno));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return error_in(path, reason(errno));
  if (S_ISDIR(st.st_mode)) return error_in(path, reason(EISDIR));

  // Read until end of file rather than trusting st_size, so pipes and growing files work too.
  // One spare byte lets the read that sees end of file run without first growing the buffer.
  std::vector<uint8_t> data(S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) + 1 : 1 << 16);
  size_t filled = 0;
  for (;;) {
    if (filled == data.size()) data.resize(data.size() * 2);
    const ssize_t n = read(fd.get(), data.data() + filled, data.size() - filled);
    if (n < 0) {
      if (errno == EINTR) continue;
      return error_in(path, "read failed: " + std::string(strerror(errno)));
    }
    if (n == 0) break;
    filled += static_cast<size_t>(n);
  }
  data.resize(filled);
  return data;
}

Result<OutputFile> OutputFile::open(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  struct stat st;
  if (base.empty() || (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) return error_in(path, "is a directory");

  std::string temp = dir + "/." + base + ".kpack-XXXXXX";
  const int fd = mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return error_in(path, "cannot create a temporary file in " + dir + ": " + strerror(errno));
  return OutputFile(path, dir, temp, fd, register_temporary(temp));
}

OutputFile::OutputFile(std::string path, std::string dir, std::string temp, int fd, int slot)
    : path_(std::move(path)), dir_(std::move(dir)), temp_(std::move(temp)), fd_(fd), slot_(slot) {}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : path_(std::move(other.path_)),
      dir_(std::move(other.dir_)),
      temp_(std::move(other.temp_)),
      fd_(other.fd_),
      slot_(other.slot_) {
  other.temp_.clear();
  other.fd_ = -1;
  other.slot_ = -1;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) close(fd_);
  if (!temp_.empty()) unlink(temp_.c_str());
  forget_temporary(slot_);
}

Status OutputFile::commit(std::span<const uint8_t> data, unsigned mode) {
  if (fd_ < 0 || temp_.empty()) return error_in(path_, "internal error: output already written");
  Fd fd(fd_);
  fd_ = -1;
  auto fail = [&](const char* step) -> Status {
    const int err = errno;
    unlink(temp_.c_str());
    temp_.clear();
    return error_in(path_, std::string(step) + ": " + strerror(err));
  };
  if (!write_sparse(fd.get(), data)) return fail("write failed");
  // Flush before the rename: otherwise a crash could leave the new name pointing at an empty file.
  if (fsync(fd.get()) != 0) return fail("fsync failed");
  if (fchmod(fd.get(), mode) != 0) return fail("chmod failed");
  if (fd.close_now() != 0) return fail("close failed");
  if (rename(temp_.c_str(), path_.c_str()) != 0) return fail("rename failed");
  temp_.clear();

  // Make the rename itself durable; a directory that cannot be opened or synced is not an error
  // worth failing a finished write for.
  const int dir_fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
  return Ok{};
}

Status write_file_atomically(const std::string& path, std::span<const uint8_t> data, unsigned mode) {
  OutputFile output = KPACK_TRY_RESULT(OutputFile::open(path));
  return output.commit(data, mode);
}

}  // namespace kpack
