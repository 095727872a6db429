// .npy reading and writing; the format is described in npy.hpp.
#include "numeric/npy.hpp"
#include "numeric/numpy_format.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/core.h>

#include "core/errors.hpp"
#include "numeric/float16.hpp"
#include "numeric/fresh_memory.hpp"
#include "numeric/precision.hpp"

namespace vl::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kAlign = 64;            // numpy.lib.format.ARRAY_ALIGN
constexpr std::size_t kGrowthAxisDigits = 21;  // numpy.lib.format.GROWTH_AXIS_MAX_DIGITS

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw InputError(fmt::format("{}: {}", path.string(), what));
}

// ---------------------------------------------------------------------------------------
// The header: a Python dict literal with the keys 'descr', 'fortran_order' and 'shape'.

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::size_t> shape;
};

// A tiny recursive-descent reader of the subset of Python literals NumPy writes.
class HeaderParser {
 public:
  HeaderParser(const std::filesystem::path& path, std::string text)
      : path_(path), text_(std::move(text)) {}

  Header parse() {
    Header h;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      const std::string key = parse_string();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (peek() == '[') {
          fail(path_, "unsupported dtype: structured (a list of fields in 'descr'); supported: "
                      "f2/f4/f8, b1, i1..i8, u1..u8");
        }
        h.descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        h.shape = parse_shape();
        have_shape = true;
      } else {
        bad(fmt::format("unexpected key '{}'", key));
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        bad("expected ',' or '}' after a value");
      }
    }
    skip_ws();
    if (pos_ != text_.size()) bad("unexpected text after the closing '}'");
    if (!have_descr || !have_order || !have_shape) {
      bad("the header must hold the keys 'descr', 'fortran_order' and 'shape'");
    }
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    const std::size_t end = text_.find_last_not_of(" \n");
    fail(path_, fmt::format("malformed header ({}): {}", what, text_.substr(0, end == std::string::npos ? 0 : end + 1)));
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t')) ++pos_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) bad(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string parse_string() {
    skip_ws();
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad("expected a quoted string");
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) bad("unterminated string");
    std::string s = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return s;
  }
  bool parse_bool() {
    if (text_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (text_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    bad("'fortran_order' must be True or False");
  }
  std::vector<std::size_t> parse_shape() {
    std::vector<std::size_t> shape;
    expect('(');
    while (true) {
      skip_ws();
      if (peek() == ')') {
        ++pos_;
        return shape;
      }
      if (peek() < '0' || peek() > '9') bad("'shape' must be a tuple of non-negative integers");
      std::size_t n = 0;
      while (peek() >= '0' && peek() <= '9') {
        const std::size_t digit = static_cast<std::size_t>(peek() - '0');
        if (n > (std::numeric_limits<std::size_t>::max() - digit) / 10) bad("a dimension is too large");
        n = n * 10 + digit;
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 longs
      shape.push_back(n);
      skip_ws();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != ')') {
        bad("expected ',' or ')' in 'shape'");
      }
    }
  }

  const std::filesystem::path& path_;
  std::string text_;
  std::size_t pos_ = 0;
};

// ---------------------------------------------------------------------------------------
// The dtype: '<f8' = byte order, kind, item size.

struct Dtype {
  std::string name;  // NumPy's name: "float32", ...
  char kind;         // 'f', 'i', 'u', 'b'
  std::size_t size;  // bytes per element
  bool swap;         // stored in the other byte order than this machine's
};

Dtype parse_descr(const std::filesystem::path& path, const std::string& descr) {
  auto unsupported = [&](const std::string& what) -> Dtype {
    fail(path, fmt::format("unsupported dtype '{}' ({}); supported: f2/f4/f8, b1, i1..i8, u1..u8",
                           descr, what));
  };
  if (descr.size() < 2) unsupported("too short");
  char order = descr[0];
  std::string rest = descr.substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    order = '=';
    rest = descr;
  }
  const char kind = rest[0];
  const std::string digits = rest.substr(1);
  if (kind == 'U' || kind == 'S' || kind == 'a') unsupported("strings");
  if (kind == 'O') unsupported("Python objects");
  if (kind == 'c') unsupported("complex numbers");
  if (kind == 'V') unsupported("structured or void");
  if (kind == 'M' || kind == 'm') unsupported("dates and times");
  if (digits.empty() || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos) {
    unsupported("not a kind followed by an item size");
  }
  const std::size_t size = std::stoul(digits);
  std::string name;
  if (kind == 'f' && (size == 2 || size == 4 || size == 8)) {
    name = "float" + std::to_string(size * 8);
  } else if ((kind == 'b' || kind == '?') && size == 1) {
    name = "bool";
  } else if ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) {
    name = std::string(kind == 'u' ? "uint" : "int") + std::to_string(size * 8);
  } else {
    unsupported("unknown kind or item size");
  }
  if (order == '|' && size > 1) unsupported("'|' (no byte order) on a multi-byte type");
  const bool little = order == '<' || (order == '=' && std::endian::native == std::endian::little);
  const bool big = order == '>' || (order == '=' && std::endian::native == std::endian::big);
  const bool swap = size > 1 && ((little && std::endian::native == std::endian::big) ||
                                 (big && std::endian::native == std::endian::little));
  return Dtype{name, kind == '?' ? 'b' : kind, size, swap};
}

