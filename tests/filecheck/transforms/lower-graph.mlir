// RUN: glow-opt %s --split-input-file --lower-graph | FileCheck %s --check-prefixes=CHECK,INTERP,LOWERED
// RUN: glow-opt %s --split-input-file --lower-graph=backend=cpu | FileCheck %s --check-prefixes=CHECK,CPU
// RUN: glow-opt %s --split-input-file --lower-graph=backend=accel | FileCheck %s --check-prefixes=CHECK,ACCEL,LOWERED
// RUN: not glow-opt %s --split-input-file --lower-graph=backend=tpu 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// UNKNOWN: glow-opt: error: lower-graph: unknown backend 'tpu' (backends: 'interpreter', 'cpu', 'accel')

// fully_connected: every backend keeps it (the accelerator until after quantize-graph:
// its transform_post_lowering lowers a float one to mat_mul + batched_add and the fused
// clip to max/min, tests/unit/test_accel_int8.py).
// CHECK-LABEL:  func.func @fully_connected
// CHECK-NEXT:     %[[FC:.*]] = glow.fully_connected %x, %w, %b {fused_activation = "clip"
// CHECK-NEXT:     func.return %[[FC]]
func.func @fully_connected(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = glow.fully_connected %x, %w, %b {fused_activation = "clip", fused_activation_args = array<f32: 0.0, 6.0>} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

// Both kept, the float one with its fused relu and the integer one.
// CHECK-LABEL:  func.func @fully_connected_relu_and_int
// CHECK-COUNT-2:  glow.fully_connected
func.func @fully_connected_relu_and_int(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>, %xi: tensor<2x3xi32>, %wi: tensor<3x4xi32>, %bi: tensor<4xi32>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
  %0 = glow.fully_connected %x, %w, %b {fused_activation = "relu"} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = glow.fully_connected %xi, %wi, %bi : (tensor<2x3xi32>, tensor<3x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
  func.return %0, %1 : tensor<2x4xf32>, tensor<2x4xi32>
}

// -----

// Constant parameters fold into one per-channel scale and shift (here eps = 1:
// a = scale / sqrt(var + 1) = [1, 0.5], s = bias - mean * a = [0.5, -1.125]), broadcast
// along the channel dim. Every backend lowers batch normalization.
// CHECK-LABEL:  func.func @batchnorm_constant
// CHECK-NEXT:     %[[A:.*]] = glow.constant dense<[1.000000e+00, 5.000000e-01]> : tensor<2xf32>
// CHECK-NEXT:     %[[S:.*]] = glow.constant dense<[5.000000e-01, -1.125000e+00]> : tensor<2xf32>
// CHECK-NEXT:     %[[BA:.*]] = glow.broadcast %[[A]] {axis = 1 : i64} : tensor<2xf32> -> tensor<1x2x2x2xf32>
// CHECK-NEXT:     %[[M:.*]] = glow.mul %x, %[[BA]] : tensor<1x2x2x2xf32>
// CHECK-NEXT:     %[[BS:.*]] = glow.broadcast %[[S]] {axis = 1 : i64} : tensor<2xf32> -> tensor<1x2x2x2xf32>
// CHECK-NEXT:     %[[R:.*]] = glow.add %[[M]], %[[BS]] : tensor<1x2x2x2xf32>
// CHECK-NEXT:     func.return %[[R]]
func.func @batchnorm_constant(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %scale = glow.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %bias = glow.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %mean = glow.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %var = glow.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %0 = glow.batch_normalization %x, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %0 : tensor<1x2x2x2xf32>
}

// -----

// Parameters that are inputs: the scale and shift are computed by ops (default eps 1e-5),
// on the last dim (channel_idx = -1).
// CHECK-LABEL:  func.func @batchnorm_inputs
// CHECK-NEXT:     %[[EPS:.*]] = glow.splat {value = 1.000000e-05 : f32} : tensor<2xf32>
// CHECK-NEXT:     %[[VE:.*]] = glow.add %v, %[[EPS]]
// CHECK-NEXT:     %[[RS:.*]] = glow.rsqrt %[[VE]]
// CHECK-NEXT:     %[[A:.*]] = glow.mul %s, %[[RS]]
// CHECK-NEXT:     %[[MA:.*]] = glow.mul %m, %[[A]]
// CHECK-NEXT:     %[[SH:.*]] = glow.sub %b, %[[MA]]
// CHECK-NEXT:     %[[BA:.*]] = glow.broadcast %[[A]] {axis = 1 : i64} : tensor<2xf32> -> tensor<3x2xf32>
// CHECK-NEXT:     %[[M:.*]] = glow.mul %x, %[[BA]]
// CHECK-NEXT:     %[[BS:.*]] = glow.broadcast %[[SH]] {axis = 1 : i64}
// CHECK-NEXT:     glow.add %[[M]], %[[BS]]
// CHECK-NOT:      glow.batch_normalization
func.func @batchnorm_inputs(%x: tensor<3x2xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<3x2xf32> {
  %0 = glow.batch_normalization %x, %s, %b, %m, %v {channel_idx = -1 : i64} : (tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

// Layer normalization over the two trailing dims that scale and bias have; the CPU keeps it
// (one kernel: the row stays in cache through its three passes).
// CHECK-LABEL:  func.func @layernorm
// CPU-NEXT:       %[[LN:.*]] = glow.layer_normalization %x, %s, %b {epsilon = 1.000000e-03 : f32}
// CPU-NEXT:       func.return %[[LN]]
// LOWERED-NEXT:     %[[MEAN:.*]] = glow.batched_reduce_mean %x {axes = array<i64: 1, 2>} : tensor<2x3x4xf32> -> tensor<2xf32>
// LOWERED-NEXT:     %[[MR:.*]] = glow.reshape %[[MEAN]] : tensor<2xf32> -> tensor<2x1x1xf32>
// LOWERED-NEXT:     %[[MB:.*]] = glow.broadcast %[[MR]] {axis = 0 : i64} : tensor<2x1x1xf32> -> tensor<2x3x4xf32>
// LOWERED-NEXT:     %[[D:.*]] = glow.sub %x, %[[MB]]
// LOWERED-NEXT:     %[[SQ:.*]] = glow.mul %[[D]], %[[D]]
// LOWERED-NEXT:     %[[VAR:.*]] = glow.batched_reduce_mean %[[SQ]] {axes = array<i64: 1, 2>}
// LOWERED-NEXT:     %[[EPS:.*]] = glow.splat {value = 1.000000e-03 : f32} : tensor<2xf32>
// LOWERED-NEXT:     %[[VE:.*]] = glow.add %[[VAR]], %[[EPS]]
// LOWERED-NEXT:     %[[INV:.*]] = glow.rsqrt %[[VE]]
// LOWERED-NEXT:     %[[IR:.*]] = glow.reshape %[[INV]]
// LOWERED-NEXT:     %[[IB:.*]] = glow.broadcast %[[IR]] {axis = 0 : i64}
// LOWERED-NEXT:     %[[N:.*]] = glow.mul %[[D]], %[[IB]]
// LOWERED-NEXT:     %[[SB:.*]] = glow.broadcast %s {axis = 1 : i64} : tensor<3x4xf32> -> tensor<2x3x4xf32>
// LOWERED-NEXT:     %[[Y:.*]] = glow.mul %[[N]], %[[SB]]
// LOWERED-NEXT:     %[[BB:.*]] = glow.broadcast %b {axis = 1 : i64}
// LOWERED-NEXT:     %[[R:.*]] = glow.add %[[Y]], %[[BB]]
// LOWERED-NEXT:     func.return %[[R]]
func.func @layernorm(%x: tensor<2x3x4xf32>, %s: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = glow.layer_normalization %x, %s, %b {epsilon = 1.0e-3 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

// gelu: exact through erf, and the tanh form; the CPU keeps it (one element-wise
// instruction, which the product before it computes in its epilogue).
// CHECK-LABEL:  func.func @gelu
// CPU-NEXT:       %[[G:.*]] = glow.gelu %x : tensor<4xf32>
// CPU-NEXT:       %[[GT:.*]] = glow.gelu %x {approximate = "tanh"} : tensor<4xf32>
// CPU-NEXT:       func.return %[[G]], %[[GT]]
// LOWERED-NEXT:   %[[C:.*]] = glow.splat {value = 0.707106769 : f32}
// LOWERED-NEXT:   %[[XS:.*]] = glow.mul %x, %[[C]]
// LOWERED-NEXT:   %[[E:.*]] = glow.erf %[[XS]]
// LOWERED-NEXT:   %[[ONE:.*]] = glow.splat {value = 1.000000e+00 : f32}
// LOWERED-NEXT:   %[[E1:.*]] = glow.add %[[E]], %[[ONE]]
// LOWERED-NEXT:   %[[HALF:.*]] = glow.splat {value = 5.000000e-01 : f32}
// LOWERED-NEXT:   %[[H:.*]] = glow.mul %[[E1]], %[[HALF]]
// LOWERED-NEXT:   %[[G:.*]] = glow.mul %x, %[[H]]
// LOWERED-NEXT:   %[[X2:.*]] = glow.mul %x, %x
// LOWERED-NEXT:   %[[X3:.*]] = glow.mul %[[X2]], %x
// LOWERED-NEXT:   %[[K:.*]] = glow.splat {value = 4.471500e-02 : f32}
// LOWERED-NEXT:   %[[KX3:.*]] = glow.mul %[[X3]], %[[K]]
// LOWERED-NEXT:   %[[IN:.*]] = glow.add %x, %[[KX3]]
// LOWERED-NEXT:   %[[S:.*]] = glow.splat {value = 0.797884583 : f32}
// LOWERED-NEXT:   %[[INS:.*]] = glow.mul %[[IN]], %[[S]]
// LOWERED-NEXT:   %[[T:.*]] = glow.tanh %[[INS]]
// LOWERED:        %[[GT:.*]] = glow.mul %x, %{{.*}}
// LOWERED-NEXT:   func.return %[[G]], %[[GT]]
func.func @gelu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = glow.gelu %x : tensor<4xf32>
  %1 = glow.gelu %x {approximate = "tanh"} : tensor<4xf32>
  func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// swish: x * sigmoid(x); the CPU keeps it (one element-wise instruction, which the
// epilogue of the convolution before it computes).
// CHECK-LABEL:  func.func @swish
// CPU-NEXT:       %[[W:.*]] = glow.swish %x : tensor<4xf32>
// CPU-NEXT:       func.return %[[W]]
// LOWERED-NEXT:   %[[S:.*]] = glow.sigmoid %x : tensor<4xf32>
// LOWERED-NEXT:   %[[R:.*]] = glow.mul %x, %[[S]] : tensor<4xf32>
// LOWERED-NEXT:   func.return %[[R]]
func.func @swish(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = glow.swish %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// clip and leaky_relu: the CPU keeps them (they fuse into its kernels); the others lower.
// An integer clip has no exact float lowering and stays everywhere.
// CHECK-LABEL:  func.func @clip_leaky_relu
// CPU-NEXT:       glow.clip %x {min = -1.000000e+00 : f32, max = 1.000000e+00 : f32}
// CPU-NEXT:       glow.leaky_relu %x {alpha = 1.000000e-01 : f32}
// CPU-NEXT:       glow.leaky_relu %x {alpha = 2.000000e+00 : f32}
// CPU-NEXT:       glow.clip %i
// INTERP-NEXT:    %[[LO:.*]] = glow.splat {value = -1.000000e+00 : f32}
// INTERP-NEXT:    %[[MAX:.*]] = glow.max %x, %[[LO]]
// INTERP-NEXT:    %[[HI:.*]] = glow.splat {value = 1.000000e+00 : f32}
// INTERP-NEXT:    %[[C:.*]] = glow.min %[[MAX]], %[[HI]]
// leaky_relu with 0 <= alpha <= 1 is max(x, alpha * x):
// INTERP-NEXT:    %[[A:.*]] = glow.splat {value = 1.000000e-01 : f32}
// INTERP-NEXT:    %[[AX:.*]] = glow.mul %x, %[[A]]
// INTERP-NEXT:    %[[L1:.*]] = glow.max %x, %[[AX]]
// otherwise the prelu form max(x, 0) + alpha * min(x, 0):
// INTERP-NEXT:    %[[A2:.*]] = glow.splat {value = 2.000000e+00 : f32}
// INTERP-NEXT:    %[[Z:.*]] = glow.splat {value = 0.000000e+00 : f32}
// INTERP-NEXT:    %[[P:.*]] = glow.max %x, %[[Z]]
// INTERP-NEXT:    %[[N:.*]] = glow.min %x, %[[Z]]
// INTERP-NEXT:    %[[AN:.*]] = glow.mul %[[A2]], %[[N]]
// INTERP-NEXT:    %[[L2:.*]] = glow.add %[[P]], %[[AN]]
// INTERP-NEXT:    %[[CI:.*]] = glow.clip %i
// INTERP-NEXT:    func.return %[[C]], %[[L1]], %[[L2]], %[[CI]]
// ACCEL-NOT:      glow.leaky_relu
// ACCEL:          glow.clip %i
func.func @clip_leaky_relu(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) {
  %0 = glow.clip %x {min = -1.0 : f32, max = 1.0 : f32} : tensor<4xf32>
  %1 = glow.leaky_relu %x {alpha = 0.1 : f32} : tensor<4xf32>
  %2 = glow.leaky_relu %x {alpha = 2.0 : f32} : tensor<4xf32>
  %3 = glow.clip %i {min = 0.0 : f32, max = 6.0 : f32} : tensor<4xi32>
  func.return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>
}

// -----

// CHECK-LABEL:  func.func @prelu
// CHECK-NEXT:     %[[Z:.*]] = glow.splat {value = 0.000000e+00 : f32} : tensor<4xf32>
// CHECK-NEXT:     %[[P:.*]] = glow.max %x, %[[Z]]
// CHECK-NEXT:     %[[N:.*]] = glow.min %x, %[[Z]]
// CHECK-NEXT:     %[[SN:.*]] = glow.mul %s, %[[N]]
// CHECK-NEXT:     %[[R:.*]] = glow.add %[[P]], %[[SN]]
// CHECK-NEXT:     func.return %[[R]]
func.func @prelu(%x: tensor<4xf32>, %s: tensor<4xf32>) -> tensor<4xf32> {
  %0 = glow.prelu %x, %s : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// Group convolution: per group on the accelerator (slices of input channels, filters and
// bias, a group-1 convolution keeping the other attributes, concat on channels); kept by
// the interpreter and the CPU. A group-1 convolution is never touched.
// CHECK-LABEL:  func.func @group_convolution
// INTERP-NEXT:    glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>}
// CPU-NEXT:       glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>}
// ACCEL-NEXT:     %[[X0:.*]] = glow.slice %x {start = array<i64: 0, 0, 0, 0>} : tensor<1x4x5x5xf32> -> tensor<1x2x5x5xf32>
// ACCEL-NEXT:     %[[W0:.*]] = glow.slice %w {start = array<i64: 0, 0, 0, 0>} : tensor<6x2x3x3xf32> -> tensor<3x2x3x3xf32>
// ACCEL-NEXT:     %[[B0:.*]] = glow.slice %b {start = array<i64: 0>} : tensor<6xf32> -> tensor<3xf32>
// ACCEL-NEXT:     %[[C0:.*]] = glow.convolution %[[X0]], %[[W0]], %[[B0]] {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x5x5xf32>
// ACCEL-NEXT:     %[[X1:.*]] = glow.slice %x {start = array<i64: 0, 2, 0, 0>}
// ACCEL-NEXT:     %[[W1:.*]] = glow.slice %w {start = array<i64: 3, 0, 0, 0>}
// ACCEL-NEXT:     %[[B1:.*]] = glow.slice %b {start = array<i64: 3>}
// ACCEL-NEXT:     %[[C1:.*]] = glow.convolution %[[X1]], %[[W1]], %[[B1]]
// ACCEL-NEXT:     %[[R:.*]] = glow.concat %[[C0]], %[[C1]] {dim = 1 : i64} : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x6x5x5xf32>
// ACCEL-NEXT:     %[[G1:.*]] = glow.convolution %x, %v, %c {kernels = array<i64: 1, 1>}
// ACCEL-NEXT:     func.return %[[R]], %[[G1]]
func.func @group_convolution(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>, %v: tensor<2x4x1x1xf32>, %c: tensor<2xf32>) -> (tensor<1x6x5x5xf32>, tensor<1x2x5x5xf32>) {
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x5x5xf32>
  %1 = glow.convolution %x, %v, %c {kernels = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<2x4x1x1xf32>, tensor<2xf32>) -> tensor<1x2x5x5xf32>
  func.return %0, %1 : tensor<1x6x5x5xf32>, tensor<1x2x5x5xf32>
}

// -----

// A fused activation stays on each group's convolution when the backend supports it there
// (the accelerator: relu), else it follows the concat as an op (clip, lowered in turn).
// ACCEL-LABEL:  func.func @group_convolution_fused
// ACCEL-COUNT-2:  glow.convolution {{.*}} {kernels = array<i64: 1, 1>} :
// ACCEL:          %[[C:.*]] = glow.concat
// ACCEL-NEXT:     glow.splat {value = 0.000000e+00 : f32}
// ACCEL-NEXT:     glow.max %[[C]]
// ACCEL-NEXT:     glow.splat {value = 6.000000e+00 : f32}
// ACCEL-NEXT:     %[[CLIP:.*]] = glow.min
// ACCEL-COUNT-2:  glow.convolution {{.*}} {kernels = array<i64: 1, 1>, fused_activation = "relu"} :
// ACCEL:          %[[R:.*]] = glow.concat
// ACCEL-NEXT:     func.return %[[CLIP]], %[[R]]
func.func @group_convolution_fused(%x: tensor<1x4x2x2xf32>, %w: tensor<4x2x1x1xf32>, %b: tensor<4xf32>) -> (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) {
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, group = 2 : i64, fused_activation = "clip", fused_activation_args = array<f32: 0.0, 6.0>} : (tensor<1x4x2x2xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  %1 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, group = 2 : i64, fused_activation = "relu"} : (tensor<1x4x2x2xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  func.return %0, %1 : tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>
}

// -----

// NHWC group convolution: channels are the last dim of the input and of the OHWI filter.
// ACCEL-LABEL:  func.func @group_convolution_nhwc
// ACCEL-NEXT:     glow.slice %x {start = array<i64: 0, 0, 0, 0>} : tensor<1x3x3x4xf32> -> tensor<1x3x3x2xf32>
// ACCEL-NEXT:     glow.slice %w {start = array<i64: 0, 0, 0, 0>} : tensor<2x1x1x2xf32> -> tensor<1x1x1x2xf32>
// ACCEL-NEXT:     glow.slice %b
// ACCEL-NEXT:     glow.convolution {{.*}} {kernels = array<i64: 1, 1>, layout = "NHWC"} : (tensor<1x3x3x2xf32>, tensor<1x1x1x2xf32>, tensor<1xf32>) -> tensor<1x3x3x1xf32>
// ACCEL-NEXT:     glow.slice %x {start = array<i64: 0, 0, 0, 2>}
// ACCEL:          glow.concat {{.*}} {dim = 3 : i64} : (tensor<1x3x3x1xf32>, tensor<1x3x3x1xf32>) -> tensor<1x3x3x2xf32>
func.func @group_convolution_nhwc(%x: tensor<1x3x3x4xf32>, %w: tensor<2x1x1x2xf32>, %b: tensor<2xf32>) -> tensor<1x3x3x2xf32> {
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, group = 2 : i64, layout = "NHWC"} : (tensor<1x3x3x4xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
  func.return %0 : tensor<1x3x3x2xf32>
}

// -----

// batch_mat_mul: per batch on the accelerator; a batch of one needs no concat.
// CHECK-LABEL:  func.func @batch_mat_mul
// INTERP-NEXT:    glow.batch_mat_mul %a, %b
// INTERP-NEXT:    glow.batch_mat_mul %c, %d
// CPU-NEXT:       glow.batch_mat_mul %a, %b
// ACCEL-NEXT:     %[[A0:.*]] = glow.slice %a {start = array<i64: 0, 0, 0>} : tensor<2x3x4xf32> -> tensor<1x3x4xf32>
// ACCEL-NEXT:     %[[A0R:.*]] = glow.reshape %[[A0]] : tensor<1x3x4xf32> -> tensor<3x4xf32>
// ACCEL-NEXT:     %[[B0:.*]] = glow.slice %b {start = array<i64: 0, 0, 0>} : tensor<2x4x5xf32> -> tensor<1x4x5xf32>
// ACCEL-NEXT:     %[[B0R:.*]] = glow.reshape %[[B0]] : tensor<1x4x5xf32> -> tensor<4x5xf32>
// ACCEL-NEXT:     %[[M0:.*]] = glow.mat_mul %[[A0R]], %[[B0R]] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// ACCEL-NEXT:     %[[M0R:.*]] = glow.reshape %[[M0]] : tensor<3x5xf32> -> tensor<1x3x5xf32>
// ACCEL-NEXT:     glow.slice %a {start = array<i64: 1, 0, 0>}
// ACCEL-NEXT:     glow.reshape
// ACCEL-NEXT:     glow.slice %b {start = array<i64: 1, 0, 0>}
// ACCEL-NEXT:     glow.reshape
// ACCEL-NEXT:     glow.mat_mul
// ACCEL-NEXT:     %[[M1R:.*]] = glow.reshape
// ACCEL-NEXT:     %[[R:.*]] = glow.concat %[[M0R]], %[[M1R]] {dim = 0 : i64} : (tensor<1x3x5xf32>, tensor<1x3x5xf32>) -> tensor<2x3x5xf32>
// ACCEL-NEXT:     %[[C:.*]] = glow.reshape %c : tensor<1x2x2xf32> -> tensor<2x2xf32>
// ACCEL-NEXT:     %[[D:.*]] = glow.reshape %d : tensor<1x2x2xf32> -> tensor<2x2xf32>
// ACCEL-NEXT:     %[[CD:.*]] = glow.mat_mul %[[C]], %[[D]]
// ACCEL-NEXT:     %[[CDR:.*]] = glow.reshape %[[CD]] : tensor<2x2xf32> -> tensor<1x2x2xf32>
// ACCEL-NEXT:     func.return %[[R]], %[[CDR]]
func.func @batch_mat_mul(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %c: tensor<1x2x2xf32>, %d: tensor<1x2x2xf32>) -> (tensor<2x3x5xf32>, tensor<1x2x2xf32>) {
  %0 = glow.batch_mat_mul %a, %b : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = glow.batch_mat_mul %c, %d : (tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
  func.return %0, %1 : tensor<2x3x5xf32>, tensor<1x2x2xf32>
}

// -----

// Constant pads become a splat of the pad value with the input inserted at the begin pads;
// reflect pads have no such form and stay. Tiles become concats.
// CHECK-LABEL:  func.func @pad_tile
// CHECK-NEXT:     %[[S:.*]] = glow.splat {value = 5.000000e-01 : f32} : tensor<4x6xf32>
// CHECK-NEXT:     %[[P:.*]] = glow.insert_tensor %[[S]], %x {start = array<i64: 1, 2>} : (tensor<4x6xf32>, tensor<2x3xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:     %[[T:.*]] = glow.concat %x, %x, %x {dim = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<6x3xf32>
// CHECK-NEXT:     %[[R:.*]] = glow.pad %x {pads = array<i64: 1, 1, 1, 1>, mode = "reflect"}
// CHECK-NEXT:     func.return %[[P]], %[[T]], %[[R]]
func.func @pad_tile(%x: tensor<2x3xf32>) -> (tensor<4x6xf32>, tensor<6x3xf32>, tensor<4x5xf32>) {
  %0 = glow.pad %x {pads = array<i64: 1, 2, 1, 1>, value = 0.5 : f32} : tensor<2x3xf32> -> tensor<4x6xf32>
  %1 = glow.tile %x {count = 3 : i64, axis = -2 : i64} : tensor<2x3xf32> -> tensor<6x3xf32>
  %2 = glow.pad %x {pads = array<i64: 1, 1, 1, 1>, mode = "reflect"} : tensor<2x3xf32> -> tensor<4x5xf32>
  func.return %0, %1, %2 : tensor<4x6xf32>, tensor<6x3xf32>, tensor<4x5xf32>
}

// -----

// soft_max and log_soft_max: lowered (stably: the max is subtracted first) only on the
// accelerator; the interpreter and the CPU have one kernel for each.
// CHECK-LABEL:  func.func @soft_max
// INTERP-NEXT:    glow.soft_max %x {axis = 0 : i64}
// INTERP-NEXT:    glow.log_soft_max %x
// CPU-NEXT:       glow.soft_max %x {axis = 0 : i64}
// CPU-NEXT:       glow.log_soft_max %x
// ACCEL-NEXT:     %[[MAX:.*]] = glow.batched_reduce_max %x {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<3xf32>
// ACCEL-NEXT:     %[[MR:.*]] = glow.reshape %[[MAX]] : tensor<3xf32> -> tensor<1x3xf32>
// ACCEL-NEXT:     %[[MB:.*]] = glow.broadcast %[[MR]] {axis = 0 : i64} : tensor<1x3xf32> -> tensor<2x3xf32>
// ACCEL-NEXT:     %[[SH:.*]] = glow.sub %x, %[[MB]]
// ACCEL-NEXT:     %[[E:.*]] = glow.exp %[[SH]]
// ACCEL-NEXT:     %[[SUM:.*]] = glow.batched_reduce_add %[[E]] {axes = array<i64: 0>}
// ACCEL-NEXT:     %[[SR:.*]] = glow.reshape %[[SUM]]
// ACCEL-NEXT:     %[[SB:.*]] = glow.broadcast %[[SR]] {axis = 0 : i64}
// ACCEL-NEXT:     %[[SM:.*]] = glow.div %[[E]], %[[SB]]
// ACCEL-NEXT:     %[[MAX2:.*]] = glow.batched_reduce_max %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
// ACCEL-NEXT:     glow.reshape %[[MAX2]] : tensor<2xf32> -> tensor<2x1xf32>
// ACCEL-NEXT:     glow.broadcast
// ACCEL-NEXT:     %[[SH2:.*]] = glow.sub %x
// ACCEL-NEXT:     %[[E2:.*]] = glow.exp %[[SH2]]
// ACCEL-NEXT:     %[[SUM2:.*]] = glow.batched_reduce_add %[[E2]] {axes = array<i64: 1>}
// ACCEL-NEXT:     %[[LOG:.*]] = glow.log %[[SUM2]] : tensor<2xf32>
// ACCEL-NEXT:     %[[LR:.*]] = glow.reshape %[[LOG]]
// ACCEL-NEXT:     %[[LB:.*]] = glow.broadcast %[[LR]]
// ACCEL-NEXT:     %[[LSM:.*]] = glow.sub %[[SH2]], %[[LB]]
// ACCEL-NEXT:     func.return %[[SM]], %[[LSM]]
func.func @soft_max(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = glow.soft_max %x {axis = 0 : i64} : tensor<2x3xf32>
  %1 = glow.log_soft_max %x : tensor<2x3xf32>
  func.return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}
