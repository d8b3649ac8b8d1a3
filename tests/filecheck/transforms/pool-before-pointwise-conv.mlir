// RUN: glow-opt %s --split-input-file --pool-before-pointwise-conv | FileCheck %s

// A DenseNet transition: the 2x2/2 pool moves in front of the 1x1 convolution.
// CHECK-LABEL: func.func @transition
// CHECK-NEXT:    %[[W:.*]] = glow.constant
// CHECK-NEXT:    %[[B:.*]] = glow.constant
// CHECK-NEXT:    %[[P:.*]] = glow.avg_pool %x {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, count_include_pad = true} : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xf32>
// CHECK-NEXT:    %[[C:.*]] = glow.convolution %[[P]], %[[W]], %[[B]] {kernels = array<i64: 1, 1>{{.*}}} : (tensor<1x8x3x3xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @transition(%x: tensor<1x8x6x6xf32>) -> tensor<1x4x3x3xf32> {
  %w = glow.constant dense<0.5> : tensor<4x8x1x1xf32>
  %b = glow.constant dense<1.0> : tensor<4xf32>
  %c = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %p = glow.avg_pool %c {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, count_include_pad = true} : tensor<1x4x6x6xf32> -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// NHWC, grouped, overlapping 3x3/2 windows: still one affine map per pixel.
// CHECK-LABEL: func.func @nhwc_grouped
// CHECK:         %[[P:.*]] = glow.avg_pool %x {{.*}}layout = "NHWC"{{.*}} : tensor<1x7x7x4xf32> -> tensor<1x3x3x4xf32>
// CHECK-NEXT:    glow.convolution %[[P]], {{.*}}group = 2 : i64{{.*}} -> tensor<1x3x3x6xf32>
func.func @nhwc_grouped(%x: tensor<1x7x7x4xf32>) -> tensor<1x3x3x6xf32> {
  %w = glow.constant dense<0.5> : tensor<6x1x1x2xf32>
  %b = glow.constant dense<1.0> : tensor<6xf32>
  %c = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, group = 2 : i64, layout = "NHWC"} : (tensor<1x7x7x4xf32>, tensor<6x1x1x2xf32>, tensor<6xf32>) -> tensor<1x7x7x6xf32>
  %p = glow.avg_pool %c {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, layout = "NHWC"} : tensor<1x7x7x6xf32> -> tensor<1x3x3x6xf32>
  func.return %p : tensor<1x3x3x6xf32>
}

// -----

// Must not fire: a 3x3 convolution, a strided 1x1, a padded 1x1, a fused activation,
// a padded pool, a convolution result with another user, a pool keeping every pixel,
// layouts that differ.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     glow.avg_pool %x
// CHECK-COUNT-8: glow.convolution %x
// CHECK-NOT:     glow.avg_pool %x
func.func @kept(%x: tensor<1x8x6x6xf32>) -> (tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x2x3x6xf32>) {
  %w = glow.constant dense<0.5> : tensor<4x8x1x1xf32>
  %w3 = glow.constant dense<0.5> : tensor<4x8x3x3xf32>
  %b = glow.constant dense<1.0> : tensor<4xf32>
  %c0 = glow.convolution %x, %w3, %b {kernels = array<i64: 3, 3>} : (tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %p0 = glow.avg_pool %c0 {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x4x4xf32> -> tensor<1x4x2x2xf32>
  %c1 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  %p1 = glow.avg_pool %c1 {kernels = array<i64: 3, 3>, strides = array<i64: 3, 3>} : tensor<1x4x3x3xf32> -> tensor<1x4x1x1xf32>
  %c2 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %p2 = glow.avg_pool %c2 {kernels = array<i64: 2, 2>, strides = array<i64: 3, 3>} : tensor<1x4x8x8xf32> -> tensor<1x4x3x3xf32>
  %c3 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, fused_activation = "relu"} : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %p3 = glow.avg_pool %c3 {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x6x6xf32> -> tensor<1x4x3x3xf32>
  %c4 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %p4 = glow.avg_pool %c4 {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true} : tensor<1x4x6x6xf32> -> tensor<1x4x4x4xf32>
  %c5 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %p5 = glow.avg_pool %c5 {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x6x6xf32> -> tensor<1x4x3x3xf32>
  %c6 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %p6 = glow.avg_pool %c6 {kernels = array<i64: 1, 1>} : tensor<1x4x6x6xf32> -> tensor<1x4x6x6xf32>
  %c7 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %p7 = glow.avg_pool %c7 {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NHWC"} : tensor<1x4x6x6xf32> -> tensor<1x2x3x6xf32>
  func.return %p0, %p1, %p2, %p3, %p4, %p5, %c5, %p6, %p7 : tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x2x3x6xf32>
}

// -----

// Must not fire: a 64 -> 2 convolution before an overlapping 3x3/1 pool costs more moved
// (the pool would sum 64 channels' windows instead of 2).
// CHECK-LABEL: func.func @narrowing
// CHECK:         %[[C:.*]] = glow.convolution %x
// CHECK-NEXT:    glow.avg_pool %[[C]]
func.func @narrowing(%x: tensor<1x64x8x8xf32>) -> tensor<1x2x6x6xf32> {
  %w = glow.constant dense<0.5> : tensor<2x64x1x1xf32>
  %b = glow.constant dense<1.0> : tensor<2xf32>
  %c = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<2x64x1x1xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %p = glow.avg_pool %c {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>} : tensor<1x2x8x8xf32> -> tensor<1x2x6x6xf32>
  func.return %p : tensor<1x2x6x6xf32>
}
