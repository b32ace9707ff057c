#include "workloads/parsing/output_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dtsim::parsing {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(int error) {
  throw OutputError(std::strerror(error));
}

// Writes all of `text` to `fd`; the errno of the first failed write, or 0.
int write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return n < 0 ? errno : ENOSPC;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

// Writes `text` to `fd` and closes it; the errno of the first failure, or 0.
int write_and_close(int fd, std::string_view text) {
  const int write_error = write_all(fd, text);
  const int close_error = ::close(fd) == 0 ? 0 : errno;
  return write_error != 0 ? write_error : close_error;
}

void write_in_place(const std::string& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) {
    fail(errno);
  }
  if (const int error = write_and_close(fd, text); error != 0) {
    fail(error);
  }
}

// A new file next to `target` (".NAME.tmp-PID-N"), open for writing; its path in `temporary`.
int create_temporary(const fs::path& target, fs::path& temporary) {
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  for (int n = 0;; ++n) {
    temporary = folder / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()) +
                          "-" + std::to_string(n));
    // 0666: the permissions a plain ofstream would give, less the umask.
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) {
      return fd;
    }
  }
}

}  // namespace

void write_output_file(const std::string& path, std::string_view text) {
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    if (S_ISDIR(existing.st_mode)) {
      fail(EISDIR);
    }
    write_in_place(path, text);
    return;
  }
  fs::path temporary;
  const int fd = create_temporary(fs::path(path), temporary);
  if (fd < 0) {
    fail(errno);
  }
  int error = write_and_close(fd, text);
  if (error == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) {
    error = errno;
  }
  if (error != 0) {
    ::unlink(temporary.c_str());
    fail(error);
  }
}

}  // namespace dtsim::parsing
