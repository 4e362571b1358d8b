// Typed decoding of the core/v1 subset (Pod, Node, Namespace). Unmodelled members
// of the big core structs go to their `extra`, so real manifests round-trip.
#include "api/decode_limits.h"
#include "api/internal/decoder.h"

namespace draplane::api::internal {

void read(Decoder& d, const JsonValue& v, const FieldPath& p, Taint& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "key") return get(d, x, c, out.key);
    if (k == "value") return get(d, x, c, out.value);
    if (k == "effect") return get(d, x, c, out.effect);
    if (k == "timeAdded") return get_time(d, x, c, out.timeAdded);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, Toleration& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "key") return get(d, x, c, out.key);
    if (k == "operator") return get(d, x, c, out.operator_);
    if (k == "value") return get(d, x, c, out.value);
    if (k == "effect") return get(d, x, c, out.effect);
    if (k == "tolerationSeconds") return get(d, x, c, out.tolerationSeconds);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, ResourceClaimRef& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "name") return get(d, x, c, out.name);
    if (k == "request") return get(d, x, c, out.request);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, ResourceRequirements& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "limits") return get(d, x, c, out.limits);
    if (k == "requests") return get(d, x, c, out.requests);
    if (k == "claims") return get(d, x, c, out.claims);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, EnvVar& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "name") return get(d, x, c, out.name);
    if (k == "value") return get(d, x, c, out.value);
    if (k == "valueFrom") return get(d, x, c, out.valueFrom);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, Container& out) {
  fields_with_extra(d, v, p, out.extra,
                    [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
                      if (k == "name") return get(d, x, c, out.name);
                      if (k == "image") return get(d, x, c, out.image);
                      if (k == "command") return get(d, x, c, out.command);
                      if (k == "args") return get(d, x, c, out.args);
                      if (k == "env") return get(d, x, c, out.env);
                      if (k == "workingDir") return get(d, x, c, out.workingDir);
                      if (k == "resources") return get(d, x, c, out.resources);
                      return false;
                    });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, PodResourceClaim& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "name") return get(d, x, c, out.name);
    if (k == "resourceClaimName") return get(d, x, c, out.resourceClaimName);
    if (k == "resourceClaimTemplateName") return get(d, x, c, out.resourceClaimTemplateName);
    if (k == "source") {
      // The v1alpha2-era ClaimSource: say exactly what to write instead.
      std::string hint;
      const JsonValue* claim = x.is_object() ? x.find("resourceClaimName") : nullptr;
      const JsonValue* tmpl = x.is_object() ? x.find("resourceClaimTemplateName") : nullptr;
      std::string base = p.empty() ? std::string() : p + ".";
      if (claim && claim->is_string()) {
        hint = "write " + base + "resourceClaimName: " + claim->text;
      } else if (tmpl && tmpl->is_string()) {
        hint = "write " + base + "resourceClaimTemplateName: " + tmpl->text;
      } else {
        hint = "write " + base + "resourceClaimName or " + base + "resourceClaimTemplateName";
      }
      d.fail(c + ": field was removed in Kubernetes 1.31 (pod claim sources are gone since "
                 "resource.k8s.io/v1alpha3): " + hint + " directly on the pod claim instead of "
                 "under source");
      return true;
    }
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, NodeAffinity& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "requiredDuringSchedulingIgnoredDuringExecution") {
      return get(d, x, c, out.requiredDuringSchedulingIgnoredDuringExecution);
    }
    if (k == "preferredDuringSchedulingIgnoredDuringExecution") {
      return get(d, x, c, out.preferredDuringSchedulingIgnoredDuringExecution);
    }
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, Affinity& out) {
  fields_with_extra(d, v, p, out.extra,
                    [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
                      if (k == "nodeAffinity") return get(d, x, c, out.nodeAffinity);
                      return false;
                    });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, PodSpec& out) {
  fields_with_extra(
      d, v, p, out.extra, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
        if (k == "initContainers") return get(d, x, c, out.initContainers);
        if (k == "containers") return get(d, x, c, out.containers);
        if (k == "restartPolicy") return get(d, x, c, out.restartPolicy);
        if (k == "nodeName") return get(d, x, c, out.nodeName);
        if (k == "schedulerName") return get(d, x, c, out.schedulerName);
        if (k == "priorityClassName") return get(d, x, c, out.priorityClassName);
        if (k == "priority") return get(d, x, c, out.priority);
        if (k == "nodeSelector") return get(d, x, c, out.nodeSelector);
        if (k == "affinity") return get(d, x, c, out.affinity);
        if (k == "tolerations") return get(d, x, c, out.tolerations);
        if (k == "resourceClaims") return get(d, x, c, out.resourceClaims);
        if (k == "terminationGracePeriodSeconds") {
          return get(d, x, c, out.terminationGracePeriodSeconds);
        }
        return false;
      });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, PodCondition& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "type") return get(d, x, c, out.type);
    if (k == "status") return get(d, x, c, out.status);
    if (k == "lastProbeTime") return get_time(d, x, c, out.lastProbeTime);
    if (k == "lastTransitionTime") return get_time(d, x, c, out.lastTransitionTime);
    if (k == "reason") return get(d, x, c, out.reason);
    if (k == "message") return get(d, x, c, out.message);
    if (k == "observedGeneration") return true;  // 1.34 field, not modelled
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, PodResourceClaimStatus& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "name") return get(d, x, c, out.name);
    if (k == "resourceClaimName") return get(d, x, c, out.resourceClaimName);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p,
          ContainerExtendedResourceRequest& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "containerName") return get(d, x, c, out.containerName);
    if (k == "resourceName") return get(d, x, c, out.resourceName);
    if (k == "requestName") return get(d, x, c, out.requestName);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p,
          PodExtendedResourceClaimStatus& out) {
  fields(d, v, p, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (k == "requestMappings") return get(d, x, c, out.requestMappings);
    if (k == "resourceClaimName") return get(d, x, c, out.resourceClaimName);
    return false;
  });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, PodStatus& out) {
  fields_with_extra(
      d, v, p, out.extra, [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
        if (k == "phase") return get(d, x, c, out.phase);
        if (k == "conditions") return get(d, x, c, out.conditions);
        if (k == "message") return get(d, x, c, out.message);
        if (k == "reason") return get(d, x, c, out.reason);
        if (k == "nominatedNodeName") return get(d, x, c, out.nominatedNodeName);
        if (k == "hostIP") return get(d, x, c, out.hostIP);
        if (k == "podIP") return get(d, x, c, out.podIP);
        if (k == "startTime") return get_time(d, x, c, out.startTime);
        if (k == "containerStatuses") return get(d, x, c, out.containerStatuses);
        if (k == "resourceClaimStatuses") return get(d, x, c, out.resourceClaimStatuses);
        if (k == "extendedResourceClaimStatus") {
          return get(d, x, c, out.extendedResourceClaimStatus);
        }
        return false;
      });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, NodeSpec& out) {
  fields_with_extra(d, v, p, out.extra,
                    [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
                      if (k == "unschedulable") return get(d, x, c, out.unschedulable);
                      if (k == "taints") return get(d, x, c, out.taints);
                      if (k == "providerID") return get(d, x, c, out.providerID);
                      return false;
                    });
}

