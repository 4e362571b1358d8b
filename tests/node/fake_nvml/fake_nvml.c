/* A fake libnvidia-ml.so.1 for tests on machines without an NVIDIA GPU.
 *
 * It exports the NVML entry points draplane resolves (SPEC §4) with the real
 * ABI: the same symbol names, argument lists, struct layouts (including the
 * versioned structs and their NVML_STRUCT_VERSION checks) and return codes as
 * NVIDIA's nvml.h (driver 550+), written from the header's documentation. Its
 * data is one node with 8 H100 80GB HBM3 (SXM) GPUs, their MIG profiles and
 * placements as nvidia-smi lists them.
 *
 * Controlled through the environment, read at nvmlInit:
 *   FAKE_NVML_MIG=disabled|enabled|unsupported  initial MIG mode of every GPU
 *                                               (default disabled)
 *   FAKE_NVML_FABRIC=completed|inprogress|none  GPU fabric probe state (default
 *                                               completed: all GPUs in clique 1)
 *   FAKE_NVML_GPUS=N                            report N GPUs (1..8, default 8)
 *   FAKE_NVML_INIT_ERROR=CODE                   nvmlInit returns CODE
 *   FAKE_NVML_NO_EVENTS=1                       no event type is supported
 *   FAKE_NVML_LOG=FILE      every MIG-mode change and GPU/compute instance
 *                           create/destroy is appended as one line, e.g.
 *                           "nvmlDeviceCreateGpuInstanceWithPlacement gpu=0 profile=19 start=0 size=1 gi=1"
 *   FAKE_NVML_EVENTS=FILE   event queue: nvmlEventSetWait_v2 delivers each new
 *                           line "xid <gpu index> <code>" (for a GPU registered
 *                           in the set) or "lost" (returns NVML_ERROR_GPU_IS_LOST)
 *
 * Thread-safe: one mutex guards all state; nvmlEventSetWait_v2 sleeps without it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

/* ---- ABI (nvml.h) ---- */
typedef int nvmlReturn_t;
/* nvmlReturn_t values. */
enum {
  NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NOT_FOUND = 6, NVML_ERROR_INSUFFICIENT_SIZE = 7, NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10, NVML_ERROR_GPU_IS_LOST = 15, NVML_ERROR_IN_USE = 19,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23, NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25, NVML_ERROR_UNKNOWN = 999,
};
#define NVML_STRUCT_VERSION(type, ver) ((unsigned)(sizeof(type) | ((ver) << 24U)))

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st* nvmlComputeInstance_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
/* nvmlGpuInstanceProfileInfo_t; the _v2 form adds `version` first and `name` last. */
#define PROFILE_INFO_FIELDS           \
  unsigned int id;                    \
  unsigned int isP2pSupported;        \
  unsigned int sliceCount;            \
  unsigned int instanceCount;         \
  unsigned int multiprocessorCount;   \
  unsigned int copyEngineCount;       \
  unsigned int decoderCount;          \
  unsigned int encoderCount;          \
  unsigned int jpegCount;             \
  unsigned int ofaCount;              \
  unsigned long long memorySizeMB;
