#include "alloc/node_selector.h"

#include <gtest/gtest.h>

namespace draplane::alloc {
namespace {

api::NodeSelector one(std::vector<api::NodeSelectorRequirement> exprs, std::vector<api::NodeSelectorRequirement> fields = {}) {
  api::NodeSelector s;
  s.nodeSelectorTerms.push_back(api::NodeSelectorTerm{std::move(exprs), std::move(fields)});
  return s;
}

TEST(NodeSelector, Table) {
  api::Node n;
  n.metadata.name = "node-1";
  n.metadata.labels = {{"region", "r1"}, {"gpus", "8"}};
  struct Case {
    std::string name;
    api::NodeSelector sel;
    bool want;
    std::string error;  // substring when an error is expected
  };
  const std::vector<Case> cases = {
      {"In match", one({{"region", "In", {"r0", "r1"}}}), true, ""},
      {"In no match", one({{"region", "In", {"r2"}}}), false, ""},
      {"In missing label", one({{"zone", "In", {"a"}}}), false, ""},
      {"NotIn missing label", one({{"zone", "NotIn", {"a"}}}), true, ""},
      {"NotIn value", one({{"region", "NotIn", {"r1"}}}), false, ""},
      {"Exists", one({{"region", "Exists", {}}}), true, ""},
      {"DoesNotExist", one({{"region", "DoesNotExist", {}}}), false, ""},
      {"Gt", one({{"gpus", "Gt", {"4"}}}), true, ""},
      {"Lt", one({{"gpus", "Lt", {"4"}}}), false, ""},
      {"Gt non-integer label", one({{"region", "Gt", {"4"}}}), false, ""},
      {"AND within a term", one({{"region", "In", {"r1"}}, {"gpus", "Lt", {"4"}}}), false, ""},
      {"matchFields name", one({}, {{"metadata.name", "In", {"node-1"}}}), true, ""},
      {"matchFields NotIn", one({}, {{"metadata.name", "NotIn", {"node-1"}}}), false, ""},
      {"empty term matches nothing", one({}), false, ""},
      {"In without values", one({{"region", "In", {}}}), false, "nodeSelectorTerms[0].matchExpressions[0].values"},
      {"Gt with two values", one({{"gpus", "Gt", {"1", "2"}}}), false, "values"},
      {"unknown operator", one({{"gpus", "Near", {"1"}}}), false, "Unsupported value: \"Near\""},
      {"unsupported field", one({}, {{"metadata.uid", "In", {"x"}}}), false,
       "nodeSelectorTerms[0].matchFields[0].key: Unsupported value: \"metadata.uid\""},
      {"Gt not an integer", one({{"gpus", "Gt", {"x"}}}), false,
       "nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"x\": must be an integer"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = node_selector_matches(&n, c.sel);
    if (!c.error.empty()) {
      ASSERT_FALSE(got.has_value());
      EXPECT_NE(got.error().message().find(c.error), std::string::npos) << got.error().message();
      continue;
    }
    ASSERT_TRUE(got.has_value()) << got.error().message();
    EXPECT_EQ(*got, c.want);
  }
  // Terms are ORed.
  api::NodeSelector two = one({{"region", "In", {"r9"}}});
  two.nodeSelectorTerms.push_back(api::NodeSelectorTerm{{{"region", "In", {"r1"}}}, {}});
  EXPECT_TRUE(*node_selector_matches(&n, two));
  EXPECT_FALSE(*node_selector_matches(nullptr, two));
}

TEST(NodeSelector, Targets) {
  api::Node n;
  n.metadata.name = "node-1";
  EXPECT_TRUE(*node_target_matches(&n, "node-1", false, nullptr));
  EXPECT_FALSE(*node_target_matches(&n, "node-2", true, nullptr));  // nodeName wins
  EXPECT_TRUE(*node_target_matches(&n, "", true, nullptr));
  EXPECT_FALSE(*node_target_matches(&n, "", false, nullptr));
}

TEST(NodesNamedBy, NamesOnlyWhenEveryTermNamesItsNodes) {
  auto req = [](const std::string& key, const std::string& op, std::vector<std::string> values) {
    return api::NodeSelectorRequirement{key, op, std::move(values)};
  };
  api::NodeSelector sel;
  sel.nodeSelectorTerms.push_back(api::NodeSelectorTerm{{req("zone", "In", {"a"})}, {req("metadata.name", "In", {"n2"})}});
  sel.nodeSelectorTerms.push_back(api::NodeSelectorTerm{{}, {req("metadata.name", "In", {"n1"})}});
  sel.nodeSelectorTerms.push_back(api::NodeSelectorTerm{{}, {req("metadata.name", "In", {"n2"})}});
  EXPECT_EQ(nodes_named_by(sel), (std::vector<std::string>{"n1", "n2"}));
  // A term that selects by label (or excludes by name) may match any node.
  api::NodeSelector by_label = sel;
  by_label.nodeSelectorTerms.push_back(api::NodeSelectorTerm{{req("zone", "In", {"b"})}, {}});
  EXPECT_EQ(nodes_named_by(by_label), std::nullopt);
  api::NodeSelector not_in;
  not_in.nodeSelectorTerms.push_back(api::NodeSelectorTerm{{}, {req("metadata.name", "NotIn", {"n1"})}});
  EXPECT_EQ(nodes_named_by(not_in), std::nullopt);
  // No term matches nothing: no node is named.
  EXPECT_EQ(nodes_named_by(api::NodeSelector{}), std::vector<std::string>{});
}

}  // namespace
}  // namespace draplane::alloc
