#include <boost/test/unit_test.hpp>

// .npy reading and writing (src/numeric/npy.hpp), checked against files written by NumPy 1.24
// (verify/fixtures/npy_fixtures.py -> verify/fixtures/npy/).
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xview.hpp>

#include "core/errors.hpp"
#include "numeric/npy.hpp"
#include "scratch_dir.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_numeric_npy).
BOOST_AUTO_TEST_SUITE(test_numeric_npy)

namespace fs = std::filesystem;
using vl::npy::Array;

namespace {

fs::path fixture(const std::string& name) { return fs::path(VL_SOURCE_DIR) / "verify/fixtures/npy" / name; }

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A fresh, empty directory for the files a test writes; removed at the end of the test.
struct TempDir : ScratchDir {
  TempDir() : ScratchDir("vl_test_npy_") {}
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(path), fs::directory_iterator())); }
};

// read(fixture(name)) throws vl::InputError whose message names the file and contains `what`.
template <class Read>
void check_error(const std::string& reader, Read read, const std::string& name, const std::string& what) {
  BOOST_TEST_CONTEXT(reader << ", fixture " << name) {
    try {
      read(fixture(name));
      BOOST_ERROR("no error for " << name);
    } catch (const vl::InputError& e) {
      const std::string msg = e.what();
      BOOST_TEST_MESSAGE(msg);
      BOOST_TEST(msg.find(name) != std::string::npos, "message names the file: " << msg);
      BOOST_TEST(msg.find(what) != std::string::npos, "message says '" << what << "': " << msg);
    }
  }
}

// A file load() refuses; read_info and load_exact refuse it the same way when the fault is in
// the prefix, the header or the data's size (`header_level`), as they share that parsing.
void check_load_error(const std::string& name, const std::string& what, bool header_level = true) {
  check_error("load", [](const fs::path& p) { vl::npy::load(p); }, name, what);
  if (!header_level) return;
  check_error("read_info", [](const fs::path& p) { vl::npy::read_info(p); }, name, what);
  check_error("load_exact<double>", [](const fs::path& p) { vl::npy::load_exact<double>(p); }, name, what);
}

const std::vector<double> kM23 = {-0.5, -0.25, 0.0, 0.25, 0.5, 0.75};  // the fixtures' 2x3 matrix

void check_m23(const Array& a, const std::string& dtype) {
  BOOST_TEST(a.dtype == dtype);
  BOOST_TEST(a.shape == (std::vector<std::size_t>{2, 3}), boost::test_tools::per_element());
  BOOST_TEST(a.values == kM23, boost::test_tools::per_element());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reading)

BOOST_AUTO_TEST_CASE(float_byte_orders_and_versions) {
  check_m23(vl::npy::load(fixture("f8_c.npy")), "float64");
  check_m23(vl::npy::load(fixture("f4_c.npy")), "float32");
  check_m23(vl::npy::load(fixture("f8_big.npy")), "float64");
  check_m23(vl::npy::load(fixture("f4_big.npy")), "float32");
  check_m23(vl::npy::load(fixture("v2.npy")), "float64");
  check_m23(vl::npy::load(fixture("v3.npy")), "float64");
}

BOOST_AUTO_TEST_CASE(fortran_order_becomes_c_order) {
  check_m23(vl::npy::load(fixture("f8_fortran.npy")), "float64");
  const Array a = vl::npy::load(fixture("i4_fortran_3d.npy"));  // np.arange(24).reshape(2, 3, 4)
  BOOST_TEST(a.dtype == "int32");
  BOOST_TEST(a.shape == (std::vector<std::size_t>{2, 3, 4}), boost::test_tools::per_element());
  for (std::size_t i = 0; i < 24; ++i) BOOST_TEST(a.values[i] == static_cast<double>(i));
}

