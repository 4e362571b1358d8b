// Kubernetes' authz and authz-selectors libraries (library/authz.go), as the
// base environment declares them: member functions on the authorizer's object
// types. A device selector has no authorizer, so no value ever has these types;
// the declarations make a call such as 'x'.check('get') fail the way
// Kubernetes' checker fails it ("found no matching overload"), and a dyn
// receiver type-check as it does there (then "no such overload" at run time).
#include "cel/functions.h"

namespace draplane::cel::lib {

namespace {

Value unreachable(const Value*) { return no_such_overload(); }

}  // namespace

void register_authz(std::vector<Overload>& out) {
  const Type kS(TypeKind::kString), kB(TypeKind::kBool);
  const Type authorizer = Type::opaque("kubernetes.authorization.Authorizer");
  const Type path_check = Type::opaque("kubernetes.authorization.PathCheck");
  const Type group_check = Type::opaque("kubernetes.authorization.GroupCheck");
  const Type resource_check = Type::opaque("kubernetes.authorization.ResourceCheck");
  const Type decision = Type::opaque("kubernetes.authorization.Decision");
  auto add = [&](std::string id, std::string fn, std::vector<Type> params, Type result) {
    out.push_back(Overload{std::move(id), std::move(fn), true, std::move(params), std::move(result), unreachable, false});
  };
  add("authorizer_path", "path", {authorizer, kS}, path_check);
  add("authorizer_group", "group", {authorizer, kS}, group_check);
  add("authorizer_serviceaccount", "serviceAccount", {authorizer, kS, kS}, authorizer);
  add("groupcheck_resource", "resource", {group_check, kS}, resource_check);
  add("resourcecheck_subresource", "subresource", {resource_check, kS}, resource_check);
  add("resourcecheck_namespace", "namespace", {resource_check, kS}, resource_check);
  add("resourcecheck_name", "name", {resource_check, kS}, resource_check);
  add("pathcheck_check", "check", {path_check, kS}, decision);
  add("resourcecheck_check", "check", {resource_check, kS}, decision);
  add("decision_errored", "errored", {decision}, kB);
  add("decision_error", "error", {decision}, kS);
  add("decision_allowed", "allowed", {decision}, kB);
  add("decision_reason", "reason", {decision}, kS);
  // AuthzSelectors (1.31, feature-gated; stored expressions see it).
  add("authorizer_fieldselector", "fieldSelector", {resource_check, kS}, resource_check);
  add("authorizer_labelselector", "labelSelector", {resource_check, kS}, resource_check);
}

}  // namespace draplane::cel::lib
