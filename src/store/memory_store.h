// MemoryStore: the reference Store implementation, all history in memory.
//
// It is the model the SQLite store is checked against (tests/store), and the store
// for unit tests of the server. Simple over fast: a map of key -> revisions and a
// log of events for watch replay.
//
// Thread-safety: as Store (one mutex around everything).
#pragma once

#include <memory>

#include "store/store.h"

namespace draplane::store {

std::unique_ptr<Store> new_memory_store();

}  // namespace draplane::store