// One element at `p` as a double (exact: 64-bit integers beyond 2^53 are rejected).
double decode(const std::filesystem::path& path, const Dtype& dt, const unsigned char* p,
              std::size_t index) {
  unsigned char b[8] = {};  // dt.size (1..8) bytes are set below
  for (std::size_t i = 0; i < dt.size; ++i) b[i] = dt.swap ? p[dt.size - 1 - i] : p[i];
  auto as = [&b]<class T>(T) {
    T v;
    std::memcpy(&v, b, sizeof v);
    return v;
  };
  constexpr double kExact = 9007199254740992.0;  // 2^53
  switch (dt.kind) {
    case 'b': return b[0] != 0 ? 1.0 : 0.0;
    case 'f':
      if (dt.size == 2) return half_to_double(as(std::uint16_t{}));
      if (dt.size == 4) return as(float{});
      return as(double{});
    case 'i':
      if (dt.size == 1) return as(std::int8_t{});
      if (dt.size == 2) return as(std::int16_t{});
      if (dt.size == 4) return as(std::int32_t{});
      {
        const std::int64_t v = as(std::int64_t{});
        if (v > 9007199254740992LL || v < -9007199254740992LL) {
          fail(path, fmt::format("int64 element {} ({}) is beyond 2^53 and would be rounded in a double", index, v));
        }
        return static_cast<double>(v);
      }
    default:  // 'u'
      if (dt.size == 1) return as(std::uint8_t{});
      if (dt.size == 2) return as(std::uint16_t{});
      if (dt.size == 4) return as(std::uint32_t{});
      {
        const std::uint64_t v = as(std::uint64_t{});
        if (static_cast<double>(v) > kExact) {
          fail(path, fmt::format("uint64 element {} ({}) is beyond 2^53 and would be rounded in a double", index, v));
        }
        return static_cast<double>(v);
      }
  }
}

// `count` native-order elements of type F at `p` (any alignment) as doubles.
template <class F>
void widen(const unsigned char* p, std::size_t count, double* out) {
  for (std::size_t i = 0; i < count; ++i) {
    F v;
    std::memcpy(&v, p + i * sizeof(F), sizeof(F));
    out[i] = static_cast<double>(v);
  }
}

// The file opened for reading, and its size; or a failure naming it.
std::ifstream open_for_reading(const std::filesystem::path& path, std::size_t& size) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);  // one stat for both questions
  if (!std::filesystem::exists(status)) fail(path, "no such file");
  if (std::filesystem::is_directory(status)) fail(path, "is a directory, not a .npy file");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) fail(path, "cannot open for reading");
  const std::streamoff end = in.tellg();  // the size from the end position
  if (end < 0) fail(path, "cannot tell the file's size");
  size = static_cast<std::size_t>(end);
  return in;
}

