// RUN: glow-opt %s --split-input-file --trim-padded-conv-taps | FileCheck %s

// ASPP-like: a 3x3 with dilation and pads 6 on a 4x4 map. Output o reads row o - 6 + 6k
// through tap k: k = 0 reads -6..-3, k = 2 reads 6..9, only the centre reads the input.
// It becomes a 1x1 (the centre weight, 5) with zero pads and dilation 1; the fused
// activation stays; the old filter, now unused, is gone.
// CHECK-LABEL:  func.func @aspp
// CHECK-NEXT:     %[[W:.*]] = glow.constant dense<5.000000e+00> : tensor<1x1x1x1xf32>
// CHECK-NEXT:     %[[C:.*]] = glow.convolution %x, %[[W]], %b {kernels = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, fused_activation = "relu"} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
// CHECK-NEXT:     func.return %[[C]]
func.func @aspp(%x: tensor<1x1x4x4xf32>, %b: tensor<1xf32>) -> tensor<1x1x4x4xf32> {
  %w = glow.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 6, 6, 6, 6>, dilation = array<i64: 6, 6>, fused_activation = "relu"} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

// NHWC with two groups (filter OHWI): a 1x3 kernel, dilation and pads 5 on a width of 2;
// each filter keeps its middle column.
// CHECK-LABEL:  func.func @nhwc_group
// CHECK-NEXT:     %[[W:.*]] = glow.constant dense<[{{\[\[\[}}3.000000e+00, 4.000000e+00]]], {{\[\[\[}}9.000000e+00, 1.000000e+01]]]]> : tensor<2x1x1x2xf32>
// CHECK-NEXT:     %[[C:.*]] = glow.convolution %x, %[[W]], %b {kernels = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, group = 2 : i64, layout = "NHWC"}
// CHECK-NEXT:     func.return %[[C]]
func.func @nhwc_group(%x: tensor<1x2x2x4xf32>, %b: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  %w = glow.constant dense<[[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]], [[[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]]]> : tensor<2x1x3x2xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 3>, pads = array<i64: 0, 5, 0, 5>, dilation = array<i64: 1, 5>, group = 2 : i64, layout = "NHWC"} : (tensor<1x2x2x4xf32>, tensor<2x1x3x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %0 : tensor<1x2x2x2xf32>
}

// -----

// One side only: rows of a 3x1 kernel with dilation 2 and a top pad of 4 on 4 rows. Tap 0
// reads -4..-1 (cut), taps 1 and 2 read -2..1 and 0..3 (kept): a 2x1 kernel, still dilated
// by 2, with a top pad of 4 - 2 = 2; the columns are untouched.
// CHECK-LABEL:  func.func @one_side
// CHECK-NEXT:     %[[W:.*]] = glow.constant dense<[{{\[\[\[}}2.000000e+00], [3.000000e+00]]]]> : tensor<1x1x2x1xf32>
// CHECK-NEXT:     %[[C:.*]] = glow.convolution %x, %[[W]], %b {kernels = array<i64: 2, 1>, pads = array<i64: 2, 0, 0, 0>, dilation = array<i64: 2, 1>}
// CHECK-NEXT:     func.return %[[C]]
func.func @one_side(%x: tensor<1x1x4x4xf32>, %b: tensor<1xf32>) -> tensor<1x1x4x4xf32> {
  %w = glow.constant dense<[[[[1.0], [2.0], [3.0]]]]> : tensor<1x1x3x1xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 1>, pads = array<i64: 4, 0, 0, 0>, dilation = array<i64: 2, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

// Must not fire: a plain 3x3 with pads 1 (every tap reads the input for some output).
// CHECK-LABEL:  func.func @small_dilation
// CHECK-NEXT:     %[[W:.*]] = glow.constant
// CHECK-NEXT:     glow.convolution %x, %[[W]], %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} :
func.func @small_dilation(%x: tensor<1x1x4x4xf32>, %b: tensor<1xf32>) -> tensor<1x1x4x4xf32> {
  %w = glow.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

// Must not fire: the filter is an argument, not a constant (nothing to slice).
// CHECK-LABEL:  func.func @not_constant
// CHECK-NEXT:     glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 6, 6, 6, 6>, dilation = array<i64: 6, 6>} :
func.func @not_constant(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>, %b: tensor<1xf32>) -> tensor<1x1x4x4xf32> {
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 6, 6, 6, 6>, dilation = array<i64: 6, 6>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

// Must not fire: dilation and pads 3 on 4 rows and columns. Tap 0 reads -3..0 and tap 2
// reads 3..6: each touches the input at one border output only, which is enough.
// CHECK-LABEL:  func.func @border
// CHECK-NEXT:     %[[W:.*]] = glow.constant
// CHECK-NEXT:     glow.convolution %x, %[[W]], %b {kernels = array<i64: 3, 3>, pads = array<i64: 3, 3, 3, 3>, dilation = array<i64: 3, 3>} :
func.func @border(%x: tensor<1x1x4x4xf32>, %b: tensor<1xf32>) -> tensor<1x1x4x4xf32> {
  %w = glow.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 3, 3, 3, 3>, dilation = array<i64: 3, 3>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}
