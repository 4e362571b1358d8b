#!/usr/bin/env python3
"""Generates src/server/openapi_types.json: the field tables (types, json
names, list/map/patch markers, enum values, descriptions) of the Kubernetes API
types draplane serves, read from the API's own Go definitions and their
generated field docs (types.go and types_swagger_doc_generated.go of
k8s.io/api and k8s.io/apimachinery at a release branch).

The output is data (the API's published schema), not code: the build embeds it
in the binary (src/server/CMakeLists.txt, cmake/embed_text.cmake), it is parsed
once at first use (openapi_types.cc), the OpenAPI v2 and v3 documents are
rendered from it by openapi_schema.cc and server-side apply's field schema is
derived from it (field_schema.cc).

Usage: gen_openapi_types.py API_GIT_DIR APIMACHINERY_GIT_DIR REF > src/server/openapi_types.json
(each GIT_DIR a clone or bare mirror; REF a branch such as release-1.36; the
packages of PACKAGE_REFS are read at their own ref).
"""
import json
import re
import subprocess
import sys

API, MACH, REF = sys.argv[1], sys.argv[2], sys.argv[3]

# Go package -> (git dir, path, OpenAPI name prefix)
PACKAGES = {
    "core/v1": (API, "core/v1", "io.k8s.api.core.v1."),
    "resource/v1": (API, "resource/v1", "io.k8s.api.resource.v1."),
    "resource/v1beta1": (API, "resource/v1beta1", "io.k8s.api.resource.v1beta1."),
    "resource/v1beta2": (API, "resource/v1beta2", "io.k8s.api.resource.v1beta2."),
    "coordination/v1": (API, "coordination/v1", "io.k8s.api.coordination.v1."),
    "apps/v1": (API, "apps/v1", "io.k8s.api.apps.v1."),
    "batch/v1": (API, "batch/v1", "io.k8s.api.batch.v1."),
    "scheduling/v1": (API, "scheduling/v1", "io.k8s.api.scheduling.v1."),
    "scheduling/v1beta1": (API, "scheduling/v1beta1", "io.k8s.api.scheduling.v1beta1."),
    "scheduling/v1alpha3": (API, "scheduling/v1alpha3", "io.k8s.api.scheduling.v1alpha3."),
    "events/v1": (API, "events/v1", "io.k8s.api.events.v1."),
    "meta/v1": (MACH, "pkg/apis/meta/v1", "io.k8s.apimachinery.pkg.apis.meta.v1."),
}
# Import aliases used in the packages above -> package key.
ALIASES = {"v1": "core/v1", "corev1": "core/v1", "apiv1": "core/v1", "metav1": "meta/v1",
           "schedulingv1alpha3": "scheduling/v1alpha3"}
# Types with hand-written schemas (openapi_schema.cc): Go name -> OpenAPI name.
SPECIAL = {
    "metav1.Time": "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "metav1.MicroTime": "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
    "metav1.FieldsV1": "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "resource.Quantity": "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "intstr.IntOrString": "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
    "runtime.RawExtension": "io.k8s.apimachinery.pkg.runtime.RawExtension",
}
PRIMITIVE = {"string": "string", "bool": "boolean", "int32": "int32", "int64": "int64", "int": "integer",
             "float64": "double", "[]byte": "byte", "types.UID": "string", "metav1.Duration": "string",
             "types.NodeName": "string", "uint64": "int64"}
