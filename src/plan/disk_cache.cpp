#include "plan/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace cudnnfe::plan {
namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

// mkdir -p; "" on success.
std::string make_dirs(const std::string &dir) {
  if (dir.empty()) return "empty directory name";
  std::string partial;
  size_t start = 0;
  while (start <= dir.size()) {
    size_t end = dir.find('/', start);
    if (end == std::string::npos) end = dir.size();
    partial = dir.substr(0, end);
    start = end + 1;
    if (partial.empty()) continue;  // leading '/'
    if (::mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST)
      return cat("cannot create directory ", partial, ": ", errno_text(errno));
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return cat(dir, " is not a directory");
  return "";
}

}  // namespace

std::string cache_file_path(const std::string &dir, const std::string &key) {
  std::string path = dir;
  if (!path.empty() && path.back() != '/') path += '/';
  return path + key + ".cudnnfe-plan";
}

bool read_file(const std::string &path, size_t max_bytes, std::string *out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
      static_cast<unsigned long long>(st.st_size) > max_bytes) {
    ::close(fd);
    return false;
  }
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::read(fd, &data[done], data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != data.size()) return false;
  *out = std::move(data);
  return true;
}

std::string write_file_atomically(const std::string &dir, const std::string &path,
                                  const std::string &data) {
  std::string why = make_dirs(dir);
  if (!why.empty()) return why;
  static std::atomic<unsigned> counter{0};
  const std::string temp = cat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return cat("cannot create ", temp, ": ", errno_text(errno));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      return cat("cannot write ", temp, ": ", errno_text(error));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    return cat("cannot write ", temp, ": ", errno_text(error));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    return cat("cannot rename ", temp, " to ", path, ": ", errno_text(error));
  }
  return "";
}

}  // namespace cudnnfe::plan
