// RUN: glow-opt %s --split-input-file --merge-pad-into-conv | FileCheck %s

// A zero pad of H and W (ONNX order: begins N, C, H, W then ends) adds to the
// convolution's [top, left, bottom, right] pads.
// CHECK-LABEL:  func.func @nchw
// CHECK-NEXT:     %[[C:.*]] = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 2, 3, 1, 5>, strides = array<i64: 2, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x3x10xf32>
// CHECK-NEXT:     func.return %[[C]]
func.func @nchw(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x3x3x10xf32> {
  %p = glow.pad %x {pads = array<i64: 0, 0, 1, 2, 0, 0, 0, 4>} : tensor<1x2x4x4xf32> -> tensor<1x2x5x10xf32>
  %0 = glow.convolution %p, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>} : (tensor<1x2x5x10xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x3x10xf32>
  func.return %0 : tensor<1x3x3x10xf32>
}

// -----

// NHWC: the spatial dims are 1 and 2; a convolution without pads gets the pad's; the
// other attributes (fused activation, group) are kept.
// CHECK-LABEL:  func.func @nhwc
// CHECK-NEXT:     %[[C:.*]] = glow.convolution %x, %w, %b {kernels = array<i64: 2, 2>, layout = "NHWC", group = 2 : i64, fused_activation = "relu", pads = array<i64: 1, 0, 0, 1>}
// CHECK-NEXT:     func.return %[[C]]
func.func @nhwc(%x: tensor<1x3x3x2xf32>, %w: tensor<2x2x2x1xf32>, %b: tensor<2xf32>) -> tensor<1x3x3x2xf32> {
  %p = glow.pad %x {pads = array<i64: 0, 1, 0, 0, 0, 0, 1, 0>, value = 0.0 : f32, mode = "constant"} : tensor<1x3x3x2xf32> -> tensor<1x4x4x2xf32>
  %0 = glow.convolution %p, %w, %b {kernels = array<i64: 2, 2>, layout = "NHWC", group = 2 : i64, fused_activation = "relu"} : (tensor<1x4x4x2xf32>, tensor<2x2x2x1xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
  func.return %0 : tensor<1x3x3x2xf32>
}

// -----

// Must not fire: the padded tensor is also returned (two users).
// CHECK-LABEL:  func.func @two_users
// CHECK-NEXT:     %[[P:.*]] = glow.pad %x
// CHECK-NEXT:     %[[C:.*]] = glow.convolution %[[P]], %w, %b {kernels = array<i64: 1, 1>}
// CHECK-NEXT:     func.return %[[C]], %[[P]]
func.func @two_users(%x: tensor<1x1x2x2xf32>, %w: tensor<1x1x1x1xf32>, %b: tensor<1xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  %p = glow.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  %0 = glow.convolution %p, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  func.return %0, %p : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}

// -----

// Must not fire: a non-zero pad value, a reflect pad, a pad of the channels, a pad of the
// batch, and a pad feeding the filter instead of the input.
// CHECK-LABEL:  func.func @not_mergeable
// CHECK:          %[[P0:.*]] = glow.pad %x {{.*}}value = 1.0
// CHECK-NEXT:     glow.convolution %[[P0]], %w, %b {kernels = array<i64: 1, 1>} :
// CHECK-NEXT:     %[[P1:.*]] = glow.pad %x {{.*}}mode = "reflect"
// CHECK-NEXT:     glow.convolution %[[P1]], %w, %b {kernels = array<i64: 1, 1>} :
// CHECK-NEXT:     %[[P2:.*]] = glow.pad %x
// CHECK-NEXT:     glow.convolution %[[P2]], %w2, %b {kernels = array<i64: 1, 1>} :
// CHECK-NEXT:     %[[P3:.*]] = glow.pad %x
// CHECK-NEXT:     glow.convolution %[[P3]], %w, %b {kernels = array<i64: 1, 1>} :
// CHECK-NEXT:     glow.slice
// CHECK-NEXT:     %[[P4:.*]] = glow.pad %f
// CHECK-NEXT:     glow.convolution %x, %[[P4]], %b {kernels = array<i64: 1, 1>} :
func.func @not_mergeable(%x: tensor<1x1x2x2xf32>, %w: tensor<1x1x1x1xf32>, %b: tensor<1xf32>, %f: tensor<1x1x1x1xf32>, %w2: tensor<1x2x1x1xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  %p0 = glow.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 1.0 : f32} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  %0 = glow.convolution %p0, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  %p1 = glow.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, mode = "reflect"} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  %1 = glow.convolution %p1, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  %p2 = glow.pad %x {pads = array<i64: 0, 1, 0, 0, 0, 0, 0, 0>} : tensor<1x1x2x2xf32> -> tensor<1x2x2x2xf32>
  %2 = glow.convolution %p2, %w2, %b {kernels = array<i64: 1, 1>} : (tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  %p3 = glow.pad %x {pads = array<i64: 1, 0, 0, 0, 0, 0, 0, 0>} : tensor<1x1x2x2xf32> -> tensor<2x1x2x2xf32>
  %3 = glow.convolution %p3, %w, %b {kernels = array<i64: 1, 1>} : (tensor<2x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<2x1x2x2xf32>
  %s = glow.slice %3 {start = array<i64: 1, 0, 0, 0>} : tensor<2x1x2x2xf32> -> tensor<1x1x2x2xf32>
  %p4 = glow.pad %f {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  %4 = glow.convolution %x, %p4, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  func.return %0, %1, %2, %s, %4 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}
