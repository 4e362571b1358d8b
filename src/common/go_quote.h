// go_quote: Go's strconv.Quote (what %q prints), as Kubernetes error messages
// quote values: "\"", "\\", \a \b \f \n \r \t \v escaped, other control bytes
// as \xNN; other bytes (UTF-8 text included) are copied.
#pragma once

#include <string>
#include <string_view>

namespace draplane::common {

std::string go_quote(std::string_view s);

// The time package's quote (its parse errors: `parsing time "x" as "layout"`):
// only '"' and '\' get a backslash; control bytes are written as \xHH. The
// texts quoted are layouts and what a user wrote.
std::string go_time_quote(std::string_view s);

}  // namespace draplane::common
