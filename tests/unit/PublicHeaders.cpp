// Everything a user of the C++ API includes (include/tessera/): PublicHeadersShowNoLoopIR checks
// that compiling it reads no header of compiler/ or backends/.
#include "tessera/edsl.h"
#include "tessera/gradient.h"
#include "tessera/import.h"
#include "tessera/ops.h"
