// Reads Tile text (PlaidML v0 syntax plus `//` comments) into a checked tile::Program.
#pragma once

#include <string>

#include "tile/Program.h"
#include "tile/Source.h"

namespace tessera::tile {

/// Parses and analyzes `source`. Throws tile::Error (file:line:col, the line, a caret) for a
/// syntax error or a semantic one (unknown name, index in no tensor access, redefinition, ...).
Program parse_program(const SourcePtr &source);

/// Convenience for tests and the EDSL: parses `text` named `name`.
Program parse_program(const std::string &text, const std::string &name = "<string>");

}  // namespace tessera::tile
