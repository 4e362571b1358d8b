// The etcd store beyond the shared contract (store_conformance_test.cc and
// store_model_test.cc run that against etcd too): key layout, a watch across a
// connection loss, a watcher behind a compaction, failover between members.
// Every test runs a real etcd (skipped when the binary is absent).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "etcd_test_util.h"
#include "store_test_util.h"
#include "tcp_proxy.h"

namespace draplane::store {
namespace {

using testing::Collector;
using testing::EtcdServer;

class EtcdStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::etcd_binary().empty()) GTEST_SKIP() << testing::kNoEtcd;
    ASSERT_TRUE(etcd_.start()) << "etcd did not start; log in " << etcd_.dir();
  }
  std::unique_ptr<Store> open(EtcdOptions o) {
    auto s = open_etcd_store(o);
    EXPECT_TRUE(s.has_value()) << (s.has_value() ? "" : s.error().to_string());
    return s.has_value() ? std::move(s).value() : nullptr;
  }
  EtcdOptions raw() {  // the whole etcd keyspace, keys unchanged
    EtcdOptions o;
    o.endpoints = {etcd_.endpoint()};
    o.prefix = "";
    o.root = "";
    return o;
  }
  EtcdServer etcd_;
};

std::vector<std::string> keys_of(const std::vector<Event>& evs) {
  std::vector<std::string> out;
  for (const auto& e : evs) out.push_back(e.kv.key + "@" + std::to_string(e.kv.mod_revision));
  return out;
}

TEST_F(EtcdStoreTest, KeysLiveUnderTheEtcdPrefixAsKubeApiserverLaysThemOut) {
  EtcdOptions o = raw();
  o.prefix = "/cluster-a";
  o.root = "/registry";
  auto store = open(o);
  auto raw_view = open(raw());
  ASSERT_TRUE(store && raw_view);
  ASSERT_TRUE(store->create("/registry/resourceclaims/ns1/claim-1", "{}").has_value());
  ASSERT_TRUE(raw_view->create("/elsewhere/x", "1").has_value());

  auto in_etcd = raw_view->get("/cluster-a/resourceclaims/ns1/claim-1");
  ASSERT_TRUE(in_etcd.has_value()) << in_etcd.error().to_string();
  EXPECT_EQ(in_etcd->value, "{}");
  auto all = store->list("/registry/");
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->items.size(), 1u);  // nothing outside the prefix
  EXPECT_EQ(all->items[0].key, "/registry/resourceclaims/ns1/claim-1");
  auto outside = store->create("/other/x", "1");
  ASSERT_FALSE(outside.has_value());
  EXPECT_EQ(outside.error().code(), Code::kInvalid);
}

TEST_F(EtcdStoreTest, OpenFailsWhenNoEndpointAnswers) {
  EtcdOptions o = raw();
  o.endpoints = {"127.0.0.1:" + std::to_string(testing::free_port())};
  o.request_timeout = std::chrono::milliseconds(300);
  auto s = open_etcd_store(o);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), Code::kUnavailable);
}

