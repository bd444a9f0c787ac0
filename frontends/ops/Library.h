// The op library's parts; builtin_ops() (tessera/ops.h) registers all of them.
#pragma once

#include "tessera/ops.h"

namespace tessera::ops {

void register_elementwise_ops(OpRegistry &registry);  // Elementwise.cpp
void register_nn_ops(OpRegistry &registry);           // NnOps.cpp: matmul, dense, conv, pooling
void register_reduce_ops(
    OpRegistry &registry);  // Reduce.cpp: sum, mean, max, min, prod, argmax, argmin
void register_norm_ops(
    OpRegistry &registry);  // Normalize.cpp: softmax, log_softmax, batch_norm, moments, layer_norm
void register_loss_ops(OpRegistry &registry);    // Loss.cpp: crossentropies
void register_random_ops(OpRegistry &registry);  // Random.cpp: dropout
void register_shape_ops(
    OpRegistry &registry);  // Shape.cpp: concatenate, slice, pad, transpose, reshape, ...
void register_gather_ops(OpRegistry &registry);  // Gather.cpp: gather, one_hot
void register_resize_ops(
    OpRegistry &registry);  // Resize.cpp: resize, resize_nearest, resize_bilinear
void register_scan_ops(OpRegistry &registry);  // Scan.cpp: cumsum, cumprod

}  // namespace tessera::ops
