// TensorProto decoding; see tensor_proto.hpp.
#include "onnx/tensor_proto.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "numeric/float16.hpp"
#include "onnx/protobuf_reader.hpp"

namespace vl::onnx {
namespace {

constexpr double kTwo53 = 9007199254740992.0;

std::size_t item_size(DataType t) {
  switch (t) {
    case DataType::boolean: case DataType::int8: case DataType::uint8: return 1;
    case DataType::int16: case DataType::uint16: case DataType::float16: return 2;
    case DataType::int32: case DataType::uint32: case DataType::float32: return 4;
    default: return 8;
  }
}

// One little-endian element of raw_data as a double.
double decode_raw(const std::uint8_t* p, DataType t) {
  std::uint64_t bits = 0;
  const std::size_t n = item_size(t);
  for (std::size_t i = n; i-- > 0;) bits = (bits << 8) | p[i];
  switch (t) {
    case DataType::float32: return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    case DataType::float64: return std::bit_cast<double>(bits);
    case DataType::float16: return half_to_double(static_cast<std::uint16_t>(bits));
    case DataType::boolean: return bits != 0 ? 1.0 : 0.0;
    case DataType::int8: return static_cast<std::int8_t>(bits);
    case DataType::int16: return static_cast<std::int16_t>(bits);
    case DataType::int32: return static_cast<std::int32_t>(bits);
    case DataType::int64: return static_cast<double>(static_cast<std::int64_t>(bits));
    default: return static_cast<double>(bits);  // unsigned
  }
}

bool is_supported(int t) {
  return t == 1 || t == 2 || t == 3 || t == 4 || t == 5 || t == 6 || t == 7 || t == 9 || t == 10 ||
         t == 11 || t == 12 || t == 13;
}

}  // namespace

std::string data_type_name(int t) {
  switch (t) {
    case 1: return "float"; case 2: return "uint8"; case 3: return "int8"; case 4: return "uint16";
    case 5: return "int16"; case 6: return "int32"; case 7: return "int64"; case 8: return "string";
    case 9: return "bool"; case 10: return "float16"; case 11: return "double"; case 12: return "uint32";
    case 13: return "uint64"; case 14: return "complex64"; case 15: return "complex128"; case 16: return "bfloat16";
    default: return fmt::format("type {}", t);
  }
}

std::string Tensor::type_name() const { return data_type_name(static_cast<int>(data_type)); }

Tensor parse_tensor(std::span<const std::uint8_t> bytes, const std::string& source) {
  ProtobufReader r(bytes, source);
  Tensor t;
  int data_type = 0;
  std::vector<std::int64_t> dims, int_data, int64_data;
  std::vector<float> float_data;
  std::vector<double> double_data;
  std::vector<std::int64_t> uint64_data;  // varints, reinterpreted below
  std::span<const std::uint8_t> raw;
  bool has_raw = false;
  while (!r.at_end()) {
    const auto f = r.next_field();
    switch (f.number) {
      case 1: r.repeated_varint(f, dims); break;
      case 2: r.expect(f, WireType::varint); data_type = static_cast<int>(r.int64()); break;
      case 4: r.repeated_float(f, float_data); break;
      case 5: r.repeated_varint(f, int_data); break;
      case 7: r.repeated_varint(f, int64_data); break;
      case 8: r.expect(f, WireType::length_delimited); t.name = r.string(); break;
      case 9: r.expect(f, WireType::length_delimited); raw = r.length_delimited(); has_raw = true; break;
      case 10: r.repeated_double(f, double_data); break;
      case 11: r.repeated_varint(f, uint64_data); break;
      case 14:
        r.expect(f, WireType::varint);
        if (r.varint() == 1) throw InputError(fmt::format("{}: tensor data stored externally is not supported", source));
        break;
      default: r.skip(f.type);
    }
  }
  if (!is_supported(data_type)) {
    throw InputError(fmt::format("{}: unsupported tensor data type {} ({})", source, data_type, data_type_name(data_type)));
  }
  t.data_type = static_cast<DataType>(data_type);
  std::size_t count = 1, nonzero = 1;  // nonzero: the product of the non-zero dims, bounded
  for (std::int64_t d : dims) {         // even when a zero dim makes count 0 (xtensor's strides)
    if (d < 0) throw InputError(fmt::format("{}: negative dimension {}", source, d));
    const auto n = static_cast<std::size_t>(d);
    if (n != 0 && nonzero > std::numeric_limits<std::uint32_t>::max() / n) {
      throw InputError(fmt::format("{}: dims too large", source));
    }
    t.dims.push_back(n);
    count *= n;
    if (n != 0) nonzero *= n;
  }
  auto check_count = [&](std::size_t n, const char* field) {
    if (n != count) {
      throw InputError(fmt::format("{}: {} holds {} elements but dims {} need {}", source, field, n,
                                   fmt::format("[{}]", fmt::join(t.dims, ", ")), count));
    }
  };

  if (has_raw) {
    const std::size_t size = item_size(t.data_type);
    if (raw.size() != count * size) {
      throw InputError(fmt::format("{}: raw_data has {} bytes but dims [{}] of {} need {}", source, raw.size(),
                                   fmt::join(t.dims, ", "), t.type_name(), count * size));
    }
    t.values.resize(count);
    for (std::size_t i = 0; i < count; ++i) t.values[i] = decode_raw(raw.data() + i * size, t.data_type);
  } else {
    switch (t.data_type) {
      case DataType::float32: check_count(float_data.size(), "float_data"); t.values.assign(float_data.begin(), float_data.end()); break;
      case DataType::float64: check_count(double_data.size(), "double_data"); t.values = double_data; break;
      case DataType::int64: check_count(int64_data.size(), "int64_data");
        for (auto v : int64_data) t.values.push_back(static_cast<double>(v));
        break;
      case DataType::uint32: case DataType::uint64: check_count(uint64_data.size(), "uint64_data");
        for (auto v : uint64_data) t.values.push_back(static_cast<double>(static_cast<std::uint64_t>(v)));
        break;
      case DataType::float16: check_count(int_data.size(), "int32_data");
        for (auto v : int_data) t.values.push_back(half_to_double(static_cast<std::uint16_t>(v)));
        break;
      default: check_count(int_data.size(), "int32_data");  // bool, (u)int8/16, int32
        for (auto v : int_data) {
          t.values.push_back(t.data_type == DataType::boolean ? (v != 0) : static_cast<double>(static_cast<std::int32_t>(v)));
        }
    }
  }
  if (t.data_type == DataType::int64 || t.data_type == DataType::uint64) {
    for (std::size_t i = 0; i < t.values.size(); ++i) {
      if (std::abs(t.values[i]) > kTwo53) {
        throw InputError(fmt::format("{}: {} element {} is beyond 2^53 and would be rounded in a double", source,
                                     t.type_name(), i));
      }
    }
  }
  return t;
}

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw InputError(fmt::format("{}: {}", path.string(), std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open for reading", path.string()));
  return std::vector<std::uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Tensor load_tensor(const std::filesystem::path& path) { return parse_tensor(read_bytes(path), path.string()); }

}  // namespace vl::onnx
