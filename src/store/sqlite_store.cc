#include "store/sqlite_store.h"

#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "store/internal/watch_hub.h"

namespace draplane::store {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS kv (
  rev INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  created INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  create_rev INTEGER NOT NULL,
  prev_rev INTEGER NOT NULL,
  version INTEGER NOT NULL,
  value BLOB,
  old_value BLOB);
CREATE INDEX IF NOT EXISTS kv_name_rev ON kv (name, rev);
CREATE UNIQUE INDEX IF NOT EXISTS kv_name_prev_rev ON kv (name, prev_rev);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'kv', 1 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'kv');
)sql";

#define DRAPLANE_KV_COLS "rev, name, created, deleted, create_rev, prev_rev, version, value, old_value"
constexpr const char* kCols = DRAPLANE_KV_COLS;
constexpr const char* kGetRow = "SELECT " DRAPLANE_KV_COLS " FROM kv WHERE name = ?1 AND rev <= ?2 ORDER BY rev DESC LIMIT 1";
constexpr const char* kCurrentRow = "SELECT " DRAPLANE_KV_COLS " FROM kv WHERE name = ?1 ORDER BY rev DESC LIMIT 1";
// The revision is given (the batch knows the next one), so a created row carries
// its own create_rev without a second statement. AUTOINCREMENT's sequence follows
// explicit ids, so a revision is still never reused.
constexpr const char* kInsertRow =
    "INSERT INTO kv (rev, name, created, deleted, create_rev, prev_rev, version, value, old_value)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
#undef DRAPLANE_KV_COLS

