// The codec on RapidJSON trees, for callers that already hold an object as a
// rapidjson::Value (the API server parses every request body into one).
//
// decode_tree / decode_tree_lenient give what decode_object / decode_object_lenient
// give for the tree's JSON text, and encode_tree gives the tree that parsing
// to_json's text with kParseFullPrecisionFlag would: the same results without
// writing and re-reading text (two of the six passes over a created object).
// Invalid UTF-8 in strings is read as the text reader reads it (U+FFFD).
//
// Thread-safety: free functions without shared state.
#pragma once

#include <rapidjson/document.h>

#include "api/codec.h"

namespace draplane::api {

Result<Object> decode_tree(const rapidjson::Value& value);
Result<LenientDecode> decode_tree_lenient(const rapidjson::Value& value);

// Makes `out` the encoded object (its previous content is dropped).
void encode_tree(const Object& object, rapidjson::Document& out);

}  // namespace draplane::api
