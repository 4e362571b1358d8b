// Validation of one decoded manifest object the way `kubectl apply` + the API server
// treat it: a namespaced object without namespace goes to "default" (kubectl's
// context namespace), the server's defaults are applied, then create validation
// (with ResourceClaim status, see ValidationOptions) and the adminAccess admission
// rule against the labels of the object's namespace when that namespace is known.
// Shared by `draplane validate` and the manifest tests.
//
// Thread-safety: pure functions (the selector checker of `options` is called).
#pragma once

#include <map>
#include <string>

#include "api/field_error.h"
#include "api/types.h"
#include "api/validation.h"

namespace draplane::api {

// Namespace name -> its labels, for the namespaces known to the caller.
using NamespaceLabels = std::map<std::string, std::map<std::string, std::string>>;

// Defaults `object` in place (namespace, then defaults.h) and returns its errors;
// empty when valid. Namespaces absent from `namespaces` skip the admission rule.
FieldErrorList validate_manifest_object(Object& object, const ValidationOptions& options,
                                        const NamespaceLabels& namespaces);

// "<Kind>/<name>" (or "<Kind>/<generateName>*" when only generateName is set).
std::string object_label(const Object& object);

}  // namespace draplane::api
