// Table output (meta.k8s.io/v1 Table) with the columns kubectl shows for each
// kind in Kubernetes 1.36 (pkg/printers/internalversion/printers.go): each
// kind's strategy (strategy.h) gives its columns and cells.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "server/internal/api_impl.h"
#include "server/strategy.h"

namespace draplane::server {
std::string to_table(const ResourceInfo& r, const std::vector<const JsonValue*>& objects, const std::string& rv,
                     const std::string& continue_token, int64_t now, bool include_object) {
  const Strategy& strategy = strategy_of(r);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("kind"); w.String("Table");
  w.Key("apiVersion"); w.String("meta.k8s.io/v1");
  w.Key("metadata");
  w.StartObject();
  w.Key("resourceVersion"); w.String(rv.c_str());
  if (!continue_token.empty()) { w.Key("continue"); w.String(continue_token.c_str()); }
  w.EndObject();
  w.Key("columnDefinitions");
  w.StartArray();
  for (const auto& c : strategy.table_columns()) {
    w.StartObject();
    w.Key("name"); w.String(c.name);
    w.Key("type"); w.String(c.type);
    w.Key("format"); w.String(c.format);
    w.Key("description"); w.String("");
    w.Key("priority"); w.Int(c.priority);
    w.EndObject();
  }
  w.EndArray();
  w.Key("rows");
  w.StartArray();
  for (const JsonValue* o : objects) {
    w.StartObject();
    w.Key("cells");
    w.StartArray();
    for (const TableCell& c : strategy.table_cells(*o, now)) {
      if (std::holds_alternative<int64_t>(c)) w.Int64(std::get<int64_t>(c));
      else w.String(std::get<std::string>(c).c_str());
    }
    w.EndArray();
    if (include_object) {
      w.Key("object");
      o->Accept(w);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace draplane::server
