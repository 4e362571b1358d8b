// The informer options the controllers share: one collection, with managed
// fields stripped from the cached objects (writes made from the cache keep the
// server's).
#pragma once

#include <string>

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

}  // namespace draplane::controllers