# The roots: kinds (with their Lists) and the meta types the paths name.
ROOTS = {
    "core/v1": ["Pod", "PodList", "Node", "NodeList", "Namespace", "NamespaceList", "Event", "EventList", "Binding",
                "ConfigMap", "ConfigMapList", "Secret", "SecretList", "ServiceAccount", "ServiceAccountList",
                "Service", "ServiceList", "PersistentVolumeClaim", "PersistentVolumeClaimList"],
    "resource/v1": ["DeviceClass", "DeviceClassList", "ResourceClaim", "ResourceClaimList", "ResourceClaimTemplate",
                    "ResourceClaimTemplateList", "ResourceSlice", "ResourceSliceList", "DeviceTaintRule",
                    "DeviceTaintRuleList"],
    "resource/v1beta1": ["DeviceClass", "DeviceClassList", "ResourceClaim", "ResourceClaimList",
                         "ResourceClaimTemplate", "ResourceClaimTemplateList", "ResourceSlice", "ResourceSliceList"],
    "resource/v1beta2": ["DeviceClass", "DeviceClassList", "ResourceClaim", "ResourceClaimList",
                         "ResourceClaimTemplate", "ResourceClaimTemplateList", "ResourceSlice", "ResourceSliceList"],
    "coordination/v1": ["Lease", "LeaseList"],
    "apps/v1": ["Deployment", "DeploymentList", "ReplicaSet", "ReplicaSetList", "StatefulSet", "StatefulSetList",
                "DaemonSet", "DaemonSetList"],
    "batch/v1": ["Job", "JobList"],
    "scheduling/v1": ["PriorityClass", "PriorityClassList"],
    "scheduling/v1beta1": ["Workload", "WorkloadList", "PodGroup", "PodGroupList"],
    "events/v1": ["Event", "EventList"],
    "meta/v1": ["Status", "DeleteOptions", "Patch", "WatchEvent", "APIResourceList"],
}


# Field docs missing from the generated swagger docs (meta/v1 watch.go has none).
DOC_OVERRIDES = {
    ("meta/v1", "WatchEvent"): {
        "": "Event represents a single event to a watched resource.",
        "type": "Type of the event: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.",
        "object": "Object is:\n * If Type is Added or Modified: the new state of the object.\n * If Type is Deleted: the "
                  "state of the object immediately before deletion.\n * If Type is Error: *Status is recommended; other "
                  "types may make sense\n   depending on context.",
    },
}


# Types newer than REF, read from a later ref of their package: package -> (ref, names).
# DeviceTaintRule went GA in resource.k8s.io/v1 with 1.37 (no release branch in the
# mirrors yet); the rest of resource/v1 stays at REF, whose fields the codec models.
LATER_TYPES = {
    "resource/v1": ("master", ["DeviceTaintRule", "DeviceTaintRuleList", "DeviceTaintRuleSpec",
                               "DeviceTaintSelector", "DeviceTaintRuleStatus"]),
    # Job's spec.scheduling (KEP-5547, 1.37 alpha, gate WorkloadWithJob): without
    # it kubectl's client-side validation refuses the Jobs the controller turns into gangs.
    "batch/v1": ("master", ["JobSpec", "JobSchedulingConfiguration"]),
}


# Packages read whole from a later ref: Workload and PodGroup are
# scheduling.k8s.io/v1beta1 from 1.37 (no release branch in the mirrors yet).
PACKAGE_REFS = {"scheduling/v1beta1": "master", "scheduling/v1alpha3": "master"}


def git_show(gitdir, path, ref=None):
    try:
        return subprocess.run(["git", "-C", gitdir, "show", f"{ref or REF}:{path}"], check=True,
                              capture_output=True, text=True).stdout
    except subprocess.CalledProcessError:
        return ""


def list_files(gitdir, path, ref=None):
    out = subprocess.run(["git", "-C", gitdir, "ls-tree", "--name-only", ref or REF, path + "/"], check=True,
                         capture_output=True, text=True).stdout.split()
    return [f for f in out if f.endswith(".go") and not f.endswith("_test.go") and "zz_generated" not in f
            and "generated.pb" not in f]


