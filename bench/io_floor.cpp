// The least a process can spend on `lessons eval linear-attention`'s file I/O (issue 40's process
// target): read three float32 .npy inputs of the same size (q, k, v in DIR), fill three buffers of
// that size from them (φ(q), φ(k) and the output stand-ins: one add each) and write the output
// as DIR/io_floor_out.npy. Time it with `perf stat -r 30 bench/io_floor MODE DIR`; `none` exits at
// once (the program's own start, to subtract).
//   none        nothing
//   read        read() into fresh malloc'd memory, as the CLI does (every 4 KiB page faulted in)
//   read-huge   read() into fresh memory advised to use huge pages (2 MiB-aligned, MADV_HUGEPAGE)
//   mmap-huge   the inputs mapped (no copy), the three buffers on huge pages
// Only version-1 headers of little-endian float32 arrays (np.save's) are read; not a reader.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::perror(what.c_str());
  std::exit(1);
}

float* buffer(std::size_t bytes, bool huge) {
  if (!huge) {
    auto* p = static_cast<float*>(std::malloc(bytes));
    if (!p) fail("malloc");
    return p;
  }
  const std::size_t align = std::size_t(2) << 20, len = (bytes + align - 1) / align * align;
  void* p = mmap(nullptr, len + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) fail("mmap");
  auto* a = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(p) + align - 1) / align * align);
  madvise(a, len, MADV_HUGEPAGE);
  return reinterpret_cast<float*>(a);
}

struct Input {
  const float* data;
  std::size_t count;
  std::string header;
};

Input read_input(const std::string& path, bool map, bool huge) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) fail(path);
  struct stat st {};
  fstat(fd, &st);
  unsigned char prefix[10];
  if (pread(fd, prefix, 10, 0) != 10 || std::memcmp(prefix, "\x93NUMPY\x01", 7) != 0) fail(path + ": not a version-1 .npy");
  const std::size_t data_at = 10 + std::size_t(prefix[8] | (prefix[9] << 8));
  std::string header(data_at, '\0');
  if (pread(fd, header.data(), data_at, 0) != ssize_t(data_at)) fail(path);
  const std::size_t bytes = std::size_t(st.st_size) - data_at;
  Input in{nullptr, bytes / 4, header};
  if (map) {
    void* m = mmap(nullptr, std::size_t(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED) fail(path);
    in.data = reinterpret_cast<const float*>(static_cast<const char*>(m) + data_at);
  } else {
    float* b = buffer(bytes, huge);
    if (pread(fd, b, bytes, off_t(data_at)) != ssize_t(bytes)) fail(path);
    in.data = b;
  }
  close(fd);
  return in;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: io_floor none|read|read-huge|mmap-huge DIR\n");
    return 2;
  }
  const std::string mode = argv[1], dir = argv[2];
  if (mode == "none") return 0;
  if (mode != "read" && mode != "read-huge" && mode != "mmap-huge") {
    std::fprintf(stderr, "io_floor: unknown mode %s\n", mode.c_str());
    return 2;
  }
  const bool map = mode == "mmap-huge", huge = mode != "read";
  const Input q = read_input(dir + "/q.npy", map, huge), k = read_input(dir + "/k.npy", map, huge),
              v = read_input(dir + "/v.npy", map, huge);
  if (k.count != q.count || v.count != q.count) fail("io_floor: q, k and v differ in size");
  float *pq = buffer(q.count * 4, huge), *pk = buffer(q.count * 4, huge), *o = buffer(q.count * 4, huge);
  for (std::size_t i = 0; i < q.count; ++i) {
    pq[i] = q.data[i] + 1;
    pk[i] = k.data[i] + 1;
    o[i] = v.data[i] + pq[i] * pk[i];
  }
  const std::string out = dir + "/io_floor_out.npy";
  const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail(out);
  if (write(fd, v.header.data(), v.header.size()) != ssize_t(v.header.size()) ||
      write(fd, o, q.count * 4) != ssize_t(q.count * 4))
    fail(out);
  close(fd);
  return 0;
}