// kube-apiserver's --etcd-cafile/--etcd-certfile/--etcd-keyfile: etcd serving
// TLS and demanding a client certificate from our CA.
TEST(EtcdTls, ClientCertificateIsPresentedAndRequired) {
  if (testing::etcd_binary().empty()) GTEST_SKIP() << testing::kNoEtcd;
  testing::TempDir pki;
  const std::string d = pki.path();
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  const std::string cmd =
      "cd " + d + " && openssl req -x509 " + key + " -keyout ca.key -out ca.crt -days 1 -subj /CN=test-ca &&" +
      " openssl req " + key + " -keyout server.key -out server.csr -subj /CN=etcd &&" +
      " printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' > server.ext &&" +
      " openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile server.ext -out server.crt &&" +
      " openssl req " + key + " -keyout client.key -out client.csr -subj /CN=draplane &&" +
      " printf 'extendedKeyUsage=clientAuth\\n' > client.ext &&" +
      " openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile client.ext -out client.crt";
  if (std::system((cmd + " >/dev/null 2>&1").c_str()) != 0) GTEST_SKIP() << "openssl could not make test certificates";
  EtcdServer etcd;
  etcd.require_tls(d + "/ca.crt", d + "/server.crt", d + "/server.key");
  ASSERT_TRUE(etcd.start()) << "etcd did not start; log in " << etcd.dir();

  EtcdOptions o;
  o.endpoints = {etcd.endpoint()};
  o.ca_file = d + "/ca.crt";
  o.cert_file = d + "/client.crt";
  o.key_file = d + "/client.key";
  o.request_timeout = std::chrono::milliseconds(3000);
  auto s = open_etcd_store(o);
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  EXPECT_TRUE((*s)->create("/registry/pods/ns/p", "{}").has_value());

  o.cert_file.clear();  // no client certificate: etcd refuses the handshake
  o.key_file.clear();
  o.request_timeout = std::chrono::milliseconds(500);
  auto refused = open_etcd_store(o);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), Code::kUnavailable);
  o.ca_file = d + "/missing.crt";
  auto missing = open_etcd_store(o);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), Code::kInvalid);
  EXPECT_NE(missing.error().message().find("--etcd-cafile"), std::string::npos);
}

TEST(EtcdUrl, ParsesEndpointsAndNamesWhatIsWrong) {
  auto ok = parse_etcd_url("etcd://10.0.0.1:2379,etcd-b:2379");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*ok, (std::vector<std::string>{"10.0.0.1:2379", "etcd-b:2379"}));
  for (const char* bad : {"http://a:1", "etcd://", "etcd://a", "etcd://a:1,", "etcd://a:x"}) {
    auto r = parse_etcd_url(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code(), Code::kInvalid);
  }
}

// Through a proxy the test can cut: the watch resumes after the connection comes
// back, from the revision after its last event, with nothing lost or repeated.
TEST_F(EtcdStoreTest, WatchResumesAfterConnectionLossWithoutGap) {
  testing::TcpProxy proxy(etcd_.client_port());
  EtcdOptions via = raw();
  via.endpoints = {proxy.endpoint()};
  auto watcher = open(via);
  auto writer = open(raw());
  ASSERT_TRUE(watcher && writer);
  Collector c;
  auto w = watcher->watch("/w/", 0, c.callback());
  ASSERT_TRUE(w.has_value());
  ASSERT_TRUE(writer->create("/w/1", "a").has_value());  // 2
  ASSERT_EQ(c.wait_for(1).size(), 1u);

  proxy.cut();
  ASSERT_TRUE(writer->create("/w/2", "b").has_value());  // 3
  ASSERT_TRUE(writer->create("/x/other", "c").has_value());  // 4
  ASSERT_TRUE(writer->update("/w/1", "a2", 2).has_value());  // 5
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the stream notices the cut
  proxy.restore();
  auto evs = c.wait_for(3);
  EXPECT_EQ(keys_of(evs), (std::vector<std::string>{"/w/1@2", "/w/2@3", "/w/1@5"}));
  EXPECT_TRUE(c.end().ok()) << c.end().to_string();
}

// kill -9 of etcd and a restart on its data: every acknowledged write is there,
// and a watch opened before the crash goes on from where it was.
TEST_F(EtcdStoreTest, AcknowledgedWritesAndWatchesSurviveAnEtcdCrash) {
  auto store = open(raw());
  ASSERT_TRUE(store);
  Collector c;
  auto w = store->watch("/k/", 0, c.callback());
  ASSERT_TRUE(w.has_value());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(store->create("/k/" + std::to_string(i), "v").has_value());
  ASSERT_EQ(c.wait_for(20).size(), 20u);

  etcd_.stop(SIGKILL);
  ASSERT_TRUE(etcd_.restart()) << "etcd did not restart; log in " << etcd_.dir();
  auto l = store->list("/k/");  // waits for the reconnect
  ASSERT_TRUE(l.has_value()) << l.error().to_string();
  EXPECT_EQ(l->items.size(), 20u);
  EXPECT_EQ(l->revision, 21);
  ASSERT_TRUE(store->create("/k/after", "v").has_value());
  auto evs = c.wait_for(21);
  ASSERT_EQ(evs.size(), 21u);
  EXPECT_EQ(evs.back().kv.key, "/k/after");
  EXPECT_EQ(evs.back().kv.mod_revision, 22);
  EXPECT_TRUE(c.end().ok()) << c.end().to_string();
}