class Pkg:
    def __init__(self, key, ref=None):
        self.key = key
        gitdir, path, self.prefix = PACKAGES[key]
        self.structs = {}  # name -> (markers, [(goname, gotype, jsontag, markers)])
        self.aliases = {}  # name -> (gotype, markers)
        self.consts = {}  # type -> [values]
        self.docs = {}  # type -> {field: doc}
        for f in list_files(gitdir, path, ref):
            text = git_show(gitdir, f, ref)
            if f.endswith("types_swagger_doc_generated.go"):
                self.parse_docs(text)
            else:
                self.parse_types(text)
        if ref is None and key in LATER_TYPES:
            later_ref, names = LATER_TYPES[key]
            later = Pkg(key, later_ref)
            for name in names:
                self.structs[name] = later.structs[name]
                self.docs[name] = later.docs.get(name, {})

    def parse_docs(self, text):
        for m in re.finditer(r"var map_(\w+) = map\[string\]string\{\n(.*?)\n\}", text, re.S):
            d = {}
            for line in m.group(2).split("\n"):
                fm = re.match(r'\s*"([^"]*)":\s*(".*"),\s*$', line)
                if fm:
                    d[fm.group(1)] = eval(fm.group(2))  # a Go string literal is a Python one here
            self.docs[m.group(1)] = d

    def parse_types(self, text):
        lines = text.split("\n")
        i = 0
        comments = []
        in_const = False
        while i < len(lines):
            line = lines[i]
            s = line.strip()
            if s.startswith("//"):
                comments.append(s[2:].strip())
                i += 1
                continue
            m = re.match(r"type (\w+) struct\s*\{\s*\}", line)
            if m:
                self.structs[m.group(1)] = ([c for c in comments if c.startswith("+")], [])
                comments = []
                i += 1
                continue
            m = re.match(r"type (\w+) struct \{\s*$", line)
            if m:
                name = m.group(1)
                markers = [c for c in comments if c.startswith("+")]
                fields = []
                fcomments = []
                i += 1
                while i < len(lines) and not lines[i].startswith("}"):
                    fl = lines[i].strip()
                    if fl.startswith("//"):
                        fcomments.append(fl[2:].strip())
                    elif fl:
                        fm = re.match(r'^(?:(\w+)\s+)?([\w.\[\]*]+)\s+`json:"([^"]*)"', fl)
                        if fm:
                            fields.append((fm.group(1), fm.group(2), fm.group(3),
                                           [c for c in fcomments if c.startswith("+")]))
                        fcomments = []
                    else:
                        fcomments = []
                    i += 1
                self.structs[name] = (markers, fields)
                comments = []
                i += 1
                continue
            m = re.match(r"type (\w+) ([\w.\[\]*]+)\s*$", line)
            if m:
                self.aliases[m.group(1)] = (m.group(2), [c for c in comments if c.startswith("+")])
            if s.startswith("const ("):
                in_const = True
            elif in_const and s == ")":
                in_const = False
            elif in_const or s.startswith("const "):
                cm = re.match(r'(?:const )?\w+\s+(\w+)\s*=\s*"([^"]*)"', s)
                if cm:
                    self.consts.setdefault(cm.group(1), []).append(cm.group(2))
            comments = []
            i += 1


pkgs = {k: Pkg(k, PACKAGE_REFS.get(k)) for k in PACKAGES}
out_types = {}  # full name -> dict
queue = []


def want(pkgkey, name):
    full = pkgs[pkgkey].prefix + name
    if full not in out_types and (pkgkey, name) not in queue:
        queue.append((pkgkey, name))
    return full


def resolve(pkgkey, gotype, field_markers):
    """-> (type expression, enum values)"""
    t = gotype.lstrip("*")
    if t in PRIMITIVE:
        return PRIMITIVE[t], []
    if t.startswith("[]"):
        inner, enum = resolve(pkgkey, t[2:], [])
        return "[]" + inner, enum
    if t.startswith("map["):
        val = t[t.index("]") + 1:]
        inner, enum = resolve(pkgkey, val, [])
        return "map[]" + inner, enum
    if "." in t:
        alias, name = t.split(".", 1)
        if t in SPECIAL:
            return SPECIAL[t], []
        if alias in ALIASES:
            return resolve_named(ALIASES[alias], name)
        if t in ("metav1.Time",):
            return SPECIAL[t], []
        raise SystemExit(f"unknown type {t} in {pkgkey}")
    if pkgkey == "meta/v1" and "metav1." + t in SPECIAL:
        return SPECIAL["metav1." + t], []
    return resolve_named(pkgkey, t)