// n bytes from the stream's position `at` into out.
void read_exactly(std::ifstream& in, const std::filesystem::path& path, std::size_t at, void* out, std::size_t n) {
  in.seekg(static_cast<std::streamoff>(at));
  const auto len = static_cast<std::streamsize>(n);
  if (!in.read(static_cast<char*>(out), len) || in.gcount() != len) fail(path, "read error (the file changed while it was read?)");
}

// The whole file.
std::vector<unsigned char> read_file(const std::filesystem::path& path) {
  std::size_t size = 0;
  std::ifstream in = open_for_reading(path, size);
  std::vector<unsigned char> bytes(size);
  read_exactly(in, path, 0, bytes.data(), size);
  return bytes;
}

// ---------------------------------------------------------------------------------------
// Writing.

std::string header_bytes(const std::string& descr, const std::vector<std::size_t>& shape) {
  // As numpy.lib.format._write_array_header: keys sorted, room for the first axis to grow,
  // then padding so that the data starts at a multiple of 64 bytes.
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr,
                                 numpy::format_shape(shape));
  if (!shape.empty()) dict += std::string(kGrowthAxisDigits - std::to_string(shape[0]).size(), ' ');
  for (int major : {1, 2}) {
    const std::size_t len_bytes = major == 1 ? 2 : 4;
    const std::size_t hlen = dict.size() + 1;  // + '\n'
    const std::size_t pad = kAlign - ((kMagicLen + 2 + len_bytes + hlen) % kAlign);
    const std::size_t total = hlen + pad;
    if (major == 1 && total > 0xffff) continue;  // too long for version 1.0
    std::string out(kMagic, kMagicLen);
    out += static_cast<char>(major);
    out += '\0';
    for (std::size_t i = 0; i < len_bytes; ++i) out += static_cast<char>((total >> (8 * i)) & 0xff);
    out += dict + std::string(pad, ' ') + '\n';
    return out;
  }
  throw std::length_error("npy header too long");
}

template <class T>
void append_little_endian(std::string& out, T v) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  if constexpr (std::endian::native == std::endian::big) std::reverse(b, b + sizeof(T));
  out.append(reinterpret_cast<const char*>(b), sizeof(T));
}

// Writes the concatenation of `parts` to `path` as `how` says: through a temporary file in the
// same directory and a rename, or straight into a file created new ("x": O_EXCL, so an existing
// file is never written into). The parts go one after the other: an array's buffer need not be
// copied behind its header first.
void write_file(const std::filesystem::path& path, std::initializer_list<std::string_view> parts, Write how) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const bool in_place = how == Write::new_file;
  // The file the bytes go to: `path` itself, or a temporary beside it.
  const std::filesystem::path written =
      in_place ? path : dir / fmt::format(".{}.tmp.{}.{}", path.filename().string(), ::getpid(), counter++);
  std::FILE* f = std::fopen(written.c_str(), in_place ? "wbx" : "wb");
  if (!f && in_place) fail(path, fmt::format("cannot write: cannot create it ({})", std::strerror(errno)));
  if (!f) fail(path, fmt::format("cannot write: cannot create a temporary file in '{}' ({})", dir.string(), std::strerror(errno)));
  bool ok = true;
  for (const std::string_view part : parts)
    if (!part.empty()) ok = std::fwrite(part.data(), 1, part.size(), f) == part.size() && ok;
  ok = (std::fflush(f) == 0) && ok;
  ok = (std::fclose(f) == 0) && ok;
  std::error_code ec;
  if (!ok) {
    std::filesystem::remove(written, ec);
    fail(path, in_place ? "cannot write: write error (disk full?); the partial file was removed"
                        : "cannot write: write error (disk full?); the file was not changed");
  }
  if (in_place) return;
  std::filesystem::rename(written, path, ec);
  if (ec) {
    std::error_code ignore;
    std::filesystem::remove(written, ignore);
    fail(path, fmt::format("cannot write: {}; the file was not changed", ec.message()));
  }
}

