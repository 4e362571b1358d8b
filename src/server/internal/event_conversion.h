// The Event in its two served versions (event_conversion.cc): stored as core/v1,
// served as core/v1 and as events.k8s.io/v1; field-selector labels and the
// validation of both, as kube-apiserver applies them.
#pragma once

#include <string>

#include "api/field_error.h"
#include "server/json_util.h"
#include "server/resources.h"

namespace draplane::server {

// True for the events.k8s.io resource (served by conversion).
bool is_events_v1(const ResourceInfo& r);
// In place: an events.k8s.io/v1 Event as core/v1, and back.
void event_to_core(Json& object);
void event_to_events_v1(Json& object);
// The core/v1 field label a field selector of `r` names ("" when the label is
// not supported in r's version); core labels map to themselves.
std::string event_field_label(const ResourceInfo& r, const std::string& label);
// ValidateEventCreate / ValidateEventUpdate for a request of r's version, on the
// stored (core/v1) form.
api::FieldErrorList validate_event_create(const ResourceInfo& r, const JsonValue& stored_form);
api::FieldErrorList validate_event_update(const ResourceInfo& r, const JsonValue& old_form, const JsonValue& stored_form);

}  // namespace draplane::server
