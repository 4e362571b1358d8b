// Query parameters as kube-apiserver decodes them: one place for the scalar
// conversions of k8s.io/apimachinery pkg/runtime/conversion.go (what the
// ParameterCodec applies to ListOptions, DeleteOptions, PatchOptions, ...) and
// Go's strconv, with Go's error texts.
//
// Booleans of the options types (watch, allowWatchBookmarks, sendInitialEvents,
// force, orphanDependents) follow Convert_Slice_string_To_bool, not
// strconv.ParseBool: "0" and any case of "false" are false, every other value
// (`True`, `1`, `yes`, and the empty value of `?watch`) is true; nothing is
// rejected. (`pretty` alone is read with strconv.ParseBool, errors meaning
// false; draplane does not indent its answers, see docs/compat.md.)
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "server/api_error.h"
#include "server/api_server.h"

namespace draplane::server {

// The value of `name`, nullopt when the query does not have it.
std::optional<std::string> query_value(const Request& req, std::string_view name);
// The value of `name`, "" when absent.
std::string query_string(const Request& req, std::string_view name);

// Convert_Slice_string_To_bool: nullopt when absent (a *bool option left nil).
std::optional<bool> query_option_bool(const Request& req, std::string_view name);
// The same, absent meaning false.
bool query_flag(const Request& req, std::string_view name);

// Go's strconv.ParseInt(s, 10, 64) and ParseUint(s, 10, 64); the error message
// is Go's NumError text, e.g. `strconv.ParseInt: parsing "abc": invalid syntax`
// or `strconv.ParseUint: parsing "1180591620717411303424": value out of range`.
Result<int64_t> go_parse_int64(std::string_view s);
Result<uint64_t> go_parse_uint64(std::string_view s);
// Go's strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False.
std::optional<bool> go_parse_bool(std::string_view s);

// Convert_Slice_string_To_int64 / _Pointer_int64: nullopt when absent; a value
// that does not parse is a 400 with Go's message (the ParameterCodec's error,
// which the handlers answer with errors.NewBadRequest).
Result<std::optional<int64_t>> query_int64(const Request& req, std::string_view name);

// ValidateDryRun of Create/Update/Patch/DeleteOptions: every value "All".
// `values` are the dryRun values (the query's, or a DeleteOptions body's).
// Returns the 422 `<options_kind>.meta.k8s.io "" is invalid: dryRun: Unsupported
// value: ["x"]: supported values: "All"`.
std::optional<ApiError> check_dry_run(const std::vector<std::string>& values, std::string_view options_kind);
// The query's dryRun values (empty when absent).
std::vector<std::string> query_dry_run(const Request& req);
// Whether the request is a dry run (dryRun=All).
bool is_dry_run(const Request& req);

// ValidateTableOptions, for answers as a Table: includeObject is None, Metadata,
// Object or empty (422 `TableOptions.meta.k8s.io "" is invalid` otherwise).
std::optional<ApiError> check_table_options(const Request& req);


}  // namespace draplane::server