BOOST_AUTO_TEST_CASE(float16) {
  const Array a = vl::npy::load(fixture("f2.npy"));
  BOOST_TEST(a.dtype == "float16");
  const double inf = std::numeric_limits<double>::infinity();
  // 65504 is the largest half, 2^-14 the smallest normal, 2^-24 the smallest subnormal.
  const std::vector<double> expected = {1.0, -2.5, 0.0, 65504.0, std::ldexp(1.0, -14), std::ldexp(1.0, -24), inf, -inf};
  BOOST_TEST(a.values == expected, boost::test_tools::per_element());
  BOOST_TEST(vl::npy::load(fixture("f2_big.npy")).values == (std::vector<double>{1.5, -0.375}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bool_and_integers) {
  const Array b = vl::npy::load(fixture("b1.npy"));
  BOOST_TEST(b.dtype == "bool");
  BOOST_TEST(b.values == (std::vector<double>{1, 0, 1, 0, 0, 1}), boost::test_tools::per_element());
  const xt::xarray<bool> xb = vl::npy::load_bool(fixture("b1.npy"));
  BOOST_TEST(xb.dimension() == 2u);
  BOOST_TEST(xb(0, 0));
  BOOST_TEST(!xb(1, 0));

  const double two53 = 9007199254740992.0;
  struct Case {
    const char* file;
    const char* dtype;
    std::vector<double> values;
  };
  const std::vector<Case> cases = {
      {"i1.npy", "int8", {-128, -1, 0, 127}},
      {"i2_big.npy", "int16", {-32768, 12345}},
      {"i8.npy", "int64", {-two53, -1, 0, two53}},
      {"u1.npy", "uint8", {0, 255}},
      {"u2.npy", "uint16", {0, 65535}},
      {"u4_big.npy", "uint32", {0, 4294967295.0}},
      {"u8.npy", "uint64", {0, two53}},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.file) {
      const Array a = vl::npy::load(fixture(c.file));
      BOOST_TEST(a.dtype == c.dtype);
      BOOST_TEST(a.values == c.values, boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(scalar_empty_and_nan) {
  const Array s = vl::npy::load(fixture("scalar.npy"));
  BOOST_TEST(s.shape.empty());
  BOOST_TEST(s.values == std::vector<double>{3.25}, boost::test_tools::per_element());
  const Array e = vl::npy::load(fixture("empty.npy"));
  BOOST_TEST(e.shape == (std::vector<std::size_t>{0, 3}), boost::test_tools::per_element());
  BOOST_TEST(e.values.empty());
  const Array n = vl::npy::load(fixture("nan.npy"));
  BOOST_TEST(std::isnan(n.values[0]));
  BOOST_TEST(n.values[1] == 1.0);
}

BOOST_AUTO_TEST_CASE(to_xarray_keeps_shape_and_order) {
  const xt::xarray<double> d = vl::npy::load_double(fixture("f8_fortran.npy"));
  BOOST_TEST(d.shape()[0] == 2u);
  BOOST_TEST(d.shape()[1] == 3u);
  BOOST_TEST(d(0, 2) == 0.0);
  BOOST_TEST(d(1, 0) == 0.25);
  const xt::xarray<float> f = vl::npy::load_float(fixture("f4_big.npy"));
  BOOST_TEST(f(1, 2) == 0.75f);
  const xt::xarray<int> i = vl::npy::to_xarray<int>(vl::npy::load(fixture("i4_fortran_3d.npy")));
  BOOST_TEST(i(1, 2, 3) == 23);
  BOOST_TEST(i(0, 1, 2) == 6);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(missing_file) { check_load_error("does_not_exist.npy", "no such file"); }
BOOST_AUTO_TEST_CASE(bad_magic) { check_load_error("bad_magic.npy", "bad magic"); }
BOOST_AUTO_TEST_CASE(empty_file) { check_load_error("empty_file.npy", "bad magic"); }
BOOST_AUTO_TEST_CASE(bad_version) { check_load_error("bad_version.npy", "version 7.0"); }
BOOST_AUTO_TEST_CASE(truncated_prefix) { check_load_error("truncated_prefix.npy", "truncated header"); }
BOOST_AUTO_TEST_CASE(truncated_header) { check_load_error("truncated_header.npy", "truncated header"); }
BOOST_AUTO_TEST_CASE(truncated_data) { check_load_error("truncated_data.npy", "truncated data"); }
BOOST_AUTO_TEST_CASE(count_mismatch) { check_load_error("count_mismatch.npy", "element count does not match"); }
BOOST_AUTO_TEST_CASE(unicode_dtype) { check_load_error("unicode.npy", "unsupported dtype '<U2' (strings"); }
BOOST_AUTO_TEST_CASE(object_dtype) { check_load_error("object.npy", "unsupported dtype '|O' (Python objects"); }
BOOST_AUTO_TEST_CASE(complex_dtype) { check_load_error("complex.npy", "complex"); }
BOOST_AUTO_TEST_CASE(structured_dtype) { check_load_error("structured.npy", "structured"); }
BOOST_AUTO_TEST_CASE(malformed_dict) {
  check_load_error("malformed_brace.npy", "malformed header");
  check_load_error("malformed_nokey.npy", "malformed header");
  check_load_error("malformed_shape.npy", "malformed header");
}
BOOST_AUTO_TEST_CASE(int64_beyond_2_53) {
  check_load_error("i8_too_big.npy", "beyond 2^53", false);  // an element's value, not the layout
  check_load_error("u8_too_big.npy", "beyond 2^53", false);
}
// 2^64 = 18446744073709551616 does not fit a size_t. Read digit by digit without the overflow
// check it would wrap around to 0, and the file would load as an empty array.
BOOST_AUTO_TEST_CASE(a_dimension_beyond_size_t_is_refused) {
  TempDir dir;
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551616,), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');  // magic, version, length: 10 bytes
  header += '\n';
  const fs::path p = dir.path / "dimension_2_64.npy";
  {
    std::ofstream out(p, std::ios::binary);
    out << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff) << char(header.size() >> 8) << header;
  }
  try {
    vl::npy::load(p);
    BOOST_ERROR("no error for a dimension of 2^64");
  } catch (const vl::InputError& e) {
    BOOST_TEST(std::string(e.what()).find("a dimension is too large") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("dimension_2_64.npy") != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(directory_is_not_a_file) {
  BOOST_CHECK_THROW(vl::npy::load(fs::path(VL_SOURCE_DIR) / "verify"), vl::InputError);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(writing)

BOOST_AUTO_TEST_CASE(bytes_identical_to_numpy) {
  TempDir dir;
  xt::xarray<double> m23 = xt::adapt(kM23, std::vector<std::size_t>{2, 3});
  vl::npy::save(dir.path / "f8.npy", m23);
  BOOST_TEST(bytes_of(dir.path / "f8.npy") == bytes_of(fixture("numpy_written_f8.npy")));

  xt::xarray<float> f = xt::arange<float>(24.0f);
  f.reshape({2, 3, 4});
  f *= 0.5f;
  vl::npy::save(dir.path / "f4.npy", f);
  BOOST_TEST(bytes_of(dir.path / "f4.npy") == bytes_of(fixture("numpy_written_f4_3d.npy")));

  xt::xarray<bool> b = {true, false, true};
  vl::npy::save(dir.path / "b1.npy", b);
  BOOST_TEST(bytes_of(dir.path / "b1.npy") == bytes_of(fixture("numpy_written_b1.npy")));

  xt::xarray<double> s = -1.5;  // 0-d
  vl::npy::save(dir.path / "s.npy", s);
  BOOST_TEST(bytes_of(dir.path / "s.npy") == bytes_of(fixture("numpy_written_scalar.npy")));
}

BOOST_AUTO_TEST_CASE(round_trips) {
  TempDir dir;
  xt::xarray<double> d = {{1.0 / 3.0, -2e-300, 1e300}, {0.0, -0.0, std::numeric_limits<double>::infinity()}};
  vl::npy::save(dir.path / "d.npy", d);
  const Array a = vl::npy::load(dir.path / "d.npy");
  BOOST_TEST(a.dtype == "float64");
  BOOST_TEST(vl::npy::load_double(dir.path / "d.npy") == d);

  xt::xarray<float> f = {{{0.1f, 2.0f}, {-3.5e-20f, 0.0f}}, {{7.0f, -1.0f}, {1e30f, 5.0f}}};  // (2, 2, 2)
  vl::npy::save(dir.path / "f.npy", f);
  BOOST_TEST(vl::npy::load(dir.path / "f.npy").dtype == "float32");
  BOOST_TEST(vl::npy::load_float(dir.path / "f.npy") == f);

  xt::xarray<bool> b = {{true, false}, {false, true}, {true, true}};
  vl::npy::save(dir.path / "b.npy", b);
  BOOST_TEST(vl::npy::load(dir.path / "b.npy").dtype == "bool");
  BOOST_TEST(vl::npy::load_bool(dir.path / "b.npy") == b);

  xt::xarray<double> empty = xt::zeros<double>({0, 4});
  vl::npy::save(dir.path / "e.npy", empty);
  BOOST_TEST(vl::npy::load(dir.path / "e.npy").shape == (std::vector<std::size_t>{0, 4}), boost::test_tools::per_element());

  // A non-contiguous view is written in logical C order.
  xt::xarray<double> t = xt::transpose(xt::xarray<double>{{1, 2, 3}, {4, 5, 6}});
  vl::npy::save(dir.path / "t.npy", t);
  BOOST_TEST(vl::npy::load(dir.path / "t.npy").values == (std::vector<double>{1, 4, 2, 5, 3, 6}),
             boost::test_tools::per_element());
  BOOST_TEST(dir.entries() == 5u);  // no temporary file left behind
}

BOOST_AUTO_TEST_CASE(overwrite_replaces_the_file) {
  TempDir dir;
  vl::npy::save(dir.path / "x.npy", xt::xarray<double>{1, 2, 3});
  vl::npy::save(dir.path / "x.npy", xt::xarray<double>{4.0, 5.0});
  BOOST_TEST(vl::npy::load(dir.path / "x.npy").values == (std::vector<double>{4, 5}), boost::test_tools::per_element());
  BOOST_TEST(dir.entries() == 1u);
}

BOOST_AUTO_TEST_CASE(failure_leaves_no_file) {
  TempDir dir;
  // Into a directory that does not exist: an error naming the path, nothing written.
  const fs::path missing = dir.path / "no_such_dir" / "x.npy";
  try {
    vl::npy::save(missing, xt::xarray<double>{1.0});
    BOOST_ERROR("no error writing into a missing directory");
  } catch (const vl::InputError& e) {
    BOOST_TEST(std::string(e.what()).find(missing.string()) != std::string::npos, e.what());
  }
  BOOST_TEST(!fs::exists(missing));

  // Over a (non-empty) directory: the rename fails; the directory stays, no temporary remains.
  fs::create_directories(dir.path / "taken.npy" / "inside");
  try {
    vl::npy::save(dir.path / "taken.npy", xt::xarray<float>{1.0f});
    BOOST_ERROR("no error writing over a directory");
  } catch (const vl::InputError& e) {
    BOOST_TEST(std::string(e.what()).find("taken.npy") != std::string::npos, e.what());
  }
  BOOST_TEST(fs::is_directory(dir.path / "taken.npy" / "inside"));
  BOOST_TEST(dir.entries() == 1u);
}

// Write::new_file: the same bytes as the atomic write, no temporary; never into an existing file.
BOOST_AUTO_TEST_CASE(new_file_writes_in_place_and_never_over_a_file) {
  TempDir dir;
  xt::xarray<double> m23 = xt::adapt(kM23, std::vector<std::size_t>{2, 3});
  vl::npy::save(dir.path / "f8.npy", m23, vl::npy::Write::new_file);
  BOOST_TEST(bytes_of(dir.path / "f8.npy") == bytes_of(fixture("numpy_written_f8.npy")));
  xt::xarray<bool> b = {true, false, true};
  vl::npy::save(dir.path / "b1.npy", b, vl::npy::Write::new_file);
  BOOST_TEST(bytes_of(dir.path / "b1.npy") == bytes_of(fixture("numpy_written_b1.npy")));
  vl::npy::save_float16(dir.path / "h.npy", xt::xarray<double>{0.5, -2.0}, vl::npy::Write::new_file);
  BOOST_TEST(vl::npy::load(dir.path / "h.npy").values == (std::vector<double>{0.5, -2.0}), boost::test_tools::per_element());
  BOOST_TEST(dir.entries() == 3u);

  const std::string before = bytes_of(dir.path / "f8.npy");
  try {
    vl::npy::save(dir.path / "f8.npy", xt::xarray<float>{1.0f}, vl::npy::Write::new_file);
    BOOST_ERROR("no error writing a new file over an existing one");
  } catch (const vl::InputError& e) {
    BOOST_TEST(std::string(e.what()).find("f8.npy") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("cannot create it") != std::string::npos, e.what());
  }
  BOOST_TEST(bytes_of(dir.path / "f8.npy") == before);  // untouched
  BOOST_TEST(dir.entries() == 3u);
}

// A write that fails part way (here: past a file-size limit, EFBIG) leaves no partial file.
BOOST_AUTO_TEST_CASE(new_file_failing_part_way_is_removed) {
  TempDir dir;
  rlimit old{};
  BOOST_REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // the write fails instead of the process
  rlimit small = old;
  small.rlim_cur = 4096;
  BOOST_REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  std::string what;
  try {
    vl::npy::save(dir.path / "big.npy", xt::xarray<double>(xt::zeros<double>({4096})), vl::npy::Write::new_file);  // 32 KiB
  } catch (const vl::InputError& e) {
    what = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  BOOST_TEST(what.find("big.npy") != std::string::npos, what);
  BOOST_TEST(what.find("partial file was removed") != std::string::npos, what);
  BOOST_TEST(dir.entries() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

// read_info and load_exact: the header alone, and float files straight into their own type.
BOOST_AUTO_TEST_SUITE(typed_reading)

BOOST_AUTO_TEST_CASE(read_info_reads_the_header) {
  const vl::npy::Info f = vl::npy::read_info(fixture("f8_fortran.npy"));
  BOOST_TEST(f.dtype == "float64");
  BOOST_TEST(f.shape == (std::vector<std::size_t>{2, 3}), boost::test_tools::per_element());
  const vl::npy::Info i = vl::npy::read_info(fixture("i4_fortran_3d.npy"));
  BOOST_TEST(i.dtype == "int32");
  BOOST_TEST(i.shape.size() == 3u);
  BOOST_TEST(vl::npy::read_info(fixture("scalar.npy")).shape.empty());
  BOOST_TEST(vl::npy::read_info(fixture("v3.npy")).dtype == "float64");
}

// Every float file: load_exact<T> gives exactly load()'s values (exact in double) in T.
template <class T>
void check_exact(const std::string& name) {
  BOOST_TEST_CONTEXT("fixture " << name) {
    const Array a = vl::npy::load(fixture(name));
    const xt::xarray<T> x = vl::npy::load_exact<T>(fixture(name));
    BOOST_TEST(std::vector<std::size_t>(x.shape().begin(), x.shape().end()) == a.shape, boost::test_tools::per_element());
    BOOST_REQUIRE(x.size() == a.values.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double v = a.values[i];
      BOOST_TEST((std::isnan(v) ? std::isnan(x.flat(i)) : double(x.flat(i)) == v), "element " << i);
    }
  }
}

BOOST_AUTO_TEST_CASE(load_exact_matches_load_in_every_layout) {
  for (const char* name : {"f4_c.npy", "f4_big.npy", "numpy_written_f4_3d.npy"}) check_exact<float>(name);
  for (const char* name : {"f8_c.npy", "f8_big.npy", "f8_fortran.npy", "v2.npy", "v3.npy", "scalar.npy", "empty.npy", "nan.npy",
                           "numpy_written_f8.npy", "numpy_written_scalar.npy"})
    check_exact<double>(name);
  const xt::xarray<double> d = vl::npy::load_exact<double>(fixture("f8_fortran.npy"));  // C order in memory
  BOOST_TEST(d(0, 2) == 0.0);
  BOOST_TEST(d(1, 0) == 0.25);
}

BOOST_AUTO_TEST_CASE(load_exact_refuses_another_dtype) {
  check_error("load_exact<double>", [](const fs::path& p) { vl::npy::load_exact<double>(p); }, "f4_c.npy", "dtype float32, float64 expected");
  check_error("load_exact<float>", [](const fs::path& p) { vl::npy::load_exact<float>(p); }, "f8_c.npy", "dtype float64, float32 expected");
  check_error("load_exact<float>", [](const fs::path& p) { vl::npy::load_exact<float>(p); }, "i1.npy", "dtype int8, float32 expected");
}

// The caller's check sees the header's dtype and shape before the data is read; what it throws
// reaches the caller as it was thrown.
BOOST_AUTO_TEST_CASE(the_check_sees_the_header_first) {
  struct Refused {
    std::string dtype;
  };
  std::vector<std::string> seen;
  const vl::npy::InfoCheck record = [&](const vl::npy::Info& i) { seen.push_back(i.dtype + " rank " + std::to_string(i.shape.size())); };
  const xt::xarray<double> d = vl::npy::load_exact<double>(fixture("f8_fortran.npy"), record);
  BOOST_TEST(d(1, 0) == 0.25);
  BOOST_TEST(vl::npy::load(fixture("i4_fortran_3d.npy"), record).values.size() == vl::npy::load(fixture("i4_fortran_3d.npy")).values.size());
  BOOST_TEST(seen == (std::vector<std::string>{"float64 rank 2", "int32 rank 3"}), boost::test_tools::per_element());
  const vl::npy::InfoCheck refuse = [](const vl::npy::Info& i) { throw Refused{i.dtype}; };
  try {
    vl::npy::load_exact<float>(fixture("f8_c.npy"), refuse);  // refused before load_exact's own dtype error
    BOOST_ERROR("the check's exception did not reach the caller");
  } catch (const Refused& r) {
    BOOST_TEST(r.dtype == "float64");
  }
  BOOST_CHECK_THROW(vl::npy::load(fixture("f4_c.npy"), refuse), Refused);
  // A file that is not a .npy fails before the check runs.
  check_error("load with a check", [&](const fs::path& p) { vl::npy::load(p, refuse); }, "bad_magic.npy", "bad magic");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // test_numeric_npy
