#pragma once
// A small reader of the protobuf wire format, enough for ONNX's ModelProto and TensorProto.
//
// A message is a sequence of fields; each starts with a varint tag = (field number << 3) | wire
// type, followed by its value: 0 varint (LEB128, 7 bits a byte, low first), 1 fixed64 (8 bytes
// LE), 2 length-delimited (varint length, then the bytes: strings, sub-messages, packed
// repeated scalars), 5 fixed32 (4 bytes LE). Groups (3, 4) are obsolete and rejected.
// Every read is bounds-checked: truncated or corrupt input throws vl::InputError naming the
// source and the byte offset.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace vl::onnx {

enum class WireType : std::uint8_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

class ProtobufReader {
 public:
  struct Field {
    std::uint32_t number;
    WireType type;
  };

  /// Reads `bytes`; `source` (a file name, "TensorProto in model.onnx"...) starts every error.
  ProtobufReader(std::span<const std::uint8_t> bytes, std::string source, std::size_t base_offset = 0);

  bool at_end() const { return pos_ == bytes_.size(); }
  /// The next field's tag.
  Field next_field();
  /// Values, by wire type.
  std::uint64_t varint();
  std::uint32_t fixed32();
  std::uint64_t fixed64();
  std::span<const std::uint8_t> length_delimited();
  /// Typed views of those.
  std::int64_t int64() { return static_cast<std::int64_t>(varint()); }
  float float32();
  double float64();
  std::string string();
  /// A length-delimited sub-message, read by its own reader (errors give absolute offsets).
  ProtobufReader message();
  /// Skips the value of a field of this type (fields we do not need).
  void skip(WireType type);

  /// Repeated scalars, packed (one length-delimited run) or not (one value per field):
  /// call with the field just read by next_field().
  void repeated_varint(const Field& f, std::vector<std::int64_t>& out);
  void repeated_float(const Field& f, std::vector<float>& out);
  void repeated_double(const Field& f, std::vector<double>& out);
  /// The field's value must have this wire type.
  void expect(const Field& f, WireType type);

  [[noreturn]] void fail(const std::string& what) const;
  const std::string& source() const { return source_; }

 private:
  std::span<const std::uint8_t> take(std::size_t n, const char* what);

  std::span<const std::uint8_t> bytes_;
  std::string source_;
  std::size_t base_;  // offset of bytes_[0] in the original buffer, for messages
  std::size_t pos_ = 0;
};

}  // namespace vl::onnx