def resolve_named(pkgkey, name):
    p = pkgs[pkgkey]
    if name in p.structs:
        return want(pkgkey, name), []
    if name in p.aliases:
        base, markers = p.aliases[name]
        expr, _ = resolve(pkgkey, base, [])
        enum = sorted(set(p.consts.get(name, []))) if "+enum" in markers else []
        return expr, enum
    if pkgkey != "meta/v1" and "metav1." + name in SPECIAL:
        return SPECIAL["metav1." + name], []
    raise SystemExit(f"unknown type {name} in {pkgkey}")


def marker(markers, key):
    for m in markers:
        if m.startswith("+" + key + "="):
            return m.split("=", 1)[1]
    return ""


def emit_type(pkgkey, name):
    p = pkgs[pkgkey]
    markers, fields = p.structs[name]
    docs = p.docs.get(name, {}) or DOC_OVERRIDES.get((pkgkey, name), {})
    out = {"name": p.prefix + name, "description": docs.get("", ""), "fields": [],
           "map_type": "atomic" if "+structType=atomic" in markers or "+mapType=atomic" in markers else ""}
    for goname, gotype, tag, fmarkers in fields:
        jname, *opts = tag.split(",")
        if "inline" in opts or (goname is None and not jname):
            # Embedded struct: its fields are this one's (TypeMeta, ProbeHandler, VolumeSource ...).
            t = gotype.lstrip("*")
            if "." in t:
                alias, inner = t.split(".", 1)
                ipkg = ALIASES[alias]
            else:
                ipkg, inner = pkgkey, t
            sub = emit_type(ipkg, inner)
            out["fields"].extend(sub["fields"])
            continue
        if jname == "-" or not jname:
            continue
        expr, enum = resolve(pkgkey, gotype, fmarkers)
        optional = "+optional" in fmarkers or "omitempty" in opts or "omitzero" in opts
        required = "+required" in fmarkers or not optional
        out["fields"].append({
            "name": jname, "type": expr, "description": docs.get(jname, ""), "required": required,
            "enum": enum, "list_type": marker(fmarkers, "listType"),
            "list_map_keys": [marker([m], "listMapKey") for m in fmarkers if m.startswith("+listMapKey=")],
            "map_type": marker(fmarkers, "mapType"),
            "patch_strategy": marker(fmarkers, "patchStrategy"),
            "patch_merge_key": marker(fmarkers, "patchMergeKey"),
        })
    return out


for pkgkey, names in ROOTS.items():
    for n in names:
        want(pkgkey, n)
while queue:
    pkgkey, name = queue.pop(0)
    t = emit_type(pkgkey, name)
    out_types[t["name"]] = t
# KAI Scheduler's Queue, hand-written from its Go types (scripts/kai_queue_types.py).
sys.path.insert(0, __import__("os").path.dirname(__file__))
from kai_queue_types import TYPES as KAI_TYPES  # noqa: E402
for t in KAI_TYPES:
    out_types[t["name"]] = t


# One definition a line group, one field a line: reviewable diffs when upstream changes.
# Empty values are left out; the reader (openapi_types.cc) takes them as empty.
def field_json(f):
    out = {"name": f["name"], "type": f["type"], "description": f["description"]}
    if f["required"]:
        out["required"] = True
    for key, value in (("enum", f["enum"]), ("listType", f["list_type"]), ("listMapKeys", f["list_map_keys"]),
                       ("mapType", f["map_type"]), ("patchStrategy", f["patch_strategy"]),
                       ("patchMergeKey", f["patch_merge_key"])):
        if value:
            out[key] = value
    return json.dumps(out, ensure_ascii=False)


print("{")
print(f'"source": {json.dumps(f"k8s.io/api and k8s.io/apimachinery {REF}, by scripts/gen_openapi_types.py")},')
print('"definitions": [')
names = sorted(out_types)
for i, name in enumerate(names):
    t = out_types[name]
    head = {"name": name, "description": t["description"]}
    if t["map_type"]:
        head["mapType"] = t["map_type"]
    text = json.dumps(head, ensure_ascii=False)[:-1]
    if t["fields"]:
        text += ', "fields": [\n' + ",\n".join(field_json(f) for f in t["fields"]) + "\n]"
    print(text + "}" + ("," if i + 1 < len(names) else ""))
print("]")
print("}")
