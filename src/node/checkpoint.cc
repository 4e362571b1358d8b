#include "node/checkpoint.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_EXCHANGE
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace draplane::node {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;
using rapidjson::Value;

void key_str(Writer& w, const char* k, const std::string& v) {
  w.Key(k);
  w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
}
void key_int(Writer& w, const char* k, int64_t v) {
  w.Key(k);
  w.Int64(v);
}

// True when `path` was last modified before the machine booted (the boot time
// is /proc/stat's btime, in whole seconds: a file written in the boot's first
// second counts as of this boot).
bool written_before_boot(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  std::ifstream in("/proc/stat");
  std::string key;
  long long btime = 0;
  while (in >> key) {
    if (key == "btime") {
      in >> btime;
      break;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return btime > 0 && static_cast<long long>(st.st_mtime) < btime;
}
void str_list(Writer& w, const char* k, const std::vector<std::string>& v) {
  w.Key(k);
  w.StartArray();
  for (const auto& s : v) w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  w.EndArray();
}

void write_mig(Writer& w, const MigInstance& m) {
  w.StartObject();
  key_str(w, "parentUUID", m.parent_uuid);
  key_int(w, "parentMinor", m.parent_minor);
  key_int(w, "profileID", m.profile_id);
  key_int(w, "placementStart", m.placement.start);
  key_int(w, "placementSize", m.placement.size);
  key_int(w, "giID", m.gi_id);
  key_int(w, "ciID", m.ci_id);
  key_str(w, "uuid", m.uuid);
  w.EndObject();
}

void write_sharing(Writer& w, const AppliedSharing& s) {
  w.StartObject();
  key_str(w, "strategy", s.strategy);
  if (!s.interval.empty()) key_str(w, "interval", s.interval);
  if (s.pinned_memory_limit_mib) key_int(w, "pinnedMemoryLimitMiB", *s.pinned_memory_limit_mib);
  if (s.active_thread_percentage) key_int(w, "activeThreadPercentage", *s.active_thread_percentage);
  w.EndObject();
}

Status bad(const std::string& path, const char* want) {
  return internal_error(fmt::format("checkpoint: {}: expected {}", path, want));
}

Result<std::string> get_str(const Value& o, const char* k, const std::string& path) {
  if (!o.HasMember(k) || !o[k].IsString()) return bad(path + "." + k, "string");
  return std::string(o[k].GetString(), o[k].GetStringLength());
}
Result<int> get_int(const Value& o, const char* k, const std::string& path) {
  if (!o.HasMember(k) || !o[k].IsInt()) return bad(path + "." + k, "integer");
  return o[k].GetInt();
}
Result<std::vector<std::string>> get_list(const Value& o, const char* k, const std::string& path) {
  std::vector<std::string> out;
  if (!o.HasMember(k)) return out;
  if (!o[k].IsArray()) return bad(path + "." + k, "array");
  for (const auto& v : o[k].GetArray()) {
    if (!v.IsString()) return bad(path + "." + k, "array of strings");
    out.emplace_back(v.GetString(), v.GetStringLength());
  }
  return out;
}

Result<int64_t> get_int64(const Value& o, const char* k, const std::string& path) {
  if (!o.HasMember(k) || !o[k].IsInt64()) return bad(path + "." + k, "integer");
  return o[k].GetInt64();
}

Result<AppliedSharing> read_sharing(const Value& o, const std::string& path) {
  if (!o.IsObject()) return bad(path, "object");
  AppliedSharing s;
  ASSIGN_OR_RETURN(s.strategy, get_str(o, "strategy", path));
  if (o.HasMember("interval")) {
    ASSIGN_OR_RETURN(s.interval, get_str(o, "interval", path));
  }
  if (o.HasMember("pinnedMemoryLimitMiB")) {
    ASSIGN_OR_RETURN(s.pinned_memory_limit_mib, get_int64(o, "pinnedMemoryLimitMiB", path));
  }
  if (o.HasMember("activeThreadPercentage")) {
    ASSIGN_OR_RETURN(s.active_thread_percentage, get_int64(o, "activeThreadPercentage", path));
  }
  return s;
}

Result<std::map<std::string, api::Quantity>> read_capacity(const Value& o, const std::string& path) {
  if (!o.IsObject()) return bad(path, "object");
  std::map<std::string, api::Quantity> out;
  for (auto it = o.MemberBegin(); it != o.MemberEnd(); ++it) {
    std::string name(it->name.GetString(), it->name.GetStringLength());
    std::string p = path + "." + name;
    if (!it->value.IsString()) return bad(p, "quantity string");
    auto q = api::Quantity::parse(std::string_view(it->value.GetString(), it->value.GetStringLength()));
    if (!q) return bad(p, "quantity string");
    out.emplace(std::move(name), *q);
  }
  return out;
}

Result<MigInstance> read_mig(const Value& o, const std::string& path) {
  if (!o.IsObject()) return bad(path, "object");
  MigInstance m;
  ASSIGN_OR_RETURN(m.parent_uuid, get_str(o, "parentUUID", path));
  ASSIGN_OR_RETURN(m.parent_minor, get_int(o, "parentMinor", path));
  ASSIGN_OR_RETURN(m.profile_id, get_int(o, "profileID", path));
  ASSIGN_OR_RETURN(m.placement.start, get_int(o, "placementStart", path));
  ASSIGN_OR_RETURN(m.placement.size, get_int(o, "placementSize", path));
  ASSIGN_OR_RETURN(m.gi_id, get_int(o, "giID", path));
  ASSIGN_OR_RETURN(m.ci_id, get_int(o, "ciID", path));
  ASSIGN_OR_RETURN(m.uuid, get_str(o, "uuid", path));
  return m;
}

Result<PreparedDevice> read_device(const Value& o, const std::string& path) {
  if (!o.IsObject()) return bad(path, "object");
  PreparedDevice d;
  ASSIGN_OR_RETURN(d.requests, get_list(o, "requests", path));
  ASSIGN_OR_RETURN(d.pool, get_str(o, "pool", path));
  ASSIGN_OR_RETURN(d.device, get_str(o, "device", path));
  if (o.HasMember("shareID")) {
    ASSIGN_OR_RETURN(d.share_id, get_str(o, "shareID", path));
  }
  if (o.HasMember("consumedCapacity")) {
    ASSIGN_OR_RETURN(d.consumed_capacity, read_capacity(o["consumedCapacity"], path + ".consumedCapacity"));
  }
  ASSIGN_OR_RETURN(d.cdi_device_ids, get_list(o, "cdiDeviceIDs", path));
  if (o.HasMember("uuid")) {
    ASSIGN_OR_RETURN(d.uuid, get_str(o, "uuid", path));
  }
  if (o.HasMember("mig")) {
    ASSIGN_OR_RETURN(d.mig, read_mig(o["mig"], path + ".mig"));
  }
  if (o.HasMember("sharing")) {
    ASSIGN_OR_RETURN(d.sharing, read_sharing(o["sharing"], path + ".sharing"));
  }
  return d;
}

Status sys_error(const std::string& what, const std::string& path) {
  return internal_error(fmt::format("{} {}: {}", what, path, std::strerror(errno)));
}

}  // namespace

std::string encode_checkpoint(const Checkpoint& c) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  key_int(w, "version", kCheckpointVersion);
  key_str(w, "bootID", c.boot_id);
  w.Key("claims");
  w.StartObject();
  for (const auto& [uid, claim] : c.claims) {
    w.Key(uid.c_str(), static_cast<rapidjson::SizeType>(uid.size()));
    w.StartObject();
    key_str(w, "namespace", claim.namespace_);
    key_str(w, "name", claim.name);
    key_str(w, "state", claim.state == PrepareState::kPrepareCompleted ? "PrepareCompleted" : "PrepareStarted");
    if (claim.mps_pipe_dir) key_str(w, "mpsPipeDir", *claim.mps_pipe_dir);
    w.Key("devices");
    w.StartArray();
    for (const PreparedDevice& d : claim.devices) {
      w.StartObject();
      str_list(w, "requests", d.requests);
      key_str(w, "pool", d.pool);
      key_str(w, "device", d.device);
      if (d.share_id) key_str(w, "shareID", *d.share_id);
      if (!d.consumed_capacity.empty()) {
        w.Key("consumedCapacity");
        w.StartObject();
        for (const auto& [name, q] : d.consumed_capacity) key_str(w, name.c_str(), q.to_string());
        w.EndObject();
      }
      str_list(w, "cdiDeviceIDs", d.cdi_device_ids);
      if (!d.uuid.empty()) key_str(w, "uuid", d.uuid);
      if (d.mig) {
        w.Key("mig");
        write_mig(w, *d.mig);
      }
      if (d.sharing) {
        w.Key("sharing");
        write_sharing(w, *d.sharing);
      }
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

Result<Checkpoint> decode_checkpoint(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return internal_error("checkpoint: not a JSON object");
  if (!doc.HasMember("version") || !doc["version"].IsInt()) return bad("version", "integer");
  int version = doc["version"].GetInt();
  if (version != kCheckpointVersion) {
    return Status(Code::kFailedPrecondition,
                  fmt::format("checkpoint: version {} is not supported by this draplane (want {})", version,
                              kCheckpointVersion));
  }
  Checkpoint c;
  ASSIGN_OR_RETURN(c.boot_id, get_str(doc, "bootID", ""));
  if (!doc.HasMember("claims") || !doc["claims"].IsObject()) return bad("claims", "object");
  for (auto it = doc["claims"].MemberBegin(); it != doc["claims"].MemberEnd(); ++it) {
    std::string uid(it->name.GetString(), it->name.GetStringLength());
    std::string path = "claims." + uid;
    const Value& o = it->value;
    if (!o.IsObject()) return bad(path, "object");
    PreparedClaim claim;
    ASSIGN_OR_RETURN(claim.namespace_, get_str(o, "namespace", path));
    ASSIGN_OR_RETURN(claim.name, get_str(o, "name", path));
    ASSIGN_OR_RETURN(std::string state, get_str(o, "state", path));
    if (state == "PrepareCompleted") {
      claim.state = PrepareState::kPrepareCompleted;
    } else if (state == "PrepareStarted") {
      claim.state = PrepareState::kPrepareStarted;
    } else {
      return internal_error(fmt::format("checkpoint: {}.state: unknown state \"{}\"", path, state));
    }
    if (o.HasMember("mpsPipeDir")) {
      ASSIGN_OR_RETURN(claim.mps_pipe_dir, get_str(o, "mpsPipeDir", path));
    }
    if (!o.HasMember("devices") || !o["devices"].IsArray()) return bad(path + ".devices", "array");
    const auto& devices = o["devices"].GetArray();
    for (rapidjson::SizeType i = 0; i < devices.Size(); ++i) {
      ASSIGN_OR_RETURN(PreparedDevice d, read_device(devices[i], fmt::format("{}.devices[{}]", path, i)));
      claim.devices.push_back(std::move(d));
    }
    c.claims.emplace(uid, std::move(claim));
  }
  return c;
}

std::string encode_process_record(const ProcessRecord& r) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  key_str(w, "bootID", r.boot_id);
  key_int(w, "pid", r.pid);
  w.Key("startTime");
  w.Uint64(r.start_time);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

Result<ProcessRecord> decode_process_record(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return internal_error("process record: not a JSON object");
  auto wrong = [](const char* field, const char* want) {
    return internal_error(fmt::format("process record: {}: expected {}", field, want));
  };
  ProcessRecord r;
  if (!doc.HasMember("bootID") || !doc["bootID"].IsString()) return wrong("bootID", "string");
  r.boot_id = doc["bootID"].GetString();
  if (!doc.HasMember("pid") || !doc["pid"].IsInt() || doc["pid"].GetInt() <= 0) return wrong("pid", "positive integer");
  r.pid = doc["pid"].GetInt();
  if (!doc.HasMember("startTime") || !doc["startTime"].IsUint64()) return wrong("startTime", "unsigned integer");
  r.start_time = doc["startTime"].GetUint64();
  return r;
}

CheckpointFile::CheckpointFile(std::string path, std::string boot_id)
    : path_(std::move(path)), boot_id_(std::move(boot_id)) {}

Result<Checkpoint> CheckpointFile::load() const {
  Checkpoint empty;
  empty.boot_id = boot_id_;
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return empty;
  std::ifstream in(path_);
  if (!in) return internal_error(fmt::format("checkpoint {}: cannot be read", path_));
  std::stringstream ss;
  ss << in.rdbuf();
  auto c = decode_checkpoint(ss.str());
  if (!c) {
    if (written_before_boot(path_)) return empty;
    return Status(c.error().code(), fmt::format("{}: {}", path_, c.error().message()));
  }
  // After a reboot nothing that was prepared exists any more.
  if (c->boot_id != boot_id_) return empty;
  return c;
}

Status CheckpointFile::save(const Checkpoint& checkpoint) const {
  Checkpoint c = checkpoint;
  c.boot_id = boot_id_;
  return rewrite_file_atomic(path_, encode_checkpoint(c), FileSync::kUntilReboot);
}

std::string read_boot_id(const std::string& proc_root) {
  std::ifstream in(proc_root + "/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

namespace {

void make_parent_dirs(const std::string& path) {
  std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
}

// Writes all of `data` to `fd` from offset 0 and cuts the file there; closes
// fd (after an fsync with kDurable) in any case.
Status write_whole_file(int fd, const std::string& name, std::string_view data, FileSync sync) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::pwrite(fd, data.data() + off, data.size() - off, static_cast<off_t>(off));
    if (n < 0) {
      if (errno == EINTR) continue;
      Status st = sys_error("write", name);
      ::close(fd);
      return st;
    }
    off += static_cast<size_t>(n);
  }
  if (::ftruncate(fd, static_cast<off_t>(data.size())) != 0) {
    Status st = sys_error("ftruncate", name);
    ::close(fd);
    return st;
  }
  if (sync == FileSync::kDurable && ::fsync(fd) != 0) {
    Status st = sys_error("fsync", name);
    ::close(fd);
    return st;
  }
  if (::close(fd) != 0) return sys_error("close", name);
  return {};
}

// Makes a rename in the directory of `path` durable.
void sync_parent_dir(const std::string& path) {
  std::filesystem::path p(path);
  std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

Status write_file_atomic(const std::string& path, std::string_view data, FileSync sync) {
  make_parent_dirs(path);
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return sys_error("open", tmp);
  if (Status st = write_whole_file(fd, tmp, data, sync); !st.ok()) return st;
  if (::rename(tmp.c_str(), path.c_str()) != 0) return sys_error("rename", tmp);
  if (sync == FileSync::kDurable) sync_parent_dir(path);
  return {};
}

Status rewrite_file_atomic(const std::string& path, std::string_view data, FileSync sync) {
  make_parent_dirs(path);
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return sys_error("open", tmp);
  if (Status st = write_whole_file(fd, tmp, data, sync); !st.ok()) return st;
  // Both names stay: <path> gets the new inode's content, <path>.tmp the old
  // (rewritten in place next time). ENOENT: the first write (no <path> yet);
  // EINVAL/ENOSYS: a file system or kernel without RENAME_EXCHANGE.
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) != 0) {
    if (errno != ENOENT && errno != EINVAL && errno != ENOSYS) return sys_error("renameat2", tmp);
    if (::rename(tmp.c_str(), path.c_str()) != 0) return sys_error("rename", tmp);
  }
  if (sync == FileSync::kDurable) sync_parent_dir(path);
  return {};
}

}  // namespace draplane::node