template <class T>
std::vector<std::size_t> shape_of(const xt::xarray<T>& a) {
  return std::vector<std::size_t>(a.shape().begin(), a.shape().end());
}

}  // namespace

namespace {

// What the prefix and header of a .npy file say, checked: the data starts at `data_offset` and
// holds `count` elements of `dtype`, in the file's order (C, or Fortran when fortran_order).
struct Layout {
  Header header;
  Dtype dtype;
  std::size_t data_offset = 0;
  std::size_t count = 0;
};

// After the magic and the version (major, minor): the header's length, little-endian, in 2
// bytes for version 1, 4 for versions 2 and 3. `bytes` holds at least the prefix up to there.
constexpr std::size_t kLengthAt = kMagicLen + 2;
std::size_t length_field_bytes(int major) { return major == 1 ? 2 : 4; }
std::size_t header_length(const std::vector<unsigned char>& bytes, int major) {
  std::size_t header_len = 0;
  for (std::size_t i = 0; i < length_field_bytes(major); ++i) header_len |= std::size_t{bytes[kLengthAt + i]} << (8 * i);
  return header_len;
}

// `bytes`: the start of the file (at least up to the end of its header; the whole file in
// load()); `file_size`: the size of the whole file, for the data's size checks.
Layout parse_layout(const std::filesystem::path& path, const std::vector<unsigned char>& bytes, std::size_t file_size) {
  if (bytes.size() < kMagicLen + 2 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0) {
    fail(path, "not a .npy file (bad magic: the file must start with \\x93NUMPY)");
  }
  const int major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    fail(path, fmt::format("unsupported .npy format version {}.{} (1.0, 2.0 and 3.0 are)", major, minor));
  }
  const std::size_t prefix = kLengthAt + length_field_bytes(major);
  if (bytes.size() < prefix) fail(path, "truncated header (the file ends inside the header length)");
  const std::size_t header_len = header_length(bytes, major);
  if (bytes.size() < prefix + header_len) {
    fail(path, fmt::format("truncated header (it should be {} bytes, the file has {} after the prefix)",
                           header_len, bytes.size() - prefix));
  }
  Layout l;
  l.header = HeaderParser(path, std::string(reinterpret_cast<const char*>(bytes.data() + prefix), header_len)).parse();
  l.dtype = parse_descr(path, l.header.descr);
  l.data_offset = prefix + header_len;
  const Header& h = l.header;
  const Dtype& dt = l.dtype;

  // `nonzero` bounds the product of the non-zero dimensions too: a (0, 2^60) array holds no
  // element but its strides would overflow.
  std::size_t count = 1, nonzero = 1;
  for (std::size_t d : h.shape) {
    if (d != 0 && nonzero > std::numeric_limits<std::size_t>::max() / 8 / d / dt.size) {
      fail(path, fmt::format("shape {} is too large", numpy::format_shape(h.shape)));
    }
    count *= d;
    if (d != 0) nonzero *= d;
  }
  l.count = count;
  const std::size_t data_bytes = file_size - l.data_offset;
  if (data_bytes < count * dt.size) {
    fail(path, fmt::format("truncated data: shape {} of {} needs {} bytes, the file holds {}",
                           numpy::format_shape(h.shape), dt.name, count * dt.size, data_bytes));
  }
  if (data_bytes > count * dt.size) {
    fail(path, fmt::format("element count does not match the shape: the file holds {} bytes of {} "
                           "({} elements) but shape {} has {}",
                           data_bytes, dt.name, data_bytes / dt.size, numpy::format_shape(h.shape), count));
  }
  return l;
}

