// ModelProto decoding; see model.hpp for the fields read.
#include "onnx/model.hpp"

#include "onnx/protobuf_reader.hpp"
#include "onnx/tensor_proto.hpp"

namespace vl::onnx {
namespace {

std::string read_string(ProtobufReader& r, const ProtobufReader::Field& f) {
  r.expect(f, WireType::length_delimited);
  return r.string();
}

Attribute parse_attribute(ProtobufReader r) {
  Attribute a;
  while (!r.at_end()) {
    const auto f = r.next_field();
    switch (f.number) {
      case 1: a.name = read_string(r, f); break;
      case 2: r.expect(f, WireType::fixed32); a.f = r.float32(); break;
      case 3: r.expect(f, WireType::varint); a.i = r.int64(); break;
      case 4: a.s = read_string(r, f); break;
      case 7: r.repeated_float(f, a.floats); break;
      case 8: r.repeated_varint(f, a.ints); break;
      case 20: r.expect(f, WireType::varint); a.type = static_cast<int>(r.int64()); break;
      default: r.skip(f.type);
    }
  }
  return a;
}

Node parse_node(ProtobufReader r) {
  Node n;
  while (!r.at_end()) {
    const auto f = r.next_field();
    switch (f.number) {
      case 1: n.inputs.push_back(read_string(r, f)); break;
      case 2: n.outputs.push_back(read_string(r, f)); break;
      case 3: n.name = read_string(r, f); break;
      case 4: n.op_type = read_string(r, f); break;
      case 5: r.expect(f, WireType::length_delimited); n.attributes.push_back(parse_attribute(r.message())); break;
      case 7: n.domain = read_string(r, f); break;
      default: r.skip(f.type);
    }
  }
  return n;
}

// ValueInfoProto → its name (field 1); the type is read from the tensors themselves.
std::string parse_value_info_name(ProtobufReader r) {
  std::string name;
  while (!r.at_end()) {
    const auto f = r.next_field();
    if (f.number == 1) {
      name = read_string(r, f);
    } else {
      r.skip(f.type);
    }
  }
  return name;
}

Graph parse_graph(ProtobufReader r) {
  Graph g;
  while (!r.at_end()) {
    const auto f = r.next_field();
    switch (f.number) {
      case 1: r.expect(f, WireType::length_delimited); g.nodes.push_back(parse_node(r.message())); break;
      case 2: g.name = read_string(r, f); break;
      case 5: {
        r.expect(f, WireType::length_delimited);
        const auto bytes = r.length_delimited();
        g.initializers.push_back(parse_tensor(bytes, r.source() + " (initializer)").name);
        break;
      }
      case 11: r.expect(f, WireType::length_delimited); g.inputs.push_back(parse_value_info_name(r.message())); break;
      case 12: r.expect(f, WireType::length_delimited); g.outputs.push_back(parse_value_info_name(r.message())); break;
      default: r.skip(f.type);
    }
  }
  return g;
}

}  // namespace

const Attribute* Node::attribute(const std::string& attr_name) const {
  for (const Attribute& a : attributes) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

std::optional<std::int64_t> Model::onnx_opset() const {
  for (const auto& [domain, version] : opsets) {
    if (domain.empty() || domain == "ai.onnx") return version;
  }
  return std::nullopt;
}

Model parse_model(std::span<const std::uint8_t> bytes, const std::string& source) {
  ProtobufReader r(bytes, source);
  Model m;
  bool has_graph = false;
  while (!r.at_end()) {
    const auto f = r.next_field();
    switch (f.number) {
      case 1: r.expect(f, WireType::varint); m.ir_version = r.int64(); break;
      case 7: r.expect(f, WireType::length_delimited); m.graph = parse_graph(r.message()); has_graph = true; break;
      case 8: {
        r.expect(f, WireType::length_delimited);
        ProtobufReader op = r.message();
        std::string domain;
        std::int64_t version = 0;
        while (!op.at_end()) {
          const auto g = op.next_field();
          if (g.number == 1) {
            domain = read_string(op, g);
          } else if (g.number == 2) {
            op.expect(g, WireType::varint);
            version = op.int64();
          } else {
            op.skip(g.type);
          }
        }
        m.opsets.emplace_back(domain, version);
        break;
      }
      default: r.skip(f.type);
    }
  }
  if (!has_graph) r.fail("the model has no graph (field 7)");
  return m;
}

Model load_model(const std::filesystem::path& path) { return parse_model(read_bytes(path), path.string()); }

}  // namespace vl::onnx
