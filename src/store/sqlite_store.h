// SqliteStore: the embedded, durable Store (draplane's default), after k3s's kine.
//
// One table of revisioned rows: every write appends a row whose INTEGER PRIMARY
// KEY AUTOINCREMENT id is the revision (AUTOINCREMENT so a revision is never
// reused, even after the newest rows are compacted away). A row holds the key,
// created/deleted flags, create_revision, prev_revision (the row it replaces),
// version, the value and the previous value (for watch events). A UNIQUE index on
// (name, prev_revision) makes SQLite itself reject a lost update: two writers that
// read the same row cannot both append its successor.
//
// Durability: WAL journal with synchronous=FULL, so a write is fsynced before it
// is acknowledged and survives kill -9 and power loss. Concurrent writes are
// grouped into one transaction (group commit) so throughput does not pay one
// fsync per write.
//
// Thread-safety: as Store.
#pragma once

#include <memory>
#include <string>

#include "store/store.h"

namespace draplane::store {

struct SqliteOptions {
  std::string path;  // database file; ":memory:" for a throwaway database
  // FULL (default): fsync on every commit. false = NORMAL: faster, may lose the
  // last commits on power loss (not on a process crash).
  bool sync_full = true;
};

// Opens (creating if needed) the database. kUnavailable when the file cannot be
// opened or its schema cannot be created.
Result<std::unique_ptr<Store>> open_sqlite_store(const SqliteOptions& options);

}  // namespace draplane::store
