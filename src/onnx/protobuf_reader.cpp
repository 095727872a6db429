// The protobuf wire format; see protobuf_reader.hpp.
#include "onnx/protobuf_reader.hpp"

#include <bit>
#include <cstring>

#include <fmt/core.h>

#include "core/errors.hpp"

namespace vl::onnx {

ProtobufReader::ProtobufReader(std::span<const std::uint8_t> bytes, std::string source, std::size_t base_offset)
    : bytes_(bytes), source_(std::move(source)), base_(base_offset) {}

void ProtobufReader::fail(const std::string& what) const {
  throw InputError(fmt::format("{}: corrupt protobuf at byte {}: {}", source_, base_ + pos_, what));
}

std::span<const std::uint8_t> ProtobufReader::take(std::size_t n, const char* what) {
  if (n > bytes_.size() - pos_) {
    fail(fmt::format("truncated {} (needs {} bytes, {} left)", what, n, bytes_.size() - pos_));
  }
  auto s = bytes_.subspan(pos_, n);
  pos_ += n;
  return s;
}

std::uint64_t ProtobufReader::varint() {
  // LEB128: 7 bits a byte, least significant first; the high bit says "more follows".
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= bytes_.size()) fail("truncated varint");
    const std::uint8_t b = bytes_[pos_++];
    v |= std::uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) return v;
  }
  fail("varint longer than 10 bytes");
}

std::uint32_t ProtobufReader::fixed32() {
  const auto s = take(4, "fixed32");
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | s[i];
  return v;
}

std::uint64_t ProtobufReader::fixed64() {
  const auto s = take(8, "fixed64");
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | s[i];
  return v;
}

float ProtobufReader::float32() { return std::bit_cast<float>(fixed32()); }
double ProtobufReader::float64() { return std::bit_cast<double>(fixed64()); }

std::span<const std::uint8_t> ProtobufReader::length_delimited() {
  const std::uint64_t n = varint();
  if (n > bytes_.size() - pos_) {
    fail(fmt::format("truncated length-delimited field (length {}, {} bytes left)", n, bytes_.size() - pos_));
  }
  return take(static_cast<std::size_t>(n), "length-delimited field");
}

std::string ProtobufReader::string() {
  const auto s = length_delimited();
  return std::string(s.begin(), s.end());
}

ProtobufReader ProtobufReader::message() {
  const auto s = length_delimited();
  const std::size_t start = base_ + pos_ - s.size();
  return ProtobufReader(s, source_, start);
}

ProtobufReader::Field ProtobufReader::next_field() {
  const std::uint64_t tag = varint();
  const std::uint64_t number = tag >> 3;
  const auto type = static_cast<std::uint8_t>(tag & 7);
  if (number == 0 || number > 0x1fffffff) fail(fmt::format("invalid field number {}", number));
  if (type != 0 && type != 1 && type != 2 && type != 5) {
    fail(fmt::format("unsupported wire type {} (field {})", type, number));
  }
  return Field{static_cast<std::uint32_t>(number), static_cast<WireType>(type)};
}

void ProtobufReader::skip(WireType type) {
  switch (type) {
    case WireType::varint: varint(); break;
    case WireType::fixed64: take(8, "fixed64"); break;
    case WireType::length_delimited: length_delimited(); break;
    case WireType::fixed32: take(4, "fixed32"); break;
  }
}

void ProtobufReader::expect(const Field& f, WireType type) {
  if (f.type != type) {
    fail(fmt::format("field {} has wire type {}, expected {}", f.number, static_cast<int>(f.type),
                     static_cast<int>(type)));
  }
}

void ProtobufReader::repeated_varint(const Field& f, std::vector<std::int64_t>& out) {
  if (f.type == WireType::length_delimited) {
    ProtobufReader packed = message();
    while (!packed.at_end()) out.push_back(packed.int64());
  } else {
    expect(f, WireType::varint);
    out.push_back(int64());
  }
}

void ProtobufReader::repeated_float(const Field& f, std::vector<float>& out) {
  if (f.type == WireType::length_delimited) {
    ProtobufReader packed = message();
    if (packed.bytes_.size() % 4 != 0) fail(fmt::format("packed floats (field {}) not a multiple of 4 bytes", f.number));
    while (!packed.at_end()) out.push_back(packed.float32());
  } else {
    expect(f, WireType::fixed32);
    out.push_back(float32());
  }
}

void ProtobufReader::repeated_double(const Field& f, std::vector<double>& out) {
  if (f.type == WireType::length_delimited) {
    ProtobufReader packed = message();
    if (packed.bytes_.size() % 8 != 0) fail(fmt::format("packed doubles (field {}) not a multiple of 8 bytes", f.number));
    while (!packed.at_end()) out.push_back(packed.float64());
  } else {
    expect(f, WireType::fixed64);
    out.push_back(float64());
  }
}

}  // namespace vl::onnx
