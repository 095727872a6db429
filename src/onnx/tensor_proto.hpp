#pragma once
// ONNX's TensorProto (onnx/onnx.proto): a named, typed, shaped array.
//
//   1 dims (repeated int64)   2 data_type (int32: 1 float, 11 double, 9 bool, 7 int64, 6 int32,
//   10 float16, ...)   8 name   9 raw_data (bytes, little-endian, C order)
//   4 float_data  5 int32_data (also bool, float16 bits, (u)int8/16)  7 int64_data  10 double_data
//   11 uint64_data (also uint32)    14 data_location (1 = external: not supported)
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>

namespace vl::onnx {

/// TensorProto.DataType values we read.
enum class DataType : int {
  float32 = 1, uint8 = 2, int8 = 3, uint16 = 4, int16 = 5, int32 = 6, int64 = 7,
  boolean = 9, float16 = 10, float64 = 11, uint32 = 12, uint64 = 13,
};

/// A TensorProto's name and type, its shape, and its elements in C order converted to
/// double (exact for every type we accept; int64 beyond 2^53 is an error).
struct Tensor {
  std::string name;
  DataType data_type = DataType::float32;
  std::vector<std::size_t> dims;
  std::vector<double> values;

  std::string type_name() const;
};

/// Reads a serialized TensorProto; `source` names it in errors. Throws vl::InputError on
/// corrupt bytes, an unsupported data type or external data, or a data size that does not
/// match the dims.
Tensor parse_tensor(std::span<const std::uint8_t> bytes, const std::string& source);

/// Reads a TensorProto file (input_N.pb / output_N.pb).
Tensor load_tensor(const std::filesystem::path& path);

/// The whole contents of a file; InputError if missing or unreadable.
std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path);

/// The name of a TensorProto.DataType value ("float", "double", ...; "type 8" if unknown).
std::string data_type_name(int data_type);

/// The elements as an `xt::xarray<T>` of the tensor's shape.
template <class T>
xt::xarray<T> to_xarray(const Tensor& t) {
  std::vector<T> data(t.values.begin(), t.values.end());
  if constexpr (std::is_same_v<T, bool>) {
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = t.values[i] != 0.0;
  }
  return xt::adapt(data, t.dims);
}

}  // namespace vl::onnx
