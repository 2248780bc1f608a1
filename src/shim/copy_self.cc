#include "shim/copy_self.h"

#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::shim {
namespace {

namespace fs = std::filesystem;

std::string why() {
  return std::strerror(errno);
}

// Closes a descriptor on every path out; close() itself is checked where data were written.
class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}

  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  ~Fd() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }

  int get() const { return fd_; }

  int release() { return std::exchange(fd_, -1); }

private:
  int fd_;
};

// The running executable: /proc/self/exe, or the path it was started by where /proc is not
// mounted (an empty root; in a pod /proc always is).
Fd open_self() {
  int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const char* started = reinterpret_cast<const char*>(::getauxval(AT_EXECFN));
    if (started != nullptr) {
      fd = ::open(started, O_RDONLY | O_CLOEXEC);
    }
  }
  if (fd < 0) {
    throw Error(fmt::format("cannot open this executable (/proc/self/exe): {}", why()));
  }
  return Fd(fd);
}

void write_all(int fd, const char* data, size_t size, const fs::path& to) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw Error(fmt::format("cannot write {}: {}", to.string(), why()));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void copy_bytes(int from, int to, const fs::path& to_path) {
  std::array<char, 1 << 16> buffer;
  for (;;) {
    ssize_t n = ::read(from, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw Error(fmt::format("cannot read this executable: {}", why()));
    }
    if (n == 0) {
      return;
    }
    write_all(to, buffer.data(), static_cast<size_t>(n), to_path);
  }
}

// Removes the temporary file unless the rename took it.
struct TempFile {
  fs::path path;
  bool kept = false;

  ~TempFile() {
    if (!kept) {
      ::unlink(path.c_str());
    }
  }
};

}  // namespace

fs::path copy_self(const fs::path& dir) {
  struct stat st {};

  if (::stat(dir.c_str(), &st) != 0) {
    throw Error(fmt::format("cannot copy into {}: {}", dir.string(), why()));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw Error(fmt::format("cannot copy into {}: not a folder", dir.string()));
  }
  Fd self = open_self();
  std::string pattern = (dir / ".zerodrop.XXXXXX").string();
  Fd out(::mkostemp(pattern.data(), O_CLOEXEC));
  if (out.get() < 0) {
    throw Error(fmt::format("cannot write in {}: {}", dir.string(), why()));
  }
  TempFile temp{pattern};
  copy_bytes(self.get(), out.get(), temp.path);
  // mkstemp creates 0600; the copy runs as any user the pod's containers use.
  if (::fchmod(out.get(), 0755) != 0 || ::fsync(out.get()) != 0 || ::close(out.release()) != 0) {
    throw Error(fmt::format("cannot write {}: {}", temp.path.string(), why()));
  }
  fs::path copy = dir / kCopyName;
  if (::rename(temp.path.c_str(), copy.c_str()) != 0) {
    throw Error(
        fmt::format("cannot rename {} to {}: {}", temp.path.string(), copy.string(), why()));
  }
  temp.kept = true;
  // The rename is durable once the folder is synced; a folder that refuses fsync loses nothing
  // a container would see (an emptyDir lives as long as its pod).
  Fd folder(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (folder.get() >= 0) {
    ::fsync(folder.get());
  }
  return copy;
}

}  // namespace zerodrop::shim
