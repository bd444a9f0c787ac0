// Computing only what is read. A tensor whose readers all read it at every s-th position of a
// dimension is made only at those positions, and so, up the chain, is whatever only it reads:
// ResNet's stride-2 1x1 convolutions read every other pixel of the block output before them, so
// that block's last two convolutions (and its batch norm, add and ReLU) need a quarter of their
// pixels, its 3x3 convolution becoming a stride-2 one. OpenVINO does the same to ResNet-50.
#pragma once

#include "tile/Bind.h"

namespace tessera::compiler {

/// `program` with every statement whose output is read only at positions r, r + s, r + 2s, ...
/// (s >= 2) of some dimensions computing only those positions, its readers' index forms divided
/// accordingly. A contraction subsampled so reads its inputs at s*x + r instead of x; an
/// elementwise statement reads its inputs subsampled, through a strided copy where an input is
/// read whole elsewhere. Program inputs and outputs, the tensors that specials (gather, reshape,
/// ...) read and the outputs of specials keep their shapes. The result has the same values for
/// every output; where nothing qualifies it is `program` unchanged.
tile::BoundProgram subsample_strided_reads(const tile::BoundProgram &program);

}  // namespace tessera::compiler