void read(Decoder& d, const JsonValue& v, const FieldPath& p, NodeStatus& out) {
  fields_with_extra(d, v, p, out.extra,
                    [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
                      if (k == "capacity") return get(d, x, c, out.capacity);
                      if (k == "allocatable") return get(d, x, c, out.allocatable);
                      if (k == "conditions") return get(d, x, c, out.conditions);
                      if (k == "addresses") return get(d, x, c, out.addresses);
                      if (k == "nodeInfo") return get(d, x, c, out.nodeInfo);
                      return false;
                    });
}

namespace {
bool is_type_meta(std::string_view k) { return k == "apiVersion" || k == "kind"; }
}  // namespace

void read_object(Decoder& d, const JsonValue& v, Pod& out) {
  fields(d, v, "", [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (is_type_meta(k)) return true;
    if (k == "metadata") return get(d, x, c, out.metadata);
    if (k == "spec") return get(d, x, c, out.spec);
    if (k == "status") return get(d, x, c, out.status);
    return false;
  });
}

void read_object(Decoder& d, const JsonValue& v, Node& out) {
  fields(d, v, "", [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (is_type_meta(k)) return true;
    if (k == "metadata") return get(d, x, c, out.metadata);
    if (k == "spec") return get(d, x, c, out.spec);
    if (k == "status") return get(d, x, c, out.status);
    return false;
  });
}

void read_object(Decoder& d, const JsonValue& v, Namespace& out) {
  fields(d, v, "", [&](std::string_view k, const JsonValue& x, const FieldPath& c) {
    if (is_type_meta(k)) return true;
    if (k == "metadata") return get(d, x, c, out.metadata);
    if (k == "spec") {
      fields(d, x, c, [&](std::string_view sk, const JsonValue& sx, const FieldPath& sc) {
        if (sk == "finalizers") return get(d, sx, sc, out.specFinalizers);
        return false;
      });
      return true;
    }
    if (k == "status") {
      fields(d, x, c, [&](std::string_view sk, const JsonValue& sx, const FieldPath& sc) {
        if (sk == "phase") return get(d, sx, sc, out.phase);
        if (sk == "conditions") return true;  // controller-written, not modelled
        return false;
      });
      return true;
    }
    return false;
  });
}

}  // namespace draplane::api::internal