// A prepared statement: either compiled for one use and finalized on scope exit,
// or borrowed from a connection's cache (Cached) and only reset on scope exit, so
// the hot statements are compiled once (compiling was a third of a create's CPU).
// Columns follow kCols.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) { rc_ = sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr); }
  struct Borrow {};
  Stmt(Borrow, sqlite3_stmt* s) : s_(s), owned_(false), rc_(s ? SQLITE_OK : SQLITE_ERROR) {}
  ~Stmt() {
    if (owned_) {
      sqlite3_finalize(s_);
    } else if (s_) {
      sqlite3_reset(s_);
      sqlite3_clear_bindings(s_);
    }
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  void bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
  void bind(int i, std::string_view v) { sqlite3_bind_blob(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  void bind_text(int i, std::string_view v) { sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  int step() { return sqlite3_step(s_); }
  int64_t i64(int c) { return sqlite3_column_int64(s_, c); }
  std::string str(int c) {
    const void* p = sqlite3_column_blob(s_, c);
    return p ? std::string(static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(s_, c))) : std::string();
  }

 private:
  sqlite3_stmt* s_ = nullptr;
  bool owned_ = true;
  int rc_ = SQLITE_ERROR;
};

// Statements compiled once per connection; used under that connection's mutex.
class StmtCache {
 public:
  StmtCache() = default;
  StmtCache(const StmtCache&) = delete;
  StmtCache& operator=(const StmtCache&) = delete;
  ~StmtCache() { clear(); }
  void clear() {
    for (sqlite3_stmt* s : stmts_) sqlite3_finalize(s);
    stmts_.clear();
  }
  // Compiles `sql` on `db`; returns its index for borrow(). -1 on error.
  int add(sqlite3* db, const char* sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK) return -1;
    stmts_.push_back(s);
    return static_cast<int>(stmts_.size()) - 1;
  }
  sqlite3_stmt* operator[](int i) const { return stmts_[static_cast<size_t>(i)]; }

 private:
  std::vector<sqlite3_stmt*> stmts_;
};

struct Row {
  int64_t rev = 0;
  std::string name;
  bool created = false, deleted = false;
  int64_t create_rev = 0, prev_rev = 0, version = 0;
  std::string value, old_value;
};

Row read_row(Stmt& s) {
  return Row{s.i64(0), s.str(1), s.i64(2) != 0, s.i64(3) != 0, s.i64(4), s.i64(5), s.i64(6), s.str(7), s.str(8)};
}

KeyValue live_kv(const Row& r) { return KeyValue{r.name, r.value, r.create_rev, r.rev, r.version}; }

Event row_event(const Row& r) {
  Event e;
  if (r.deleted) {
    e.type = EventType::kDelete;
    e.kv = KeyValue{r.name, "", 0, r.rev, 0};
    e.prev = KeyValue{r.name, r.old_value, r.create_rev, r.prev_rev, r.version};
  } else {
    e.kv = live_kv(r);
    if (!r.created) e.prev = KeyValue{r.name, r.old_value, r.create_rev, r.prev_rev, r.version - 1};
  }
  return e;
}

class SqliteStore final : public Store {
 public:
  ~SqliteStore() override {
    hub_.reset();  // no callbacks after this point
    wcache_.clear();
    rcache_.clear();
    if (rdb_ != wdb_) sqlite3_close(rdb_);
    sqlite3_close(wdb_);
  }

  Status open(const SqliteOptions& o) {
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(o.path.c_str(), &wdb_, flags, nullptr) != SQLITE_OK) return db_error(wdb_, "open " + o.path);
    std::string pragmas = "PRAGMA journal_mode=WAL; PRAGMA busy_timeout=10000; PRAGMA synchronous=";
    pragmas += o.sync_full ? "FULL;" : "NORMAL;";
    if (Status st = exec(wdb_, pragmas); !st.ok()) return st;
    if (Status st = exec(wdb_, kSchema); !st.ok()) return st;
    if (o.path == ":memory:") {
      rdb_ = wdb_;  // a second connection would be a different database
      rmu_ = &wmu_;
    } else {
      if (sqlite3_open_v2(o.path.c_str(), &rdb_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
        return db_error(rdb_, "open " + o.path);
      }
      if (Status st = exec(rdb_, "PRAGMA busy_timeout=10000; PRAGMA cache_size=-65536; PRAGMA mmap_size=268435456;"); !st.ok()) return st;
      rmu_ = &own_rmu_;
    }
    Stmt seq(wdb_, "SELECT seq FROM sqlite_sequence WHERE name = 'kv'");
    if (!seq.ok() || seq.step() != SQLITE_ROW) return db_error(wdb_, "read revision");
    rev_ = seq.i64(0);
    Stmt meta(wdb_, "SELECT v FROM meta WHERE k = 'compacted'");
    if (meta.ok() && meta.step() == SQLITE_ROW) compacted_ = meta.i64(0);
    if ((w_current_ = wcache_.add(wdb_, kCurrentRow)) < 0 || (w_insert_ = wcache_.add(wdb_, kInsertRow)) < 0 ||
        (w_begin_ = wcache_.add(wdb_, "BEGIN IMMEDIATE")) < 0 || (w_commit_ = wcache_.add(wdb_, "COMMIT")) < 0 ||
        (w_rollback_ = wcache_.add(wdb_, "ROLLBACK")) < 0) {
      return db_error(wdb_, "prepare");
    }
    if ((r_get_ = rcache_.add(rdb_, kGetRow)) < 0) return db_error(rdb_, "prepare");
    hub_ = std::make_unique<internal::WatchHub>();
    return Status();
  }

  int64_t current_revision() override { return rev_; }
  int64_t compacted_revision() override { return compacted_; }

  Result<KeyValue> get(std::string_view key, int64_t revision) override {
    ASSIGN_OR_RETURN(int64_t at, read_revision(revision));
    std::lock_guard<std::mutex> lock(*rmu_);
    Stmt s(Stmt::Borrow{}, rcache_[r_get_]);
    s.bind_text(1, key);
    s.bind(2, at);
    int rc = s.step();
    if (rc == SQLITE_ROW) {
      Row r = read_row(s);
      if (!r.deleted) return live_kv(r);
    } else if (rc != SQLITE_DONE) {
      return db_error(rdb_, "get");
    }
    return Status(Code::kNotFound, "key not found: " + std::string(key));
  }

  Result<ListResult> list(std::string_view prefix, const ListOptions& opts) override {
    ASSIGN_OR_RETURN(int64_t at, read_revision(opts.revision));
    std::string end = prefix_end(prefix);
    // The newest row at or below the revision for each key, in key order, via the
    // (name, rev) index: no temporary sort of the values (a JOIN on a GROUP BY
    // subquery sorted ~15 MB for 10,000 slices).
    std::string latest = std::string(" FROM kv k WHERE k.name >= ?1") + (end.empty() ? "" : " AND k.name < ?2") +
                         " AND k.name > ?3 AND k.rev <= ?4 AND k.deleted = 0 AND k.rev = (SELECT MAX(rev) FROM kv k2"
                         " WHERE k2.name = k.name AND k2.rev <= ?4)";
    std::lock_guard<std::mutex> lock(*rmu_);
    ListResult out;
    out.revision = at;
    {
      Stmt s(rdb_, std::string("SELECT k.rev, k.name, k.created, k.deleted, k.create_rev, k.prev_rev, k.version, k.value, ''") +
                       latest + " ORDER BY k.name LIMIT ?5");
      bind_range(s, prefix, end, opts.start_after, at);
      s.bind(5, opts.limit > 0 ? opts.limit + 1 : -1);
      int rc;
      while ((rc = s.step()) == SQLITE_ROW) out.items.push_back(live_kv(read_row(s)));
      if (rc != SQLITE_DONE) return db_error(rdb_, "list");
    }
    if (opts.limit > 0 && static_cast<int64_t>(out.items.size()) > opts.limit) {
      out.items.pop_back();
      out.more = true;
      Stmt c(rdb_, "SELECT COUNT(*)" + latest);
      bind_range(c, prefix, end, out.items.back().key, at);
      if (c.step() != SQLITE_ROW) return db_error(rdb_, "count");
      out.remaining = c.i64(0);
    }
    return out;
  }

  Result<KeyValue> create(std::string_view key, std::string_view value) override {
    Op op(Op::kCreate, key, value, 0);
    RETURN_IF_ERROR(submit(op));
    return op.result.kv;
  }
  Result<WriteResult> update(std::string_view key, std::string_view value, int64_t expected) override {
    Op op(Op::kUpdate, key, value, expected);
    RETURN_IF_ERROR(submit(op));
    return op.result;
  }
  Result<WriteResult> remove(std::string_view key, int64_t expected) override {
    Op op(Op::kRemove, key, "", expected);
    RETURN_IF_ERROR(submit(op));
    return op.result;
  }

  Result<std::unique_ptr<WatchHandle>> watch(std::string_view prefix, int64_t start, WatchCallback cb) override {
    std::lock_guard<std::mutex> wlock(wmu_);  // no commit may slip between history and live
    int64_t now = rev_;
    if (start == 0) start = now + 1;
    if (start <= compacted_) return Status(Code::kGone, "too old resource version: " + std::to_string(start));
    if (start > now + 1) return Status(Code::kInvalid, "watch revision " + std::to_string(start) + " is in the future");
    std::vector<Event> history;
    if (start <= now) {
      std::unique_lock<std::mutex> rlock(own_rmu_, std::defer_lock);
      if (rmu_ == &own_rmu_) rlock.lock();
      Stmt s(rdb_, std::string("SELECT ") + kCols +
                       " FROM kv WHERE rev >= ?3 AND rev <= ?4 AND name >= ?1 AND (?2 = '' OR name < ?2) ORDER BY rev");
      s.bind_text(1, prefix);
      s.bind_text(2, prefix_end(prefix));
      s.bind(3, start);
      s.bind(4, now);
      int rc;
      while ((rc = s.step()) == SQLITE_ROW) history.push_back(row_event(read_row(s)));
      if (rc != SQLITE_DONE) return db_error(rdb_, "watch history");
    }
    return hub_->add(std::string(prefix), std::move(history), now, std::move(cb));
  }

  Status compact(int64_t revision) override {
    std::lock_guard<std::mutex> wlock(wmu_);
    if (revision > rev_) return Status(Code::kInvalid, "compact revision " + std::to_string(revision) + " is in the future");
    if (revision <= compacted_) return Status();
    std::string r = std::to_string(revision);
    Status st = exec(wdb_, "BEGIN IMMEDIATE;"
                               "DELETE FROM kv WHERE rev < " + r + " AND EXISTS (SELECT 1 FROM kv k2 WHERE k2.name = kv.name"
                               " AND k2.rev > kv.rev AND k2.rev <= " + r + ");"
                               "DELETE FROM kv WHERE deleted = 1 AND rev <= " + r + ";"
                               "INSERT OR REPLACE INTO meta (k, v) VALUES ('compacted', " + r + ");"
                               "COMMIT;");
    if (!st.ok()) {
      (void)exec(wdb_, "ROLLBACK");
      return st;
    }
    compacted_ = revision;
    return Status();
  }

 private:
  struct Op {
    enum Kind { kCreate, kUpdate, kRemove };
    Op(Kind k, std::string_view key_, std::string_view value_, int64_t expected_)
        : kind(k), key(key_), value(value_), expected(expected_) {}
    Kind kind;
    std::string key, value;
    int64_t expected = 0;
    Status status;
    WriteResult result;
    std::optional<Event> event;
    bool done = false;
  };

  static Status db_error(sqlite3* db, const std::string& what) {
    return Status(Code::kUnavailable, "sqlite " + what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
  }
  static Status exec(sqlite3* db, const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      return Status(Code::kUnavailable, "sqlite: " + msg);
    }
    return Status();
  }
  // Runs a cached statement without results (transaction control) on wdb_.
  Status step_cached(int index, const char* what) {
    Stmt s(Stmt::Borrow{}, wcache_[index]);
    return s.step() == SQLITE_DONE ? Status() : db_error(wdb_, what);
  }
  static void bind_range(Stmt& s, std::string_view prefix, const std::string& end, std::string_view after, int64_t at) {
    s.bind_text(1, prefix);
    s.bind_text(2, end);
    s.bind_text(3, after);
    s.bind(4, at);
  }
  Result<int64_t> read_revision(int64_t revision) const {
    int64_t now = rev_;
    if (revision == 0) return now;
    if (revision < compacted_) return Status(Code::kGone, "too old resource version: " + std::to_string(revision));
    if (revision > now) return Status(Code::kInvalid, "revision " + std::to_string(revision) + " is in the future");
    return revision;
  }

  // Group commit: the first waiting writer becomes the leader and commits every
  // queued op in one transaction; the others sleep until their op is done.
  Status submit(Op& op) {
    std::unique_lock<std::mutex> lk(qmu_);
    queue_.push_back(&op);
    while (!op.done) {
      if (leader_) {
        qcv_.wait(lk);
        continue;
      }
      leader_ = true;
      std::vector<Op*> batch;
      batch.swap(queue_);
      lk.unlock();
      run_batch(batch);
      lk.lock();
      leader_ = false;
      for (Op* o : batch) o->done = true;
      qcv_.notify_all();
    }
    return op.status;
  }

  void run_batch(const std::vector<Op*>& batch) {
    std::lock_guard<std::mutex> wlock(wmu_);
    Status begin = step_cached(w_begin_, "begin");
    if (!begin.ok()) {
      for (Op* o : batch) o->status = begin;
      return;
    }
    int64_t next = rev_ + 1;
    for (Op* o : batch) apply(*o, next);
    Status commit = step_cached(w_commit_, "commit");
    if (!commit.ok()) {
      (void)step_cached(w_rollback_, "rollback");
      for (Op* o : batch) o->status = commit;
      return;
    }
    for (Op* o : batch) {
      if (!o->event) continue;
      rev_ = o->event->kv.mod_revision;
      hub_->publish(std::move(*o->event));
    }
  }

  // Runs one op inside the open transaction; sets status/result/event. `next` is
  // the revision a write gets (advanced when it writes).
  void apply(Op& op, int64_t& next) {
    std::optional<Row> cur;
    int64_t tomb = 0;  // the tombstone a re-create follows (its prev_rev)
    {
      Stmt s(Stmt::Borrow{}, wcache_[w_current_]);
      s.bind_text(1, op.key);
      int rc = s.step();
      if (rc == SQLITE_ROW) {
        Row r = read_row(s);
        if (r.deleted) {
          tomb = r.rev;
        } else {
          cur = std::move(r);
        }
      } else if (rc != SQLITE_DONE) {
        op.status = db_error(wdb_, "read");
        return;
      }
    }
    Row row;
    row.name = op.key;
    if (op.kind == Op::kCreate) {
      if (cur) {
        op.status = Status(Code::kAlreadyExists, "key already exists: " + op.key);
        return;
      }
      row = Row{0, op.key, true, false, 0, tomb, 1, op.value, ""};
    } else {
      if (!cur) {
        op.status = Status(Code::kNotFound, "key not found: " + op.key);
        return;
      }
      if (op.expected != 0 && op.expected != cur->rev) {
        op.result = WriteResult{false, live_kv(*cur), 0};
        return;
      }
      bool del = op.kind == Op::kRemove;
      row = Row{0, op.key, false, del, cur->create_rev, cur->rev, del ? cur->version : cur->version + 1,
                del ? "" : op.value, cur->value};
    }
    row.rev = next;
    if (row.created) row.create_rev = row.rev;
    Stmt ins(Stmt::Borrow{}, wcache_[w_insert_]);
    ins.bind(1, row.rev);
    ins.bind_text(2, row.name);
    ins.bind(3, int64_t{row.created});
    ins.bind(4, int64_t{row.deleted});
    ins.bind(5, row.create_rev);
    ins.bind(6, row.prev_rev);
    ins.bind(7, row.version);
    ins.bind(8, row.value);
    ins.bind(9, row.old_value);
    if (ins.step() != SQLITE_DONE) {
      op.status = db_error(wdb_, "insert");
      return;
    }
    ++next;
    Event ev = row_event(row);
    op.result = WriteResult{true, row.deleted ? *ev.prev : ev.kv, row.rev};
    if (op.kind == Op::kCreate) op.result.kv = ev.kv;
    op.event = std::move(ev);
  }

  sqlite3* wdb_ = nullptr;
  sqlite3* rdb_ = nullptr;
  std::mutex wmu_;       // the write connection (and all commits)
  std::mutex own_rmu_;   // the read connection
  std::mutex* rmu_ = &own_rmu_;
  std::atomic<int64_t> rev_{1};
  std::atomic<int64_t> compacted_{0};
  std::mutex qmu_;
  std::condition_variable qcv_;
  std::vector<Op*> queue_;
  bool leader_ = false;
  std::unique_ptr<internal::WatchHub> hub_;
  StmtCache wcache_;  // under wmu_
  StmtCache rcache_;  // under *rmu_
  int w_current_ = -1, w_insert_ = -1, w_begin_ = -1, w_commit_ = -1, w_rollback_ = -1, r_get_ = -1;
};

}  // namespace

Result<std::unique_ptr<Store>> open_sqlite_store(const SqliteOptions& options) {
  auto s = std::make_unique<SqliteStore>();
  RETURN_IF_ERROR(s->open(options));
  return std::unique_ptr<Store>(std::move(s));
}

}  // namespace draplane::store
