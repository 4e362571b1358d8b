// The informer and event options the controllers share: one collection, with
// managed fields stripped from the cached objects (writes made from the cache
// keep the server's); events through core/v1 under the controller's component
// name, as kube-controller-manager's recorders.
#pragma once

#include <string>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/resource_path.h"

namespace draplane::controllers {

inline client::RawInformer::Options informer_options(const char* api_version, const char* kind,
                                                     const client::ResourcePath& resource) {
  client::RawInformer::Options o;
  o.api_version = api_version;
  o.kind = kind;
  o.path = resource.all().str();
  o.strip_managed_fields = true;
  return o;
}

inline client::EventRecorderOptions event_options(const char* component) {
  client::EventRecorderOptions o;
  o.api = client::EventRecorderOptions::Api::kCoreV1;
  o.component = component;
  return o;
}

}  // namespace draplane::controllers
