// RUN: glow-opt %s --split-input-file --fuse-activations=backend=cpu | FileCheck %s --check-prefixes=CHECK,CPU
// RUN: glow-opt %s --split-input-file --fuse-activations=backend=accel | FileCheck %s --check-prefixes=CHECK,ACCEL
// RUN: glow-opt %s --split-input-file --fuse-activations | FileCheck %s --check-prefixes=CHECK,INTERP
// RUN: not glow-opt %s --split-input-file --fuse-activations=backend=tpu 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// UNKNOWN: glow-opt: error: fuse-activations: unknown backend 'tpu' (backends: 'interpreter', 'cpu', 'accel')

// The CPU fuses all five activations into convolution and fully_connected; the
// accelerator only a relu into a convolution; the interpreter (default) nothing.
// CHECK-LABEL:  func.func @conv_relu
// CPU-NEXT:       %[[C:.*]] = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, fused_activation = "relu"} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
// CPU-NEXT:       func.return %[[C]]
// ACCEL-NEXT:     %[[C:.*]] = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, fused_activation = "relu"}
// ACCEL-NEXT:     func.return %[[C]]
// INTERP-NEXT:    %[[C:.*]] = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} :
// INTERP-NEXT:    %[[R:.*]] = glow.relu %[[C]]
// INTERP-NEXT:    func.return %[[R]]
func.func @conv_relu(%x: tensor<1x1x2x2xf32>, %w: tensor<1x1x1x1xf32>, %b: tensor<1xf32>) -> tensor<1x1x2x2xf32> {
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  %1 = glow.relu %0 : tensor<1x1x2x2xf32>
  func.return %1 : tensor<1x1x2x2xf32>
}

// -----

// clip and leaky_relu carry their arguments; sigmoid and tanh fuse into fully_connected.
// CHECK-LABEL:  func.func @args_and_fc
// CPU-NEXT:       %[[C0:.*]] = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, fused_activation = "clip", fused_activation_args = array<f32: 0.000000e+00, 6.000000e+00>}
// CPU-NEXT:       %[[C1:.*]] = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, fused_activation = "leaky_relu", fused_activation_args = array<f32: 1.000000e-01>}
// CPU-NEXT:       %[[F0:.*]] = glow.fully_connected %y, %v, %c {fused_activation = "sigmoid"} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CPU-NEXT:       %[[F1:.*]] = glow.fully_connected %y, %v, %c {fused_activation = "tanh"}
// CPU-NEXT:       func.return %[[C0]], %[[C1]], %[[F0]], %[[F1]]
// ACCEL-COUNT-2:  glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} :
// ACCEL-NOT:      fused_activation
// INTERP-NOT:     fused_activation
func.func @args_and_fc(%x: tensor<1x1x2x2xf32>, %w: tensor<1x1x1x1xf32>, %b: tensor<1xf32>, %y: tensor<2x3xf32>, %v: tensor<3x4xf32>, %c: tensor<4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  %1 = glow.clip %0 {min = 0.0 : f32, max = 6.0 : f32} : tensor<1x1x2x2xf32>
  %2 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  %3 = glow.leaky_relu %2 {alpha = 0.1 : f32} : tensor<1x1x2x2xf32>
  %4 = glow.fully_connected %y, %v, %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %5 = glow.sigmoid %4 : tensor<2x4xf32>
  %6 = glow.fully_connected %y, %v, %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %7 = glow.tanh %6 : tensor<2x4xf32>
  func.return %1, %3, %5, %7 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Must not fire: the convolution result has another user; a fused activation is already
// there (relu of a fused clip); the producer is not a convolution or fully_connected.
// CHECK-LABEL:  func.func @not_fusable
// CHECK-NEXT:     %[[C:.*]] = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} :
// CHECK-NEXT:     %[[R:.*]] = glow.relu %[[C]]
// CHECK-NEXT:     %[[D:.*]] = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, fused_activation = "clip", fused_activation_args = array<f32: -1.000000e+00, 1.000000e+00>}
// CHECK-NEXT:     %[[S:.*]] = glow.relu %[[D]]
// CHECK-NEXT:     %[[A:.*]] = glow.add %x, %x
// CHECK-NEXT:     %[[T:.*]] = glow.relu %[[A]]
// CHECK-NEXT:     func.return %[[R]], %[[C]], %[[S]], %[[T]]
func.func @not_fusable(%x: tensor<1x1x2x2xf32>, %w: tensor<1x1x1x1xf32>, %b: tensor<1xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  %1 = glow.relu %0 : tensor<1x1x2x2xf32>
  %2 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, fused_activation = "clip", fused_activation_args = array<f32: -1.0, 1.0>} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  %3 = glow.relu %2 : tensor<1x1x2x2xf32>
  %4 = glow.add %x, %x : tensor<1x1x2x2xf32>
  %5 = glow.relu %4 : tensor<1x1x2x2xf32>
  func.return %1, %0, %3, %5 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}

// -----

// The CPU says no for quantized convolutions; the accelerator for a relu after a
// fully_connected.
// CHECK-LABEL:  func.func @backend_says_no
// CHECK-NEXT:     %[[C:.*]] = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2x!glow.quant<i8
// CHECK-NEXT:     %[[R:.*]] = glow.relu %[[C]]
// CPU-NEXT:       %[[F:.*]] = glow.fully_connected %y, %v, %c {fused_activation = "relu"}
// CPU-NEXT:       func.return %[[R]], %[[F]]
// ACCEL-NEXT:     %[[F:.*]] = glow.fully_connected %y, %v, %c :
// ACCEL-NEXT:     %[[S:.*]] = glow.relu %[[F]]
// ACCEL-NEXT:     func.return %[[R]], %[[S]]
func.func @backend_says_no(%x: tensor<1x1x2x2x!glow.quant<i8, scale = 0.5, offset = 0>>, %w: tensor<1x1x1x1x!glow.quant<i8, scale = 0.5, offset = 0>>, %b: tensor<1xi32>, %y: tensor<2x3xf32>, %v: tensor<3x4xf32>, %c: tensor<4xf32>) -> (tensor<1x1x2x2x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<2x4xf32>) {
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<1x1x1x1x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<1xi32>) -> tensor<1x1x2x2x!glow.quant<i8, scale = 0.5, offset = 0>>
  %1 = glow.relu %0 : tensor<1x1x2x2x!glow.quant<i8, scale = 0.5, offset = 0>>
  %2 = glow.fully_connected %y, %v, %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %3 = glow.relu %2 : tensor<2x4xf32>
  func.return %1, %3 : tensor<1x1x2x2x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<2x4xf32>
}
