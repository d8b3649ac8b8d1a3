// RUN: glow-opt %s --split-input-file --fold-batchnorm | FileCheck %s

// Convolution + batch norm: with a = scale / sqrt(var + eps) = [1, 0.25],
// W' = W * a = [1, 0.5] and b' = (b - mean) * a + bias = [1, -0.5].
// CHECK-LABEL:  func.func @conv
// CHECK-NEXT:     %[[W:.*]] = glow.constant dense<[{{\[\[\[}}1.000000e+00]]], {{\[\[\[}}5.000000e-01]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:     %[[B:.*]] = glow.constant dense<[1.000000e+00, -5.000000e-01]> : tensor<2xf32>
// CHECK-NEXT:     %[[C:.*]] = glow.convolution %x, %[[W]], %[[B]] {kernels = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:     func.return %[[C]]
func.func @conv(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = glow.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = glow.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %scale = glow.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %bias = glow.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = glow.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %var = glow.constant dense<[3.0, 15.0]> : tensor<2xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %1 = glow.batch_normalization %0, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %1 : tensor<1x2x2x2xf32>
}

// -----

// fully_connected (weights [K, M]): columns are scaled, a = [1, 2]: W' = [[1, 4], [3, 8]],
// b' = (0 - mean) * a = [0, -2].
// CHECK-LABEL:  func.func @fully_connected
// CHECK-NEXT:     %[[W:.*]] = glow.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [3.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:     %[[B:.*]] = glow.constant dense<[0.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:     %[[F:.*]] = glow.fully_connected %x, %[[W]], %[[B]]
// CHECK-NEXT:     func.return %[[F]]
func.func @fully_connected(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = glow.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = glow.splat {value = 0.0 : f32} : tensor<2xf32>
  %scale = glow.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %zero = glow.constant dense<0.0> : tensor<2xf32>
  %mean = glow.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = glow.fully_connected %x, %w, %b : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %1 = glow.batch_normalization %0, %scale, %zero, %mean, %zero {epsilon = 1.0 : f32} : (tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  func.return %1 : tensor<3x2xf32>
}

// -----

// NHWC: the channel dim is 3, and the filter (OHWI) is still scaled along its first dim:
// a = [1, 0.5], W' = [1, 2], b' = [0.5, -0.5].
// CHECK-LABEL:  func.func @conv_nhwc
// CHECK-NEXT:     %[[W:.*]] = glow.constant dense<[{{\[\[\[}}1.000000e+00]]], {{\[\[\[}}2.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:     %[[B:.*]] = glow.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>
// CHECK-NEXT:     %[[C:.*]] = glow.convolution %x, %[[W]], %[[B]] {kernels = array<i64: 1, 1>, layout = "NHWC"}
// CHECK-NEXT:     func.return %[[C]]
func.func @conv_nhwc(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  %w = glow.constant dense<[[[[1.0]]], [[[4.0]]]]> : tensor<2x1x1x1xf32>
  %b = glow.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %scale = glow.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %zero = glow.splat {value = 0.0 : f32} : tensor<2xf32>
  %var = glow.constant dense<3.0> : tensor<2xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, layout = "NHWC"} : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %1 = glow.batch_normalization %0, %scale, %zero, %zero, %var {channel_idx = 3 : i64, epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %1 : tensor<1x2x2x2xf32>
}

// -----

// Must not fire: the convolution result has another user (the unnormalized value is
// returned too).
// CHECK-LABEL:  func.func @conv_two_users
// CHECK:          %[[C:.*]] = glow.convolution %x, %w, %b
// CHECK-NEXT:     %[[N:.*]] = glow.batch_normalization %[[C]]
// CHECK-NEXT:     func.return %[[N]], %[[C]]
func.func @conv_two_users(%x: tensor<1x1x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = glow.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = glow.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %p = glow.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %1 = glow.batch_normalization %0, %p, %p, %p, %p : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %1, %0 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// Must not fire: the filter constant is shared with another convolution (folding would
// duplicate the weights).
// CHECK-LABEL:  func.func @shared_filter
// CHECK:          glow.batch_normalization
func.func @shared_filter(%x: tensor<1x1x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = glow.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = glow.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %p = glow.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %1 = glow.batch_normalization %0, %p, %p, %p, %p : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %2 = glow.convolution %x, %w, %p {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %1, %2 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// Must not fire: non-constant filter; non-constant batch-norm parameters; a fused
// activation between the convolution and the batch norm; a batch norm over another dim.
// CHECK-LABEL:  func.func @not_foldable
// CHECK-COUNT-4:  glow.batch_normalization
func.func @not_foldable(%x: tensor<1x2x2x2xf32>, %wi: tensor<2x2x1x1xf32>, %mi: tensor<2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w0 = glow.constant dense<1.0> : tensor<2x2x1x1xf32>
  %w1 = glow.constant dense<2.0> : tensor<2x2x1x1xf32>
  %w2 = glow.constant dense<3.0> : tensor<2x2x1x1xf32>
  %b = glow.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %p = glow.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %0 = glow.convolution %x, %wi, %b {kernels = array<i64: 1, 1>} : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %1 = glow.batch_normalization %0, %p, %p, %p, %p : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %2 = glow.convolution %x, %w0, %b {kernels = array<i64: 1, 1>} : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %3 = glow.batch_normalization %2, %p, %p, %mi, %p : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %4 = glow.convolution %x, %w1, %b {kernels = array<i64: 1, 1>, fused_activation = "relu"} : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %5 = glow.batch_normalization %4, %p, %p, %p, %p : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %6 = glow.convolution %x, %w2, %b {kernels = array<i64: 1, 1>} : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %7 = glow.batch_normalization %6, %p, %p, %p, %p {channel_idx = 2 : i64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %1, %3, %5, %7 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}