// A watcher cut off while the history it needs is compacted away gets 410 Gone
// (kGone) when it comes back, as kube-apiserver's watchers do, so it relists.
TEST_F(EtcdStoreTest, WatcherBehindCompactionGetsGone) {
  testing::TcpProxy proxy(etcd_.client_port());
  EtcdOptions via = raw();
  via.endpoints = {proxy.endpoint()};
  auto watcher = open(via);
  auto writer = open(raw());
  ASSERT_TRUE(watcher && writer);
  Collector c;
  auto w = watcher->watch("/w/", 0, c.callback());
  ASSERT_TRUE(w.has_value());
  ASSERT_TRUE(writer->create("/w/1", "a").has_value());  // 2
  ASSERT_EQ(c.wait_for(1).size(), 1u);

  proxy.cut();
  ASSERT_TRUE(writer->create("/w/2", "b").has_value());  // 3: the watcher never sees it
  ASSERT_TRUE(writer->create("/w/3", "c").has_value());  // 4
  ASSERT_TRUE(writer->compact(4).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  proxy.restore();
  auto evs = c.wait_for(100);  // returns at the end status
  EXPECT_EQ(keys_of(evs), (std::vector<std::string>{"/w/1@2"}));
  EXPECT_EQ(c.end().code(), Code::kGone) << c.end().to_string();
  EXPECT_GE(watcher->compacted_revision(), 4);
  // A relist at the current revision and a watch from there work again.
  auto l = watcher->list("/w/");
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->items.size(), 3u);
  Collector again;
  EXPECT_TRUE(watcher->watch("/w/", l->revision + 1, again.callback()).has_value());
}

// Three members; the store talks to the first. kill -9 of that member: writes go
// on through another (after the channel fails over), the watch resumes with no gap.
// When the killed member led, the first write waits for etcd's own request timeout
// (5 s + 2 elections: a member without a leader drops proposals), so this test
// takes about 7 s.
TEST(EtcdFailover, WritesAndWatchesSurviveTheLossOfAMember) {
  if (testing::etcd_binary().empty()) GTEST_SKIP() << testing::kNoEtcd;
  testing::EtcdCluster cluster;
  ASSERT_TRUE(cluster.start(3));
  EtcdOptions o;
  o.endpoints = cluster.endpoints();
  o.prefix = "";
  o.root = "";
  auto s = open_etcd_store(o);
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  auto& store = *s;
  Collector c;
  auto w = store->watch("/f/", 0, c.callback());
  ASSERT_TRUE(w.has_value());
  ASSERT_TRUE(store->create("/f/0", "x").has_value());
  ASSERT_EQ(c.wait_for(1).size(), 1u);

  cluster.member(0).stop(SIGKILL);
  std::vector<std::string> want = {"/f/0"};
  for (int i = 1; i <= 5; ++i) {
    std::string key = "/f/" + std::to_string(i);
    // A write whose connection broke in flight is reported kUnavailable (its
    // outcome unknown); the client retries, and a retry of an applied create
    // finds the key. Either way the key must exist exactly once.
    Result<KeyValue> r = Status(Code::kUnavailable, "");
    for (int attempt = 0; attempt < 20 && !r.has_value() && r.error().code() == Code::kUnavailable; ++attempt) {
      r = store->create(key, "x");
    }
    ASSERT_TRUE(r.has_value() || r.error().code() == Code::kAlreadyExists) << r.error().to_string();
    want.push_back(key);
  }
  auto evs = c.wait_for(want.size());
  std::vector<std::string> got;
  for (const auto& e : evs) got.push_back(e.kv.key);
  EXPECT_EQ(got, want);
  EXPECT_TRUE(c.end().ok()) << c.end().to_string();
  auto l = store->list("/f/");
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->items.size(), want.size());
}

}  // namespace
}  // namespace draplane::store
