// What the claim controller's tests build and read: pods as JSON and the
// claims the fake API server stores.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "api/codec.h"
#include "fake_api.h"

namespace draplane::testing {

// Pod "default/<name>" as JSON with spec.resourceClaims `claims` (a JSON
// array), on `node` ("" for none) in `phase`; `group`: its PodGroup
// (spec.schedulingGroup), "" for none.
inline std::string claim_pod_json(const std::string& name, const std::string& claims, const std::string& node = "",
                                  const std::string& phase = "Pending", const std::string& group = "") {
  const std::string scheduling_group =
      group.empty() ? std::string() : R"("schedulingGroup":{"podGroupName":")" + group + R"("},)";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"default"},"spec":{"nodeName":")" + node + R"(",)" + scheduling_group +
         R"("containers":[{"name":"c","image":"busybox"}],"resourceClaims":)" + claims +
         R"(},"status":{"phase":")" + phase + R"("}})";
}

// The stored claim "default/<name>"; a failed check and an empty claim when
// it is missing or does not decode.
inline api::ResourceClaim stored_claim(FakeApi& api, const std::string& name) {
  auto json = api.object("resourceclaims", "default", name);
  EXPECT_TRUE(json.has_value()) << name;
  auto c = api::decode_as<api::ResourceClaim>(json.value_or("{}"));
  EXPECT_TRUE(c.has_value()) << (c.has_value() ? "" : c.error().to_string());
  return c.has_value() ? *c : api::ResourceClaim{};
}

}  // namespace draplane::testing
