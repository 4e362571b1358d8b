// Input files named on the command line ("-" is standard input), for the
// subcommands that read manifests (allocate, convert, validate).
#pragma once

#include <string>

#include "common/result.h"

namespace draplane::cmd {

// The whole file; kInvalid "<path>: cannot open file" when it cannot be opened.
Result<std::string> read_input(const std::string& path);

}  // namespace draplane::cmd
