#pragma once
// The parts of an ONNX ModelProto (onnx/onnx.proto) that a backend node test needs:
//   ModelProto:     1 ir_version, 7 graph, 8 opset_import (OpsetIdProto: 1 domain, 2 version)
//   GraphProto:     1 node, 2 name, 5 initializer, 11 input, 12 output (ValueInfoProto: 1 name)
//   NodeProto:      1 input, 2 output, 3 name, 4 op_type, 5 attribute, 7 domain
//   AttributeProto: 1 name, 2 f, 3 i, 4 s, 7 floats, 8 ints, 20 type
// An empty input or output name in a node marks an absent optional argument.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace vl::onnx {

struct Attribute {
  enum Type : int { undefined = 0, FLOAT = 1, INT = 2, STRING = 3, TENSOR = 4, GRAPH = 5, FLOATS = 6, INTS = 7, STRINGS = 8 };
  std::string name;
  int type = undefined;
  float f = 0;
  std::int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<std::int64_t> ints;
};

struct Node {
  std::string op_type, name, domain;
  std::vector<std::string> inputs, outputs;  ///< by position; "" = absent optional
  std::vector<Attribute> attributes;

  const Attribute* attribute(const std::string& name) const;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<std::string> inputs, outputs;  ///< graph input/output names, in order
  std::vector<std::string> initializers;     ///< names of constant inputs stored in the model
};

struct Model {
  std::int64_t ir_version = 0;
  std::vector<std::pair<std::string, std::int64_t>> opsets;  ///< (domain, version); "" = ai.onnx
  Graph graph;

  /// The version of the default (ai.onnx) opset, if imported.
  std::optional<std::int64_t> onnx_opset() const;
};

/// Reads a serialized ModelProto; `source` names it in errors (InputError on corrupt bytes).
Model parse_model(std::span<const std::uint8_t> bytes, const std::string& source);
Model load_model(const std::filesystem::path& path);

}  // namespace vl::onnx
