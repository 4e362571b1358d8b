#include "client/resource_path.h"

#include <gtest/gtest.h>

namespace draplane::client {
namespace {

using namespace resources;

TEST(ResourcePath, CoreGroupLivesUnderApiV1) {
  EXPECT_EQ(kPods.all().str(), "/api/v1/pods");
  EXPECT_EQ(kPods.ns("default").str(), "/api/v1/namespaces/default/pods");
  EXPECT_EQ(kPods.ns("default").name("p").sub("status").str(), "/api/v1/namespaces/default/pods/p/status");
  EXPECT_EQ(kNodes.name("n1").str(), "/api/v1/nodes/n1");
  EXPECT_EQ(kNamespaces.all().str(), "/api/v1/namespaces");
}

TEST(ResourcePath, OtherGroupsLiveUnderApis) {
  EXPECT_EQ(kResourceClaims.all().str(), "/apis/resource.k8s.io/v1/resourceclaims");
  EXPECT_EQ(kResourceClaims.ns("ns").name("c").sub("status").str(),
            "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c/status");
  EXPECT_EQ(kDeviceClasses.name("gpu").str(), "/apis/resource.k8s.io/v1/deviceclasses/gpu");
  EXPECT_EQ(kEventsV1.ns("kube-system").str(), "/apis/events.k8s.io/v1/namespaces/kube-system/events");
  EXPECT_EQ((ResourcePath{"example.com", "v1alpha1", "widgets"}.ns("a").name("w").str()),
            "/apis/example.com/v1alpha1/namespaces/a/widgets/w");
}

std::string_view echo(std::string_view target) { return target; }

TEST(ResourcePath, PassesAsTheTargetRestClientTakes) {
  EXPECT_EQ(std::string(echo(kResourceSlices.all())), "/apis/resource.k8s.io/v1/resourceslices");
}

}  // namespace
}  // namespace draplane::client
