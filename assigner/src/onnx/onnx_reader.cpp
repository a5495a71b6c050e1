#include "onnx_reader.hpp"

#include "troupe/actors/error.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <fcntl.h>
#include <limits>
#include <unistd.h>

namespace troupe::detail {

namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;
using wire = google::protobuf::internal::WireFormatLite;

// Field numbers of onnx.proto that the walk below needs.
constexpr int model_graph = 7;
constexpr int graph_initializer = 5;
constexpr int tensor_float_data = 4, tensor_int32_data = 5, tensor_string_data = 6,
              tensor_int64_data = 7, tensor_raw_data = 9, tensor_double_data = 10,
              tensor_uint64_data = 11;

[[noreturn]] void malformed(const char* where) {
  throw invalid_argument(std::string{"model_from_onnx: not an ONNX model (malformed "} + where +
                         ")");
}

/// Copies the field whose tag was just read.
void copy_field(CodedInputStream& in, std::uint32_t tag, std::string& out) {
  StringOutputStream sink{&out};
  CodedOutputStream os{&sink};
  switch (wire::GetTagWireType(tag)) {
  case wire::WIRETYPE_VARINT: {
    std::uint64_t v = 0;
    if (!in.ReadVarint64(&v))
      malformed("varint");
    os.WriteTag(tag);
    os.WriteVarint64(v);
    return;
  }
  case wire::WIRETYPE_FIXED64: {
    std::uint64_t v = 0;
    if (!in.ReadLittleEndian64(&v))
      malformed("fixed64");
    os.WriteTag(tag);
    os.WriteLittleEndian64(v);
    return;
  }
  case wire::WIRETYPE_FIXED32: {
    std::uint32_t v = 0;
    if (!in.ReadLittleEndian32(&v))
      malformed("fixed32");
    os.WriteTag(tag);
    os.WriteLittleEndian32(v);
    return;
  }
  case wire::WIRETYPE_LENGTH_DELIMITED: {
    std::uint32_t length = 0;
    if (!in.ReadVarint32(&length))
      malformed("length");
    std::string bytes;
    if (!in.ReadString(&bytes, static_cast<int>(length)))
      malformed("field");
    os.WriteTag(tag);
    os.WriteVarint32(length);
    os.WriteString(bytes);
    return;
  }
  default: malformed("wire type");
  }
}

/// Writes `bytes` as length-delimited field `field`.
void write_message(int field, const std::string& bytes, std::string& out) {
  StringOutputStream sink{&out};
  CodedOutputStream os{&sink};
  os.WriteTag(wire::MakeTag(field, wire::WIRETYPE_LENGTH_DELIMITED));
  os.WriteVarint32(static_cast<std::uint32_t>(bytes.size()));
  os.WriteString(bytes);
}

bool is_data_field(int field) {
  switch (field) {
  case tensor_float_data:
  case tensor_int32_data:
  case tensor_string_data:
  case tensor_int64_data:
  case tensor_raw_data:
  case tensor_double_data:
  case tensor_uint64_data: return true;
  default: return false;
  }
}

/// An initializer (TensorProto) of `length` bytes, its data left out when it is large.
std::string tensor_skeleton(CodedInputStream& in, std::uint32_t length) {
  const auto limit = in.PushLimit(static_cast<int>(length));
  std::string out;
  while (const auto tag = in.ReadTag()) {
    const int field = static_cast<int>(wire::GetTagFieldNumber(tag));
    if (is_data_field(field) && wire::GetTagWireType(tag) == wire::WIRETYPE_LENGTH_DELIMITED) {
      // Raw bytes or a packed array: skipped unseen when larger than the kept size.
      std::uint32_t bytes = 0;
      if (!in.ReadVarint32(&bytes))
        malformed("tensor");
      if (bytes > kept_initializer_bytes) {
        if (!in.Skip(static_cast<int>(bytes)))
          malformed("tensor data");
        continue;
      }
      std::string kept;
      if (!in.ReadString(&kept, static_cast<int>(bytes)))
        malformed("tensor data");
      write_message(field, kept, out);
      continue;
    }
    copy_field(in, tag, out);
  }
  if (!in.ConsumedEntireMessage())
    malformed("tensor");
  in.PopLimit(limit);
  return out;
}

/// A graph of `length` bytes with its initializers' skeletons.
std::string graph_skeleton(CodedInputStream& in, std::uint32_t length) {
  const auto limit = in.PushLimit(static_cast<int>(length));
  std::string out;
  while (const auto tag = in.ReadTag()) {
    if (static_cast<int>(wire::GetTagFieldNumber(tag)) == graph_initializer &&
        wire::GetTagWireType(tag) == wire::WIRETYPE_LENGTH_DELIMITED) {
      std::uint32_t bytes = 0;
      if (!in.ReadVarint32(&bytes))
        malformed("initializer");
      write_message(graph_initializer, tensor_skeleton(in, bytes), out);
      continue;
    }
    copy_field(in, tag, out);
  }
  if (!in.ConsumedEntireMessage())
    malformed("graph");
  in.PopLimit(limit);
  return out;
}

onnx::ModelProto model_skeleton(CodedInputStream& in) {
  in.SetTotalBytesLimit(std::numeric_limits<int>::max());
  std::string out;
  while (const auto tag = in.ReadTag()) {
    if (static_cast<int>(wire::GetTagFieldNumber(tag)) == model_graph &&
        wire::GetTagWireType(tag) == wire::WIRETYPE_LENGTH_DELIMITED) {
      std::uint32_t bytes = 0;
      if (!in.ReadVarint32(&bytes))
        malformed("graph");
      write_message(model_graph, graph_skeleton(in, bytes), out);
      continue;
    }
    copy_field(in, tag, out);
  }
  if (!in.ConsumedEntireMessage())
    malformed("model");
  onnx::ModelProto model;
  if (!model.ParseFromString(out) || !model.has_graph() || model.graph().node_size() == 0)
    throw invalid_argument("model_from_onnx: not an ONNX model (no graph of operators)");
  return model;
}

} // namespace

onnx::ModelProto read_onnx_skeleton(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw invalid_argument("model_from_onnx: cannot open the file");
  google::protobuf::io::FileInputStream file{fd};
  file.SetCloseOnDelete(true);
  CodedInputStream in{&file};
  return model_skeleton(in);
}

onnx::ModelProto read_onnx_skeleton_bytes(const std::string& bytes) {
  google::protobuf::io::ArrayInputStream array{bytes.data(), static_cast<int>(bytes.size())};
  CodedInputStream in{&array};
  return model_skeleton(in);
}

} // namespace troupe::detail
