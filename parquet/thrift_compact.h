// Serializes a generated Parquet metadata structure (parquet_format.thrift) with Thrift's compact
// protocol, the encoding Parquet specifies for page headers and the file footer.
#pragma once
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <memory>
#include <string>

namespace trialdb::parquet {

template <class ThriftStruct>
std::string compact_bytes(const ThriftStruct& value) {
  auto buffer = std::make_shared<apache::thrift::transport::TMemoryBuffer>();
  apache::thrift::protocol::TCompactProtocolT<apache::thrift::transport::TMemoryBuffer> protocol(buffer);
  value.write(&protocol);
  return buffer->getBufferAsString();
}

}  // namespace trialdb::parquet