// Calls put(file_index, c_offset) for every element: in C order the two are equal; in Fortran
// order the first index varies fastest in the file, so walk the file's elements keeping their
// multi-index and give each its C-order offset.
template <class Put>
void for_each_element(const Layout& l, Put put) {
  const std::vector<std::size_t>& shape = l.header.shape;
  if (!l.header.fortran_order || shape.size() < 2) {
    for (std::size_t i = 0; i < l.count; ++i) put(i, i);
    return;
  }
  const std::size_t rank = shape.size();
  std::vector<std::size_t> c_stride(rank, 1), index(rank, 0);
  for (std::size_t d = rank - 1; d > 0; --d) c_stride[d - 1] = c_stride[d] * shape[d];
  for (std::size_t k = 0; k < l.count; ++k) {
    std::size_t offset = 0;
    for (std::size_t d = 0; d < rank; ++d) offset += index[d] * c_stride[d];
    put(k, offset);
    for (std::size_t d = 0; d < rank && ++index[d] == shape[d]; ++d) index[d] = 0;
  }
}

// Native-order, C-order data of exactly the element type: a plain copy will do.
bool is_plain(const Layout& l, char kind, std::size_t size) {
  return l.dtype.kind == kind && l.dtype.size == size && !l.dtype.swap && (!l.header.fortran_order || l.header.shape.size() < 2);
}

}  // namespace

Array load(const std::filesystem::path& path, const InfoCheck& check) {
  const std::vector<unsigned char> bytes = read_file(path);
  const Layout l = parse_layout(path, bytes, bytes.size());
  if (check) check(Info{l.dtype.name, l.header.shape});
  Array a{l.dtype.name, l.header.shape, std::vector<double>(l.count)};
  const unsigned char* data = bytes.data() + l.data_offset;
  // Native-order floats in C order, the usual case: the same values as decode(), in loops the
  // compiler vectorises.
  if (is_plain(l, 'f', 4)) {
    widen<float>(data, l.count, a.values.data());
  } else if (is_plain(l, 'f', 8)) {
    if (l.count > 0) std::memcpy(a.values.data(), data, l.count * sizeof(double));  // an empty vector's data() may be null
  } else {
    for_each_element(l, [&](std::size_t k, std::size_t offset) { a.values[offset] = decode(path, l.dtype, data + k * l.dtype.size, offset); });
  }
  return a;
}

namespace {

// The file opened once and its header read and checked (the layout); the data is read later from
// the same stream, so header and data come from one file even if the path is replaced meanwhile.
// The prefix holds the header's length; then read up to the header's end (or the file's). (A file
// too short or not a .npy: parse_layout says why from what there is.)
struct OpenNpy {
  std::ifstream in;
  Layout layout;
};
OpenNpy open_layout(const std::filesystem::path& path) {
  OpenNpy f;
  std::size_t size = 0;
  f.in = open_for_reading(path, size);
  std::vector<unsigned char> bytes(std::min<std::size_t>(size, kLengthAt + 4));
  read_exactly(f.in, path, 0, bytes.data(), bytes.size());
  if (bytes.size() == kLengthAt + 4 && std::memcmp(bytes.data(), kMagic, kMagicLen) == 0) {
    const int major = bytes[6];
    const std::size_t have = bytes.size(), end = std::min(size, kLengthAt + length_field_bytes(major) + header_length(bytes, major));
    bytes.resize(end);
    if (end > have) read_exactly(f.in, path, have, bytes.data() + have, end - have);
  }
  f.layout = parse_layout(path, bytes, size);
  return f;
}

}  // namespace

Info read_info(const std::filesystem::path& path) {
  const Layout l = open_layout(path).layout;
  return Info{l.dtype.name, l.header.shape};
}

