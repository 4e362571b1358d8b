// Object metadata and the generic field validators of apimachinery and core/v1
// (ValidateObjectMeta, labels, annotations, node selectors, DNS names).
#include <set>
#include <string>

#include "api/validation_core.h"

namespace draplane::api::vcore {
namespace {

constexpr int64_t kTotalAnnotationSizeLimitB = 256 * (1 << 10);
constexpr const char* kFieldImmutable = "field is immutable";

// apimachinery's maskTrailingDash: a generateName prefix may end in '-'.
std::string mask_trailing_dash(std::string_view name) {
  std::string s(name);
  if (s.size() > 1 && s.back() == '-') s.back() = 'a';
  return s;
}

FieldErrorList messages_to_invalid(const std::vector<std::string>& msgs, const FieldPath& path,
                                   std::string_view value) {
  FieldErrorList errs;
  for (const auto& m : msgs) errs.push_back(field_invalid(path, value, m));
  return errs;
}

bool is_standard_finalizer(std::string_view f) {
  return f == "kubernetes" || f == "orphan" || f == "foregroundDeletion";
}

FieldErrorList validate_owner_references(const std::vector<OwnerReference>& refs, const FieldPath& path) {
  FieldErrorList errs;
  std::string first_controller;
  for (const auto& ref : refs) {
    // schema.FromAPIVersionAndKind: the version is what follows the last '/'.
    std::string_view version = ref.apiVersion;
    if (auto slash = version.rfind('/'); slash != std::string_view::npos) version = version.substr(slash + 1);
    if (version.empty()) {
      errs.push_back(field_invalid(path.child("apiVersion"), ref.apiVersion, "version must not be empty"));
    }
    if (ref.kind.empty()) errs.push_back(field_invalid(path.child("kind"), ref.kind, "must not be empty"));
    if (ref.name.empty()) errs.push_back(field_invalid(path.child("name"), ref.name, "must not be empty"));
    if (ref.uid.empty()) errs.push_back(field_invalid(path.child("uid"), ref.uid, "must not be empty"));
    if (ref.controller.value_or(false)) {
      std::string cur = ref.kind + "/" + ref.name;
      if (!first_controller.empty()) {
        errs.push_back(field_invalid(path, BadValue::raw("[]v1.OwnerReference{...}"),
                                     "Only one reference can have Controller set to true. Found \"true\" in "
                                     "references for " + first_controller + " and " + cur));
      } else {
        first_controller = cur;
      }
    }
  }
  return errs;
}

FieldErrorList validate_finalizers(const std::vector<std::string>& finalizers, const FieldPath& path) {
  FieldErrorList errs;
  bool orphan = false, foreground = false;
  for (size_t i = 0; i < finalizers.size(); ++i) {
    const auto& f = finalizers[i];
    append_errors(errs, messages_to_invalid(qualified_name_errors(f), path, f));
    if (f == "orphan") orphan = true;
    if (f == "foregroundDeletion") foreground = true;
  }
  if (orphan && foreground) {
    errs.push_back(field_invalid(path, BadValue::raw("[]string{...}"),
                                 "finalizer orphan and foregroundDeletion cannot be both set"));
  }
  // core's validateKubeFinalizerName
  for (size_t i = 0; i < finalizers.size(); ++i) {
    const auto& f = finalizers[i];
    if (f.find('/') == std::string::npos && !is_standard_finalizer(f)) {
      errs.push_back(field_invalid(path.index(i), f,
                                   "name is neither a standard finalizer name nor is it fully qualified"));
    }
  }
  return errs;
}

FieldErrorList validate_common_meta(const ObjectMeta& meta, bool namespaced, const FieldPath& path) {
  FieldErrorList errs;
  if (namespaced) {
    if (meta.namespace_.empty()) {
      errs.push_back(field_required(path.child("namespace")));
    } else {
      append_errors(errs, messages_to_invalid(dns1123_label_errors(meta.namespace_), path.child("namespace"),
                                              meta.namespace_));
    }
  } else if (!meta.namespace_.empty()) {
    errs.push_back(field_forbidden(path.child("namespace"), "not allowed on this type"));
  }
  if (meta.generation < 0) {
    errs.push_back(field_invalid(path.child("generation"), meta.generation, "must be greater than or equal to 0"));
  }
  append_errors(errs, validate_labels(meta.labels, path.child("labels")));
  append_errors(errs, validate_annotations(meta.annotations, path.child("annotations")));
  append_errors(errs, validate_owner_references(meta.ownerReferences, path.child("ownerReferences")));
  append_errors(errs, validate_finalizers(meta.finalizers, path.child("finalizers")));
  return errs;
}

void immutable(FieldErrorList& errs, const std::string& new_value, const std::string& old_value,
               const FieldPath& path) {
  if (new_value != old_value) errs.push_back(field_invalid(path, new_value, kFieldImmutable));
}

}  // namespace

FieldErrorList validate_object_meta(const ObjectMeta& meta, bool namespaced, const NameFn& name_fn,
                                    const FieldPath& path) {
  FieldErrorList errs;
  if (!meta.generateName.empty()) {
    for (const auto& m : name_fn(mask_trailing_dash(meta.generateName))) {
      errs.push_back(field_invalid(path.child("generateName"), meta.generateName, m));
    }
  }
  if (meta.name.empty()) {
    // The API server generates the name from generateName before validating.
    if (meta.generateName.empty()) {
      errs.push_back(field_required(path.child("name"), "name or generateName is required"));
    }
  } else {
    append_errors(errs, messages_to_invalid(name_fn(meta.name), path.child("name"), meta.name));
  }
  append_errors(errs, validate_common_meta(meta, namespaced, path));
  return errs;
}

FieldErrorList validate_object_meta_update(const ObjectMeta& new_meta, const ObjectMeta& old_meta,
                                           const FieldPath& path) {
  FieldErrorList errs;
  if (!old_meta.deletionTimestamp.empty()) {
    std::set<std::string> old_set(old_meta.finalizers.begin(), old_meta.finalizers.end());
    std::set<std::string> extra;
    for (const auto& f : new_meta.finalizers) {
      if (!old_set.count(f)) extra.insert(f);
    }
    if (!extra.empty()) {
      std::string list = "[]string{";
      bool first = true;
      for (const auto& f : extra) {
        if (!first) list += ", ";
        first = false;
        list += go_quote(f);
      }
      errs.push_back(field_forbidden(path.child("finalizers"),
                                     "no new finalizers can be added if the object is being deleted, found new "
                                     "finalizers " + list + "}"));
    }
  }
  if (new_meta.resourceVersion.empty()) {
    errs.push_back(field_invalid(path.child("resourceVersion"), new_meta.resourceVersion,
                                 "must be specified for an update"));
  }
  if (new_meta.generation < old_meta.generation) {
    errs.push_back(field_invalid(path.child("generation"), new_meta.generation, "must not be decremented"));
  }
  immutable(errs, new_meta.name, old_meta.name, path.child("name"));
  immutable(errs, new_meta.namespace_, old_meta.namespace_, path.child("namespace"));
  immutable(errs, new_meta.uid, old_meta.uid, path.child("uid"));
  immutable(errs, new_meta.creationTimestamp, old_meta.creationTimestamp, path.child("creationTimestamp"));
  immutable(errs, new_meta.deletionTimestamp, old_meta.deletionTimestamp, path.child("deletionTimestamp"));
  if (new_meta.deletionGracePeriodSeconds != old_meta.deletionGracePeriodSeconds) {
    errs.push_back(field_invalid(path.child("deletionGracePeriodSeconds"),
                                 new_meta.deletionGracePeriodSeconds
                                     ? BadValue(*new_meta.deletionGracePeriodSeconds)
                                     : BadValue::null(),
                                 kFieldImmutable));
  }
  append_errors(errs, validate_labels(new_meta.labels, path.child("labels")));
  append_errors(errs, validate_annotations(new_meta.annotations, path.child("annotations")));
  append_errors(errs, validate_owner_references(new_meta.ownerReferences, path.child("ownerReferences")));
  append_errors(errs, validate_finalizers(new_meta.finalizers, path.child("finalizers")));
  return errs;
}

FieldErrorList validate_template_object_meta(const ObjectMeta& meta, const FieldPath& path) {
  FieldErrorList errs = validate_annotations(meta.annotations, path.child("annotations"));
  append_errors(errs, validate_labels(meta.labels, path.child("labels")));
  constexpr const char* kMsg = "cannot be set for a template";
  auto forbid = [&](bool set, const char* field) {
    if (set) errs.push_back(field_forbidden(path.child(field), kMsg));
  };
  // In ObjectMeta field order, as upstream's reflection walk reports them.
  forbid(!meta.name.empty(), "name");
  forbid(!meta.generateName.empty(), "generateName");
  forbid(!meta.namespace_.empty(), "namespace");
  forbid(!meta.uid.empty(), "uid");
  forbid(!meta.resourceVersion.empty(), "resourceVersion");
  forbid(meta.generation != 0, "generation");
  forbid(!meta.creationTimestamp.empty(), "creationTimestamp");
  forbid(!meta.deletionTimestamp.empty(), "deletionTimestamp");
  forbid(meta.deletionGracePeriodSeconds.has_value(), "deletionGracePeriodSeconds");
  forbid(!meta.ownerReferences.empty(), "ownerReferences");
  forbid(!meta.finalizers.empty(), "finalizers");
  forbid(!meta.managedFields.empty(), "managedFields");
  return errs;
}

FieldErrorList validate_labels(const std::map<std::string, std::string>& labels, const FieldPath& path) {
  FieldErrorList errs;
  for (const auto& [k, v] : labels) {
    append_errors(errs, validate_label_name(k, path));
    append_errors(errs, messages_to_invalid(label_value_errors(v), path, v));
  }
  return errs;
}

FieldErrorList validate_annotations(const std::map<std::string, std::string>& annotations,
                                    const FieldPath& path) {
  FieldErrorList errs;
  int64_t total = 0;
  for (const auto& [k, v] : annotations) {
    std::string lower = k;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    append_errors(errs, messages_to_invalid(qualified_name_errors(lower), path, k));
    total += static_cast<int64_t>(k.size() + v.size());
  }
  if (total > kTotalAnnotationSizeLimitB) errs.push_back(field_too_long(path, kTotalAnnotationSizeLimitB));
  return errs;
}

FieldErrorList validate_label_name(std::string_view name, const FieldPath& path) {
  return messages_to_invalid(qualified_name_errors(name), path, name);
}

FieldErrorList validate_label_value(std::string_view value, const FieldPath& path) {
  return messages_to_invalid(label_value_errors(value), path, value);
}

FieldErrorList validate_dns_label(std::string_view value, const FieldPath& path) {
  return messages_to_invalid(dns1123_label_errors(value), path, value);
}

FieldErrorList validate_dns_subdomain(std::string_view value, const FieldPath& path) {
  return messages_to_invalid(dns1123_subdomain_errors(value), path, value);
}

FieldErrorList validate_node_name(std::string_view name, const FieldPath& path) {
  return messages_to_invalid(dns1123_subdomain_errors(name), path, name);
}

FieldErrorList validate_node_selector(const NodeSelector& selector, const FieldPath& path) {
  FieldErrorList errs;
  FieldPath terms_path = path.child("nodeSelectorTerms");
  if (selector.nodeSelectorTerms.empty()) {
    errs.push_back(field_required(terms_path, "must have at least one node selector term"));
    return errs;
  }
  for (size_t i = 0; i < selector.nodeSelectorTerms.size(); ++i) {
    const auto& term = selector.nodeSelectorTerms[i];
    FieldPath tp = terms_path.index(i);
    for (size_t j = 0; j < term.matchExpressions.size(); ++j) {
      const auto& rq = term.matchExpressions[j];
      FieldPath rp = tp.child("matchExpressions").index(j);
      const std::string& op = rq.operator_;
      if (op == "In" || op == "NotIn") {
        if (rq.values.empty()) {
          errs.push_back(field_required(rp.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"));
        }
      } else if (op == "Exists" || op == "DoesNotExist") {
        if (!rq.values.empty()) {
          errs.push_back(field_forbidden(rp.child("values"),
                                         "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        }
      } else if (op == "Gt" || op == "Lt") {
        if (rq.values.size() != 1) {
          errs.push_back(field_required(rp.child("values"),
                                        "must be specified single value when `operator` is 'Lt' or 'Gt'"));
        }
      } else {
        errs.push_back(field_invalid(rp.child("operator"), op, "not a valid selector operator"));
      }
      append_errors(errs, validate_label_name(rq.key, rp.child("key")));
      for (size_t k = 0; k < rq.values.size(); ++k) {
        append_errors(errs, validate_label_value(rq.values[k], rp.child("values").index(k)));
      }
    }
    for (size_t j = 0; j < term.matchFields.size(); ++j) {
      const auto& rq = term.matchFields[j];
      FieldPath rp = tp.child("matchFields").index(j);
      if (rq.operator_ == "In" || rq.operator_ == "NotIn") {
        if (rq.values.size() != 1) {
          errs.push_back(field_required(rp.child("values"),
                                        "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                                        "selector"));
        }
      } else {
        errs.push_back(field_invalid(rp.child("operator"), rq.operator_, "not a valid selector operator"));
      }
      if (rq.key != "metadata.name") {
        errs.push_back(field_invalid(rp.child("key"), rq.key, "not a valid field selector key"));
      } else {
        for (size_t k = 0; k < rq.values.size(); ++k) {
          append_errors(errs, validate_node_name(rq.values[k], rp.child("values").index(k)));
        }
      }
    }
  }
  return errs;
}

}  // namespace draplane::api::vcore