typedef struct {
  PROFILE_INFO_FIELDS
} nvmlGpuInstanceProfileInfo_t;
typedef struct {
  unsigned int version;
  PROFILE_INFO_FIELDS
  char name[96]; /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
} nvmlGpuInstanceProfileInfo_v2_t;
typedef struct { unsigned start, size; } nvmlGpuInstancePlacement_t;
typedef struct {
  nvmlDevice_t device;
  unsigned id, profileId;
  nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;
typedef struct {
  unsigned int id;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;
typedef struct {
  nvmlDevice_t device;
  nvmlGpuInstance_t gpuInstance;
  unsigned id, profileId;
  nvmlGpuInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;
/* nvmlGpuFabricInfo_t; _v2 adds `version` first and `healthMask` last, _v3 also
 * `healthSummary`. */
#define FABRIC_INFO_FIELDS            \
  unsigned char clusterUuid[16];      \
  nvmlReturn_t status;                \
  unsigned int cliqueId;              \
  unsigned char state; /* nvmlGpuFabricState_t */
typedef struct {
  FABRIC_INFO_FIELDS
} nvmlGpuFabricInfo_t;
typedef struct {
  unsigned int version;
  FABRIC_INFO_FIELDS
  unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;
typedef struct {
  unsigned int version;
  FABRIC_INFO_FIELDS
  unsigned int healthMask;
  unsigned char healthSummary;
} nvmlGpuFabricInfo_v3_t;
typedef struct { unsigned version, value; } nvmlDeviceAddressingMode_v1_t;
typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType, eventData;
  unsigned gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

#define kEventXid 0x8ULL
#define kEventsSupported (0x1ULL | 0x2ULL | kEventXid)

/* ---- the node's data ---- */
enum { kMaxGpus = 8, kMaxGi = 8, kMaxCi = 8, kProfileIndexCount = 0x12 };

typedef struct {
  int index; /* NVML_GPU_INSTANCE_PROFILE_* */
  unsigned id, slices, max, sm, ce, dec, jpeg, ofa;
  unsigned long long mib;
  const char* name;
  unsigned nstarts, size, starts[7];
} Profile;

/* H100 80GB HBM3 (SPEC §4 table; placements as nvidia-smi mig -lgipp prints them). */
static const Profile kProfiles[] = {
    {0x0, 19, 1, 7, 16, 1, 1, 1, 0, 9984, "MIG 1g.10gb", 7, 1, {0, 1, 2, 3, 4, 5, 6}},
    {0x1, 14, 2, 3, 32, 2, 2, 2, 0, 20096, "MIG 2g.20gb", 3, 2, {0, 2, 4}},
    {0x2, 9, 3, 2, 60, 3, 3, 3, 0, 40448, "MIG 3g.40gb", 2, 4, {0, 4}},
    {0x3, 5, 4, 1, 64, 4, 4, 4, 0, 40448, "MIG 4g.40gb", 1, 4, {0}},
    {0x4, 0, 7, 1, 132, 8, 7, 7, 1, 81152, "MIG 7g.80gb", 1, 8, {0}},
    {0x7, 20, 1, 1, 16, 1, 1, 1, 1, 9984, "MIG 1g.10gb+me", 7, 1, {0, 1, 2, 3, 4, 5, 6}},
    {0x9, 15, 1, 4, 26, 1, 1, 1, 0, 20096, "MIG 1g.20gb", 4, 2, {0, 2, 4, 6}},
};
enum { kNumProfiles = sizeof kProfiles / sizeof kProfiles[0] };

/* DGX H100 bus numbers; NUMA and PCIe root come from sysfs, not NVML. */
static const unsigned kBus[kMaxGpus] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};

struct nvmlComputeInstance_st {
  int used, gpu, gi, id;
  unsigned profile_id, start, size;
};
struct nvmlGpuInstance_st {
  int used, gpu, id;
  unsigned profile_id, start, size, slices;
  struct nvmlComputeInstance_st ci[kMaxCi];
};
struct nvmlDevice_st {
  int gpu;     /* index */
  int is_mig;  /* a MIG device handle: gi/ci name it */
  int gi, ci;
};
struct nvmlEventSet_st {
  unsigned long long registered[kMaxGpus];
  long offset; /* bytes of FAKE_NVML_EVENTS already delivered */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_init;  /* nvmlInit refcount */
static int g_gpus = kMaxGpus;
static int g_mig_mode[kMaxGpus]; /* -1 unsupported, 0, 1 */
static int g_fabric_state = 3;   /* NVML_GPU_FABRIC_STATE_*; -1 = not supported */
static int g_no_events;
static struct nvmlDevice_st g_dev[kMaxGpus];
static struct nvmlGpuInstance_st g_gi[kMaxGpus][kMaxGi];
static struct nvmlDevice_st g_mig_dev[kMaxGpus][kMaxGi][kMaxCi];

static void log_call(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_call(const char* fmt, ...) {
  const char* path = getenv("FAKE_NVML_LOG");
  if (path == NULL || *path == 0) return;
  FILE* f = fopen(path, "a");
  if (f == NULL) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fputc('\n', f);
  fclose(f);
}

static void init_state(void) {
  const char* n = getenv("FAKE_NVML_GPUS");
  g_gpus = n != NULL ? atoi(n) : kMaxGpus;
  if (g_gpus < 1 || g_gpus > kMaxGpus) g_gpus = kMaxGpus;
  const char* mig = getenv("FAKE_NVML_MIG");
  int mode = mig == NULL ? 0 : strcmp(mig, "enabled") == 0 ? 1 : strcmp(mig, "unsupported") == 0 ? -1 : 0;
  const char* fabric = getenv("FAKE_NVML_FABRIC");
  g_fabric_state = fabric == NULL ? 3 : strcmp(fabric, "none") == 0 ? -1 : strcmp(fabric, "inprogress") == 0 ? 2 : 3;
  const char* ev = getenv("FAKE_NVML_NO_EVENTS");
  g_no_events = ev != NULL && strcmp(ev, "1") == 0;
  memset(g_gi, 0, sizeof g_gi);
  for (int i = 0; i < kMaxGpus; ++i) {
    g_mig_mode[i] = mode;
    g_dev[i] = (struct nvmlDevice_st){.gpu = i};
  }
}

static nvmlReturn_t do_init(void) {
  const char* e = getenv("FAKE_NVML_INIT_ERROR");
  if (e != NULL && *e != 0) return atoi(e);
  pthread_mutex_lock(&g_mu);
  if (g_init++ == 0) init_state();
  pthread_mutex_unlock(&g_mu);
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlInit_v2(void) { return do_init(); }
EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned flags) {
  (void)flags;
  return do_init();
}
EXPORT nvmlReturn_t nvmlShutdown(void) {
  pthread_mutex_lock(&g_mu);
  nvmlReturn_t r = g_init > 0 ? (g_init--, NVML_SUCCESS) : NVML_ERROR_UNINITIALIZED;
  pthread_mutex_unlock(&g_mu);
  return r;
}

EXPORT const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_IN_USE: return "In use by another client";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient resources";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    default: return "Unknown Error";
  }
}

/* A valid full-GPU handle's index, or -1. */
static int gpu_of(nvmlDevice_t d) {
  if (g_init == 0 || d == NULL) return -1;
  for (int i = 0; i < g_gpus; ++i) {
    if (d == &g_dev[i]) return i;
  }
  return -1;
}
static int is_mig_handle(nvmlDevice_t d) {
  return g_init != 0 && d != NULL && (char*)d >= (char*)g_mig_dev && (char*)d < (char*)g_mig_dev + sizeof g_mig_dev;
}
#define GPU_OR_RETURN(i, d)                              \
  int i = gpu_of(d);                                     \
  if (g_init == 0) return NVML_ERROR_UNINITIALIZED;      \
  if (i < 0) return NVML_ERROR_INVALID_ARGUMENT;

static nvmlReturn_t copy_string(const char* s, char* buf, unsigned len) {
  if (buf == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (strlen(s) + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  memcpy(buf, s, strlen(s) + 1);
  return NVML_SUCCESS;
}

static void gpu_uuid(int i, char* out, size_t n) { snprintf(out, n, "GPU-4a7c2f0e-8d1b-4c3a-9e6f-5b2d0c1a%04x", i); }
static void mig_uuid(int i, int gi, int ci, char* out, size_t n) {
  snprintf(out, n, "MIG-6e1f3a2b-7c4d-5e8f-9a0b-%04x%04x%04x", i, gi, ci);
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length) {
  if (g_init == 0) return NVML_ERROR_UNINITIALIZED;
  return copy_string("550.54.15", version, length);
}
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* v) {
  if (v == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  *v = 12040;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  if (g_init == 0) return NVML_ERROR_UNINITIALIZED;
  if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  *count = (unsigned)g_gpus;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* d) {
  if (g_init == 0) return NVML_ERROR_UNINITIALIZED;
  if (d == NULL || index >= (unsigned)g_gpus) return NVML_ERROR_INVALID_ARGUMENT;
  *d = &g_dev[index];
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* d) {
  if (g_init == 0) return NVML_ERROR_UNINITIALIZED;
  if (uuid == NULL || d == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  char buf[96];
  for (int i = 0; i < g_gpus; ++i) {
    gpu_uuid(i, buf, sizeof buf);
    if (strcmp(buf, uuid) == 0) {
      *d = &g_dev[i];
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}
EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned* minor) {
  GPU_OR_RETURN(i, d);
  *minor = (unsigned)i;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned length) {
  char buf[96];
  if (is_mig_handle(d)) {
    mig_uuid(d->gpu, d->gi, d->ci, buf, sizeof buf);
    return copy_string(buf, uuid, length);
  }
  GPU_OR_RETURN(i, d);
  gpu_uuid(i, buf, sizeof buf);
  return copy_string(buf, uuid, length);
}
/* The answer of a constant per-GPU property, once the handle is checked. */
static nvmlReturn_t answer(nvmlDevice_t d, void* out, const void* value, size_t size) {
  if (g_init == 0) return NVML_ERROR_UNINITIALIZED;
  if (gpu_of(d) < 0 || out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  memcpy(out, value, size);
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned length) {
  return gpu_of(d) < 0 ? answer(d, NULL, NULL, 0) : copy_string("NVIDIA H100 80GB HBM3", name, length);
}
static const int kBrandNvidia = 14;       /* NVML_BRAND_NVIDIA */
static const unsigned kArchHopper = 9;    /* NVML_DEVICE_ARCH_HOPPER */
static const int kComputeCapability[2] = {9, 0};
EXPORT nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t d, int* brand) {
  return answer(d, brand, &kBrandNvidia, sizeof kBrandNvidia);
}
EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t d, unsigned* arch) {
  return answer(d, arch, &kArchHopper, sizeof kArchHopper);
}
EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int* major, int* minor) {
  nvmlReturn_t r = answer(d, major, &kComputeCapability[0], sizeof(int));
  return r == NVML_SUCCESS ? answer(d, minor, &kComputeCapability[1], sizeof(int)) : r;
}
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  GPU_OR_RETURN(i, d);
  (void)i;
  if (m == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  m->total = 81559ULL << 20;
  m->used = 554ULL << 20;
  m->free = m->total - m->used;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* p) {
  GPU_OR_RETURN(i, d);
  if (p == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  memset(p, 0, sizeof *p);
  p->domain = 0;
  p->bus = kBus[i];
  p->device = 0;
  p->pciDeviceId = 0x233010DE;
  p->pciSubSystemId = 0x16C110DE;
  snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", kBus[i]);
  snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", kBus[i]);
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetAddressingMode(nvmlDevice_t d, nvmlDeviceAddressingMode_v1_t* mode) {
  GPU_OR_RETURN(i, d);
  (void)i;
  if (mode == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (mode->version != NVML_STRUCT_VERSION(nvmlDeviceAddressingMode_v1_t, 1))
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  mode->value = 1; /* NVML_DEVICE_ADDRESSING_MODE_HMM */
  return NVML_SUCCESS;
}

/* Fabric: every GPU in clique 1 of one cluster (an NVSwitch system). */
static void fill_fabric(unsigned char uuid[16], nvmlReturn_t* status, unsigned* clique, unsigned char* state) {
  static const unsigned char kCluster[16] = {0x9b, 0x2e, 0x41, 0x7c, 0x10, 0x33, 0x4d, 0x5e,
                                             0x8f, 0x01, 0xa2, 0xb3, 0xc4, 0xd5, 0xe6, 0xf7};
  memcpy(uuid, kCluster, 16);
  *status = NVML_SUCCESS;
  *clique = 1;
  *state = (unsigned char)g_fabric_state;
  if (g_fabric_state != 3) {
    memset(uuid, 0, 16);
    *clique = 0;
  }
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, nvmlGpuFabricInfo_t* f) {
  GPU_OR_RETURN(i, d);
  (void)i;
  if (f == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (g_fabric_state < 0) return NVML_ERROR_NOT_SUPPORTED;
  fill_fabric(f->clusterUuid, &f->status, &f->cliqueId, &f->state);
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t d, nvmlGpuFabricInfo_v3_t* f) {
  GPU_OR_RETURN(i, d);
  (void)i;
  if (f == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  int v2 = f->version == NVML_STRUCT_VERSION(nvmlGpuFabricInfo_v2_t, 2);
  int v3 = f->version == NVML_STRUCT_VERSION(nvmlGpuFabricInfo_v3_t, 3);
  if (!v2 && !v3) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (g_fabric_state < 0) return NVML_ERROR_NOT_SUPPORTED;
  fill_fabric(f->clusterUuid, &f->status, &f->cliqueId, &f->state);
  f->healthMask = 0;
  if (v3) f->healthSummary = 1; /* NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY */
  return NVML_SUCCESS;
}

/* ---- MIG ---- */
static const Profile* profile_by_index(unsigned index) {
  for (int k = 0; k < kNumProfiles; ++k) {
    if ((unsigned)kProfiles[k].index == index) return &kProfiles[k];
  }
  return NULL;
}
static const Profile* profile_by_id(unsigned id) {
  for (int k = 0; k < kNumProfiles; ++k) {
    if (kProfiles[k].id == id) return &kProfiles[k];
  }
  return NULL;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned* current, unsigned* pending) {
  GPU_OR_RETURN(i, d);
  if (current == NULL || pending == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_mu);
  int mode = g_mig_mode[i];
  pthread_mutex_unlock(&g_mu);
  if (mode < 0) return NVML_ERROR_NOT_SUPPORTED;
  *current = *pending = (unsigned)mode;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceSetMigMode(nvmlDevice_t d, unsigned mode, nvmlReturn_t* activation) {
  GPU_OR_RETURN(i, d);
  if (activation == NULL || mode > 1) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_mu);
  nvmlReturn_t r = NVML_SUCCESS;
  if (g_mig_mode[i] < 0) {
    r = NVML_ERROR_NOT_SUPPORTED;
  } else {
    for (int g = 0; g < kMaxGi; ++g) {
      if (g_gi[i][g].used && mode == 0) r = NVML_ERROR_IN_USE; /* GPU instances still exist */
    }
  }
  if (r == NVML_SUCCESS) {
    g_mig_mode[i] = (int)mode;
    *activation = NVML_SUCCESS;
  }
  pthread_mutex_unlock(&g_mu);
  log_call("nvmlDeviceSetMigMode gpu=%d mode=%u ret=%d", i, mode, r);
  return r;
}

static void fill_profile(const Profile* p, unsigned* id, unsigned* p2p, unsigned* slices, unsigned* count,
                         unsigned* sm, unsigned* ce, unsigned* dec, unsigned* enc, unsigned* jpeg, unsigned* ofa,
                         unsigned long long* mib) {
  *id = p->id;
  *p2p = 0;
  *slices = p->slices;
  *count = p->max;
  *sm = p->sm;
  *ce = p->ce;
  *dec = p->dec;
  *enc = 0;
  *jpeg = p->jpeg;
  *ofa = p->ofa;
  *mib = p->mib;
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t d, unsigned profile,
                                                        nvmlGpuInstanceProfileInfo_t* info) {
  GPU_OR_RETURN(i, d);
  if (info == NULL || profile >= kProfileIndexCount) return NVML_ERROR_INVALID_ARGUMENT;
  const Profile* p = profile_by_index(profile);
  if (g_mig_mode[i] < 0 || p == NULL) return NVML_ERROR_NOT_SUPPORTED;
  fill_profile(p, &info->id, &info->isP2pSupported, &info->sliceCount, &info->instanceCount,
               &info->multiprocessorCount, &info->copyEngineCount, &info->decoderCount, &info->encoderCount,
               &info->jpegCount, &info->ofaCount, &info->memorySizeMB);
  return NVML_SUCCESS;
}
/* The versioned form answers only while MIG mode is enabled (nvml.h). */
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t d, unsigned profile,
                                                         nvmlGpuInstanceProfileInfo_v2_t* info) {
  GPU_OR_RETURN(i, d);
  if (info == NULL || profile >= kProfileIndexCount) return NVML_ERROR_INVALID_ARGUMENT;
  if (info->version != NVML_STRUCT_VERSION(nvmlGpuInstanceProfileInfo_v2_t, 2))
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  const Profile* p = profile_by_index(profile);
  if (g_mig_mode[i] != 1 || p == NULL) return NVML_ERROR_NOT_SUPPORTED;
  fill_profile(p, &info->id, &info->isP2pSupported, &info->sliceCount, &info->instanceCount,
               &info->multiprocessorCount, &info->copyEngineCount, &info->decoderCount, &info->encoderCount,
               &info->jpegCount, &info->ofaCount, &info->memorySizeMB);
  snprintf(info->name, sizeof info->name, "%s", p->name);
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t d, unsigned profile_id,
                                                                  nvmlGpuInstancePlacement_t* placements,
                                                                  unsigned* count) {
  GPU_OR_RETURN(i, d);
  if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  const Profile* p = profile_by_id(profile_id);
  if (g_mig_mode[i] < 0 || p == NULL) return NVML_ERROR_NOT_SUPPORTED;
  if (placements == NULL) {
    *count = p->nstarts;
    return NVML_SUCCESS;
  }
  if (*count < p->nstarts) {
    *count = p->nstarts;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned k = 0; k < p->nstarts; ++k) placements[k] = (nvmlGpuInstancePlacement_t){p->starts[k], p->size};
  *count = p->nstarts;
  return NVML_SUCCESS;
}

static int overlaps(unsigned a, unsigned an, unsigned b, unsigned bn) { return a < b + bn && b < a + an; }

EXPORT nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t d, unsigned profile_id,
                                                             const nvmlGpuInstancePlacement_t* placement,
                                                             nvmlGpuInstance_t* out) {
  GPU_OR_RETURN(i, d);
  if (placement == NULL || out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  const Profile* p = profile_by_id(profile_id);
  nvmlReturn_t r = NVML_SUCCESS;
  int slot = -1;
  pthread_mutex_lock(&g_mu);
  if (g_mig_mode[i] != 1 || p == NULL) r = NVML_ERROR_NOT_SUPPORTED;
  int valid = 0;
  for (unsigned k = 0; r == NVML_SUCCESS && k < p->nstarts; ++k) {
    valid |= p->starts[k] == placement->start && p->size == placement->size;
  }
  if (r == NVML_SUCCESS && !valid) r = NVML_ERROR_INVALID_ARGUMENT;
  int same = 0;
  for (int g = 0; r == NVML_SUCCESS && g < kMaxGi; ++g) {
    struct nvmlGpuInstance_st* e = &g_gi[i][g];
    if (!e->used) {
      if (slot < 0) slot = g;
      continue;
    }
    if (overlaps(e->start, e->size, placement->start, placement->size)) r = NVML_ERROR_INSUFFICIENT_RESOURCES;
    same += e->profile_id == profile_id;
  }
  if (r == NVML_SUCCESS && (slot < 0 || same >= (int)p->max)) r = NVML_ERROR_INSUFFICIENT_RESOURCES;
  if (r == NVML_SUCCESS) {
    struct nvmlGpuInstance_st* gi = &g_gi[i][slot];
    memset(gi, 0, sizeof *gi);
    *gi = (struct nvmlGpuInstance_st){.used = 1, .gpu = i, .id = slot + 1, .profile_id = profile_id,
                                      .start = placement->start, .size = placement->size, .slices = p->slices};
    *out = gi;
  }
  pthread_mutex_unlock(&g_mu);
  log_call("nvmlDeviceCreateGpuInstanceWithPlacement gpu=%d profile=%u start=%u size=%u ret=%d gi=%d", i, profile_id,
           placement->start, placement->size, r, r == NVML_SUCCESS ? slot + 1 : -1);
  return r;
}

static struct nvmlGpuInstance_st* gi_of(nvmlGpuInstance_t gi) {
  if (g_init == 0 || gi == NULL) return NULL;
  if ((char*)gi < (char*)g_gi || (char*)gi >= (char*)g_gi + sizeof g_gi || !gi->used) return NULL;
  return gi;
}
static struct nvmlComputeInstance_st* ci_of(nvmlComputeInstance_t ci) {
  if (g_init == 0 || ci == NULL) return NULL;
  if ((char*)ci < (char*)g_gi || (char*)ci >= (char*)g_gi + sizeof g_gi || !ci->used) return NULL;
  return ci;
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t d, unsigned id, nvmlGpuInstance_t* out) {
  GPU_OR_RETURN(i, d);
  if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_mu);
  nvmlReturn_t r = g_mig_mode[i] != 1 ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_NOT_FOUND;
  for (int g = 0; r == NVML_ERROR_NOT_FOUND && g < kMaxGi; ++g) {
    if (g_gi[i][g].used && g_gi[i][g].id == (int)id) {
      *out = &g_gi[i][g];
      r = NVML_SUCCESS;
    }
  }
  pthread_mutex_unlock(&g_mu);
  return r;
}
EXPORT nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t* info) {
  pthread_mutex_lock(&g_mu);
  struct nvmlGpuInstance_st* g = gi_of(gi);
  if (g != NULL && info != NULL) {
    *info = (nvmlGpuInstanceInfo_t){&g_dev[g->gpu], (unsigned)g->id, g->profile_id, {g->start, g->size}};
  }
  pthread_mutex_unlock(&g_mu);
  return g != NULL && info != NULL ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}
/* Compute-instance profile index k spans slices {1,2,3,4,7,8,6}[k]; ids equal indices. */
static const unsigned kCiSlices[] = {1, 2, 3, 4, 7, 8, 6, 1};
EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gi, unsigned profile,
                                                                 unsigned eng_profile,
                                                                 nvmlComputeInstanceProfileInfo_t* info) {
  pthread_mutex_lock(&g_mu);
  struct nvmlGpuInstance_st* g = gi_of(gi);
  nvmlReturn_t r = NVML_SUCCESS;
  if (g == NULL || info == NULL || profile >= 9 || eng_profile != 0) {
    r = NVML_ERROR_INVALID_ARGUMENT;
  } else if (profile > 7 || kCiSlices[profile] > g->slices || profile == 7) {
    r = NVML_ERROR_NOT_SUPPORTED;
  } else {
    const Profile* p = profile_by_id(g->profile_id);
    unsigned s = kCiSlices[profile];
    *info = (nvmlComputeInstanceProfileInfo_t){profile, s, g->slices / s, p->sm * s / g->slices, p->ce, p->dec, 0,
                                               p->jpeg, p->ofa};
  }
  pthread_mutex_unlock(&g_mu);
  return r;
}
EXPORT nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gi, unsigned profile_id,
                                                         nvmlComputeInstance_t* out) {
  pthread_mutex_lock(&g_mu);
  struct nvmlGpuInstance_st* g = gi_of(gi);
  nvmlReturn_t r = NVML_SUCCESS;
  int slot = -1, gpu = -1, gid = -1;
  unsigned used = 0;
  if (g == NULL || out == NULL || profile_id >= 7) {
    r = NVML_ERROR_INVALID_ARGUMENT;
  } else {
    gpu = g->gpu;
    gid = g->id;
    for (int c = 0; c < kMaxCi; ++c) {
      if (g->ci[c].used) used += g->ci[c].size;
      else if (slot < 0) slot = c;
    }
    if (slot < 0 || used + kCiSlices[profile_id] > g->slices) r = NVML_ERROR_INSUFFICIENT_RESOURCES;
  }
  if (r == NVML_SUCCESS) {
    g->ci[slot] = (struct nvmlComputeInstance_st){.used = 1, .gpu = g->gpu, .gi = g->id, .id = slot,
                                                  .profile_id = profile_id, .start = used,
                                                  .size = kCiSlices[profile_id]};
    *out = &g->ci[slot];
  }
  pthread_mutex_unlock(&g_mu);
  log_call("nvmlGpuInstanceCreateComputeInstance gpu=%d gi=%d profile=%u ret=%d ci=%d", gpu, gid, profile_id, r,
           r == NVML_SUCCESS ? slot : -1);
  return r;
}
EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstanceById(nvmlGpuInstance_t gi, unsigned id,
                                                          nvmlComputeInstance_t* out) {
  if (out == NULL || id >= kMaxCi) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_mu);
  struct nvmlGpuInstance_st* g = gi_of(gi);
  struct nvmlComputeInstance_st* c = g != NULL && g->ci[id].used ? &g->ci[id] : NULL;
  pthread_mutex_unlock(&g_mu);
  if (g == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (c != NULL) *out = c;
  return c != NULL ? NVML_SUCCESS : NVML_ERROR_NOT_FOUND;
}
EXPORT nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t ci, nvmlComputeInstanceInfo_t* info) {
  if (info == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_mu);
  struct nvmlComputeInstance_st* c = ci_of(ci);
  nvmlComputeInstanceInfo_t copy = {0};
  if (c != NULL) {
    copy.device = &g_dev[c->gpu];
    copy.gpuInstance = &g_gi[c->gpu][c->gi - 1]; /* GI ids are slot + 1 */
    copy.id = (unsigned)c->id;
    copy.profileId = c->profile_id;
    copy.placement = (nvmlGpuInstancePlacement_t){c->start, c->size};
  }
  pthread_mutex_unlock(&g_mu);
  if (c == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  *info = copy;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t ci) {
  pthread_mutex_lock(&g_mu);
  struct nvmlComputeInstance_st* c = ci_of(ci);
  int gpu = c != NULL ? c->gpu : -1, gi = c != NULL ? c->gi : -1, id = c != NULL ? c->id : -1;
  if (c != NULL) c->used = 0;
  pthread_mutex_unlock(&g_mu);
  nvmlReturn_t r = c != NULL ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
  log_call("nvmlComputeInstanceDestroy gpu=%d gi=%d ci=%d ret=%d", gpu, gi, id, r);
  return r;
}
EXPORT nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gi) {
  pthread_mutex_lock(&g_mu);
  struct nvmlGpuInstance_st* g = gi_of(gi);
  nvmlReturn_t r = g != NULL ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
  int gpu = g != NULL ? g->gpu : -1, id = g != NULL ? g->id : -1;
  for (int c = 0; g != NULL && c < kMaxCi; ++c) {
    if (g->ci[c].used) r = NVML_ERROR_IN_USE; /* compute instances must go first */
  }
  if (r == NVML_SUCCESS) g->used = 0;
  pthread_mutex_unlock(&g_mu);
  log_call("nvmlGpuInstanceDestroy gpu=%d gi=%d ret=%d", gpu, id, r);
  return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned* count) {
  GPU_OR_RETURN(i, d);
  if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (g_mig_mode[i] < 0) return NVML_ERROR_NOT_SUPPORTED;
  *count = 7;
  return NVML_SUCCESS;
}
/* MIG devices in GPU-instance, then compute-instance order. */
EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned index, nvmlDevice_t* out) {
  GPU_OR_RETURN(i, d);
  if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_mu);
  nvmlReturn_t r = NVML_ERROR_NOT_FOUND;
  unsigned n = 0;
  for (int g = 0; g < kMaxGi && r != NVML_SUCCESS; ++g) {
    for (int c = 0; g_gi[i][g].used && c < kMaxCi && r != NVML_SUCCESS; ++c) {
      if (!g_gi[i][g].ci[c].used || n++ != index) continue;
      struct nvmlDevice_st* m = &g_mig_dev[i][g][c];
      *m = (struct nvmlDevice_st){.gpu = i, .is_mig = 1, .gi = g_gi[i][g].id, .ci = c};
      *out = m;
      r = NVML_SUCCESS;
    }
  }
  pthread_mutex_unlock(&g_mu);
  return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned* id) {
  if (!is_mig_handle(d) || id == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  *id = (unsigned)d->gi;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned* id) {
  if (!is_mig_handle(d) || id == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  *id = (unsigned)d->ci;
  return NVML_SUCCESS;
}

/* ---- events ---- */
EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  if (g_init == 0) return NVML_ERROR_UNINITIALIZED;
  if (set == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  *set = calloc(1, sizeof(struct nvmlEventSet_st));
  return *set != NULL ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}
EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  if (set == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  free(set);
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long* types) {
  GPU_OR_RETURN(i, d);
  (void)i;
  if (types == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  *types = g_no_events ? 0 : kEventsSupported;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set) {
  GPU_OR_RETURN(i, d);
  if (set == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (g_no_events || (types & ~kEventsSupported) != 0) return NVML_ERROR_NOT_SUPPORTED;
  pthread_mutex_lock(&g_mu);
  set->registered[i] |= types;
  pthread_mutex_unlock(&g_mu);
  return NVML_SUCCESS;
}

/* Reads the next complete line of FAKE_NVML_EVENTS after set->offset.
 * Returns 1 with the line, 0 when there is none yet. */
static int next_event_line(nvmlEventSet_t set, char* line, size_t n) {
  const char* path = getenv("FAKE_NVML_EVENTS");
  if (path == NULL || *path == 0) return 0;
  FILE* f = fopen(path, "r");
  if (f == NULL) return 0;
  int got = 0;
  if (fseek(f, set->offset, SEEK_SET) == 0 && fgets(line, (int)n, f) != NULL) {
    size_t len = strlen(line);
    if (len > 0 && line[len - 1] == '\n') { /* a line still being written waits */
      set->offset += (long)len;
      got = 1;
    }
  }
  fclose(f);
  return got;
}

EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned timeout_ms) {
  if (g_init == 0) return NVML_ERROR_UNINITIALIZED;
  if (set == NULL || data == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    char line[128];
    while (next_event_line(set, line, sizeof line)) {
      if (strncmp(line, "lost", 4) == 0) return NVML_ERROR_GPU_IS_LOST;
      int gpu = -1;
      unsigned long long xid = 0;
      if (sscanf(line, "xid %d %llu", &gpu, &xid) != 2 || gpu < 0 || gpu >= g_gpus) continue;
      pthread_mutex_lock(&g_mu);
      int wanted = (set->registered[gpu] & kEventXid) != 0;
      pthread_mutex_unlock(&g_mu);
      if (!wanted) continue;
      *data = (nvmlEventData_t){&g_dev[gpu], kEventXid, xid, 0xFFFFFFFFu, 0xFFFFFFFFu};
      return NVML_SUCCESS;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (elapsed >= (long)timeout_ms) return NVML_ERROR_TIMEOUT;
    struct timespec nap = {0, 5 * 1000 * 1000};
    nanosleep(&nap, NULL);
  }
}
