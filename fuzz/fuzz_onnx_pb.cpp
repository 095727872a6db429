// libFuzzer target: the ONNX protobuf readers (src/onnx) on arbitrary bytes, in memory:
// vl::onnx::parse_tensor (TensorProto, input_N.pb / output_N.pb) and vl::onnx::parse_model
// (ModelProto, model.onnx). Corrupt bytes must be refused with vl::InputError; anything else
// (another exception, a crash, a sanitizer report, a hang, a huge allocation) is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/errors.hpp"
#include "onnx/model.hpp"
#include "onnx/tensor_proto.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  try {
    const vl::onnx::Tensor t = vl::onnx::parse_tensor(bytes, "fuzz.pb");
    std::size_t n = 1;
    for (std::size_t d : t.dims) n *= d;
    if (n != t.values.size()) __builtin_trap();
    if (n <= (std::size_t{1} << 16)) (void)vl::onnx::to_xarray<double>(t);
  } catch (const vl::InputError&) {
  }
  try {
    const vl::onnx::Model m = vl::onnx::parse_model(bytes, "fuzz.onnx");
    (void)m.onnx_opset();
    for (const auto& node : m.graph.nodes) (void)node.attribute("scale");
  } catch (const vl::InputError&) {
  }
  return 0;
}