namespace {

// load_exact's body, kept inside the anonymous namespace with the Layout its lambda captures (a
// template of external linkage capturing an internal type is what -Wsubobject-linkage warns of
// when this file is compiled inside a unity translation unit).
template <class T>
xt::xarray<T> read_exact(const std::filesystem::path& path, const InfoCheck& check) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  const char* want = std::is_same_v<T, float> ? "float32" : "float64";
  OpenNpy f = open_layout(path);
  const Layout& l = f.layout;
  if (check) check(Info{l.dtype.name, l.header.shape});
  if (l.dtype.name != want) fail(path, fmt::format("dtype {}, {} expected", l.dtype.name, want));
  xt::xarray<T> out = xt::xarray<T>::from_shape(l.header.shape);
  if (l.count == 0) return out;  // an empty array's data() may be null
  if (is_plain(l, 'f', sizeof(T))) {
    // The data straight into the array: no second buffer of the file's size to fault in and copy
    // (for `lessons eval`'s inputs, about half their reading time). parse_layout checked the size.
    prepare_to_fill(out.data(), l.count * sizeof(T));
    read_exactly(f.in, path, l.data_offset, out.data(), l.count * sizeof(T));
    return out;
  }
  // The other byte order, or Fortran order: decode() is exact for float32 and float64.
  std::vector<unsigned char> data(l.count * sizeof(T));
  read_exactly(f.in, path, l.data_offset, data.data(), data.size());
  for_each_element(l, [&](std::size_t k, std::size_t offset) {
    out.data()[offset] = static_cast<T>(decode(path, l.dtype, data.data() + k * sizeof(T), offset));
  });
  return out;
}

}  // namespace

template <class T>
xt::xarray<T> load_exact(const std::filesystem::path& path, const InfoCheck& check) {
  return read_exact<T>(path, check);
}
template xt::xarray<float> load_exact<float>(const std::filesystem::path&, const InfoCheck&);
template xt::xarray<double> load_exact<double>(const std::filesystem::path&, const InfoCheck&);

xt::xarray<double> load_double(const std::filesystem::path& path) { return to_xarray<double>(load(path)); }
xt::xarray<float> load_float(const std::filesystem::path& path) { return to_xarray<float>(load(path)); }
xt::xarray<bool> load_bool(const std::filesystem::path& path) { return to_xarray<bool>(load(path)); }

namespace {
// A float array's file: the header, then the elements little-endian: on a little-endian machine
// the array's buffer as it is (written from where it lies), else element by element.
template <class T>
void save_floats(const std::filesystem::path& path, const char* descr, const xt::xarray<T>& a, Write how) {
  const std::string header = header_bytes(descr, shape_of(a));
  if constexpr (std::endian::native == std::endian::little) {
    write_file(path, {header, std::string_view(reinterpret_cast<const char*>(a.data()), a.size() * sizeof(T))}, how);
  } else {
    std::string data;
    data.reserve(a.size() * sizeof(T));
    for (T v : a) append_little_endian(data, v);
    write_file(path, {header, data}, how);
  }
}
}  // namespace

void save(const std::filesystem::path& path, const xt::xarray<double>& a, Write how) { save_floats(path, "<f8", a, how); }
void save(const std::filesystem::path& path, const xt::xarray<float>& a, Write how) { save_floats(path, "<f4", a, how); }

namespace {
// A 16-bit array's file: each value's 16 bits (bits_of), little-endian.
template <class BitsOf>
void save_16_bits(const std::filesystem::path& path, const char* descr, const xt::xarray<double>& a, BitsOf bits_of, Write how) {
  std::string out = header_bytes(descr, shape_of(a));
  for (double v : a) {
    const std::uint16_t b = bits_of(v);
    out += static_cast<char>(b & 0xff);
    out += static_cast<char>(b >> 8);
  }
  write_file(path, {out}, how);
}
}  // namespace

void save_float16(const std::filesystem::path& path, const xt::xarray<double>& a, Write how) {
  save_16_bits(path, "<f2", a, double_to_half, how);
}
void save_bfloat16_bits(const std::filesystem::path& path, const xt::xarray<double>& a, Write how) {
  save_16_bits(path, "<u2", a, bfloat16_bits, how);
}


void save(const std::filesystem::path& path, const xt::xarray<bool>& a, Write how) {
  std::string out = header_bytes("|b1", shape_of(a));
  for (bool v : a) out += v ? '\1' : '\0';
  write_file(path, {out}, how);
}

}  // namespace vl::npy
