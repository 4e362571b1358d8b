// The kubelet plugin API checked against bytes: requests encoded by hand from
// the field numbers of SPEC §5 (tags, varints, length-delimited fields) are
// sent to the driver's sockets under the kubelet's method paths with a
// type-unaware gRPC stub, and the answers are decoded by hand. A field number
// or package mistake in the .proto files cannot hide behind a generated client
// and server that agree with each other.
#include <gtest/gtest.h>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <future>
#include <map>

#include "dra_v1.pb.h"
#include "dra_v1beta1.pb.h"
#include "driver_fixture.h"

namespace draplane::node {
namespace {


// ---- protobuf wire format by hand

std::string varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
// A length-delimited field (wire type 2): strings and messages.
std::string len_field(int number, const std::string& bytes) {
  return varint((static_cast<uint64_t>(number) << 3) | 2) + varint(bytes.size()) + bytes;
}

// One decoded field: its number, wire type, and value (varint or bytes).
struct Field {
  int number = 0;
  int wire_type = 0;
  uint64_t value = 0;
  std::string bytes;
};

std::vector<Field> decode(const std::string& in) {
  std::vector<Field> out;
  size_t i = 0;
  auto read_varint = [&]() {
    uint64_t v = 0;
    for (int shift = 0; i < in.size(); shift += 7) {
      uint8_t b = static_cast<uint8_t>(in[i++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    return v;
  };
  while (i < in.size()) {
    uint64_t tag = read_varint();
    Field f;
    f.number = static_cast<int>(tag >> 3);
    f.wire_type = static_cast<int>(tag & 7);
    if (f.wire_type == 0) {
      f.value = read_varint();
    } else if (f.wire_type == 2) {
      uint64_t n = read_varint();
      f.bytes = in.substr(i, n);
      i += n;
    } else {
      ADD_FAILURE() << "unexpected wire type " << f.wire_type;
      return out;
    }
    out.push_back(std::move(f));
  }
  return out;
}
// The values of field `number` (all of a repeated field), as bytes.
std::vector<std::string> strings(const std::vector<Field>& fields, int number) {
  std::vector<std::string> out;
  for (const Field& f : fields) {
    if (f.number == number) {
      EXPECT_EQ(f.wire_type, 2) << "field " << number;
      out.push_back(f.bytes);
    }
  }
  return out;
}
// The numbers of the fields present, in order.
std::vector<int> numbers(const std::vector<Field>& fields) {
  std::vector<int> out;
  for (const Field& f : fields) out.push_back(f.number);
  return out;
}

// Claim{namespace=1, uid=2, name=3} in NodePrepareResourcesRequest.claims=1.
std::string claims_request(const std::string& ns, const std::string& uid, const std::string& name) {
  return len_field(1, len_field(1, ns) + len_field(2, uid) + len_field(3, name));
}

// ---- the generated messages decode hand-made bytes

TEST(DriverWire, RequestBytesDecodeToTheClaim) {
  // Written out byte by byte: claims (1, LEN 20) { namespace (1, LEN 7)
  // "default", uid (2, LEN 5) "uid-1", name (3, LEN 2) "c1" }.
  const std::string bytes("\x0a\x14\x0a\x07" "default" "\x12\x05" "uid-1" "\x1a\x02" "c1", 22);
  EXPECT_EQ(bytes, claims_request("default", "uid-1", "c1"));
  k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourcesRequest v1;
  ASSERT_TRUE(v1.ParseFromString(bytes));
  ASSERT_EQ(v1.claims_size(), 1);
  EXPECT_EQ(v1.claims(0).namespace_(), "default");
  EXPECT_EQ(v1.claims(0).uid(), "uid-1");
  EXPECT_EQ(v1.claims(0).name(), "c1");
  k8s::io::kubelet::pkg::apis::dra::v1beta1::NodeUnprepareResourcesRequest beta;
  ASSERT_TRUE(beta.ParseFromString(bytes));
  ASSERT_EQ(beta.claims_size(), 1);
  EXPECT_EQ(beta.claims(0).uid(), "uid-1");
  EXPECT_EQ(beta.claims(0).name(), "c1");
  // And the generated encoder writes the same bytes.
  EXPECT_EQ(v1.SerializeAsString(), bytes);
}

// ---- the driver's sockets answer hand-made calls

class DriverWireTest : public testing::DriverFixture {
 protected:
  DriverWireTest() : DriverFixture("wire") { health_ = {{"gpu-0", "Healthy", ""}, {"gpu-1", "Unhealthy", "gpu-lost"}}; }
  void SetUp() override { start_plugin(); }
  // One unary call of `method` with raw request bytes; the raw answer.
  std::string call(const std::string& socket, const std::string& method, const std::string& request) {
    auto channel = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
    grpc::GenericStub stub(channel);
    grpc::ClientContext ctx;
    grpc::Slice slice(request);
    grpc::ByteBuffer req(&slice, 1), resp;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&ctx, method, grpc::StubOptions(), &req, &resp, [&](grpc::Status s) { done.set_value(s); });
    grpc::Status st = done.get_future().get();
    EXPECT_TRUE(st.ok()) << method << ": " << st.error_message();
    return bytes_of(resp);
  }
  static std::string bytes_of(const grpc::ByteBuffer& b) {
    std::vector<grpc::Slice> slices;
    (void)b.Dump(&slices);
    std::string out;
    for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
    return out;
  }
  std::string dra() { return dir_.file("plugin/dra.sock"); }
};

TEST_F(DriverWireTest, GetInfoBytes) {
  // InfoRequest{} is empty: zero bytes.
  auto info = decode(call(dir_.file("registry/gpu.nvidia.com-reg.sock"), "/pluginregistration.Registration/GetInfo", ""));
  EXPECT_EQ(strings(info, 1), std::vector<std::string>{"DRAPlugin"});       // type
  EXPECT_EQ(strings(info, 2), std::vector<std::string>{"gpu.nvidia.com"});  // name
  EXPECT_EQ(strings(info, 3), std::vector<std::string>{dra()});             // endpoint
  EXPECT_EQ(strings(info, 4), (std::vector<std::string>{"v1.DRAPlugin", "v1beta1.DRAPlugin",
                                                        "v1alpha1.DRAResourceHealth"}));  // supported_versions
  // RegistrationStatus{plugin_registered (1, varint) true, error (2) ""}.
  std::string status = varint(1 << 3) + varint(1);
  EXPECT_EQ(call(dir_.file("registry/gpu.nvidia.com-reg.sock"), "/pluginregistration.Registration/NotifyRegistrationStatus",
                 status),
            "");
  ASSERT_TRUE(plugin_->registration().has_value());
  EXPECT_TRUE(plugin_->registration()->registered);
}

TEST_F(DriverWireTest, PrepareAndUnprepareBytes) {
  const std::string uid = put_claim("c1", "gpu-1");
  for (const char* version : {"v1", "v1beta1"}) {
    SCOPED_TRACE(version);
    const std::string service = std::string("/k8s.io.kubelet.pkg.apis.dra.") + version + ".DRAPlugin/";
    // NodePrepareResourcesResponse: claims (1) map entries {key (1), value (2)}.
    auto resp = decode(call(dra(), service + "NodePrepareResources", claims_request("default", uid, "c1")));
    auto entries = strings(resp, 1);
    ASSERT_EQ(entries.size(), 1u);
    auto entry = decode(entries[0]);
    EXPECT_EQ(strings(entry, 1), std::vector<std::string>{uid});
    auto value = strings(entry, 2);
    ASSERT_EQ(value.size(), 1u);
    // NodePrepareResourceResponse: devices (1), no error (2).
    auto result = decode(value[0]);
    EXPECT_EQ(numbers(result), std::vector<int>{1});
    auto device = decode(strings(result, 1).at(0));
    EXPECT_EQ(strings(device, 1), std::vector<std::string>{"gpu"});     // request_names
    EXPECT_EQ(strings(device, 2), std::vector<std::string>{"node-a"});  // pool_name
    EXPECT_EQ(strings(device, 3), std::vector<std::string>{"gpu-1"});   // device_name
    EXPECT_EQ(strings(device, 4),
              std::vector<std::string>{"k8s.gpu.nvidia.com/claim=" + uid + "-gpu-1"});  // cdi_device_ids
  }
  // A wrong UID: the entry carries error (2) and no devices.
  auto resp = decode(call(dra(), "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
                          claims_request("default", "not-" + uid, "c1")));
  auto entry = decode(strings(resp, 1).at(0));
  EXPECT_EQ(strings(entry, 1), std::vector<std::string>{"not-" + uid});
  auto result = decode(strings(entry, 2).at(0));
  EXPECT_EQ(numbers(result), std::vector<int>{2});
  EXPECT_NE(strings(result, 2).at(0).find("the claim was replaced"), std::string::npos);

  // NodeUnprepareResourcesResponse: claims (1) {key (1) uid, value (2) {no error (1)}}.
  resp = decode(call(dra(), "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources",
                     claims_request("default", uid, "c1")));
  entry = decode(strings(resp, 1).at(0));
  EXPECT_EQ(strings(entry, 1), std::vector<std::string>{uid});
  for (const std::string& v : strings(entry, 2)) EXPECT_EQ(v, "");
  EXPECT_TRUE(devices_->prepared_claims().empty());
}

TEST_F(DriverWireTest, HealthStreamBytes) {
  auto channel = grpc::CreateChannel("unix:" + dra(), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  auto step = [&](int tag) {
    void* got = nullptr;
    bool ok = false;
    EXPECT_TRUE(cq.Next(&got, &ok));
    EXPECT_EQ(got, reinterpret_cast<void*>(static_cast<intptr_t>(tag)));
    return ok;
  };
  auto rpc = stub.PrepareCall(&ctx, "/v1alpha1.DRAResourceHealth/NodeWatchResources", &cq);
  ASSERT_NE(rpc, nullptr);
  rpc->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(step(1));
  grpc::ByteBuffer empty(nullptr, 0);  // NodeWatchResourcesRequest{}
  rpc->Write(empty, reinterpret_cast<void*>(2));
  ASSERT_TRUE(step(2));
  rpc->WritesDone(reinterpret_cast<void*>(3));
  ASSERT_TRUE(step(3));
  grpc::ByteBuffer msg;
  rpc->Read(&msg, reinterpret_cast<void*>(4));
  ASSERT_TRUE(step(4));
  // NodeWatchResourcesResponse: devices (1) DeviceHealth {device (1)
  // DeviceIdentifier {pool_name (1), device_name (2)}, health (2) enum,
  // last_updated_time (3) int64, message (5)}.
  auto devices = strings(decode(bytes_of(msg)), 1);
  ASSERT_EQ(devices.size(), 2u);
  std::vector<std::string> names;
  std::vector<uint64_t> healths;
  for (const std::string& d : devices) {
    auto f = decode(d);
    auto id = decode(strings(f, 1).at(0));
    EXPECT_EQ(strings(id, 1), std::vector<std::string>{"node-a"});
    names.push_back(strings(id, 2).at(0));
    for (const Field& x : f) {
      if (x.number == 2) healths.push_back(x.value);
      if (x.number == 3) {
        EXPECT_EQ(x.value, 1767225600u);
      }
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"gpu-0", "gpu-1"}));
  EXPECT_EQ(healths, (std::vector<uint64_t>{1, 2}));  // HEALTHY, UNHEALTHY
  EXPECT_EQ(strings(decode(devices[1]), 5), std::vector<std::string>{"gpu-lost"});
  ctx.TryCancel();
  grpc::Status st;
  rpc->Finish(&st, reinterpret_cast<void*>(5));
  step(5);
  plugin_->stop();
  cq.Shutdown();
  void* tag;
  bool ok;
  while (cq.Next(&tag, &ok)) continue;
}

}  // namespace
}  // namespace draplane::node
