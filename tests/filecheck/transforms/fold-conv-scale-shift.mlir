// RUN: glow-opt %s --split-input-file --fold-conv-scale-shift --dce | FileCheck %s

// A per-channel scale ([C] broadcast at the channel dim) then ONNX's [1, C, 1, 1] shift:
// W' = W * [2, 3] = [2, 6], b' = b * [2, 3] + [1, 1] = [2, -2]; no broadcast is left.
// CHECK-LABEL:  func.func @scale_then_shift
// CHECK-NEXT:     %[[W:.*]] = glow.constant dense<[{{\[\[\[}}2.000000e+00]]], {{\[\[\[}}6.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:     %[[B:.*]] = glow.constant dense<[2.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:     %[[C:.*]] = glow.convolution %x, %[[W]], %[[B]] {kernels = array<i64: 1, 1>}
// CHECK-NEXT:     func.return %[[C]]
func.func @scale_then_shift(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = glow.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = glow.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %a = glow.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %s = glow.constant dense<1.0> : tensor<1x2x1x1xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %ab = glow.broadcast %a {axis = 1 : i64} : tensor<2xf32> -> tensor<1x2x2x2xf32>
  %1 = glow.mul %ab, %0 : tensor<1x2x2x2xf32>
  %sb = glow.broadcast %s {axis = 0 : i64} : tensor<1x2x1x1xf32> -> tensor<1x2x2x2xf32>
  %2 = glow.add %1, %sb : tensor<1x2x2x2xf32>
  func.return %2 : tensor<1x2x2x2xf32>
}

// -----

// Must not fire: the convolution's result has another user (the unscaled value is
// returned too).
// CHECK-LABEL:  func.func @two_users
// CHECK:          %[[C:.*]] = glow.convolution %x, %w, %b
// CHECK:          %[[M:.*]] = glow.mul %[[C]], %{{.*}}
// CHECK-NEXT:     func.return %[[M]], %[[C]]
func.func @two_users(%x: tensor<1x1x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = glow.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = glow.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %a = glow.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %ab = glow.broadcast %a {axis = 1 : i64} : tensor<2xf32> -> tensor<1x2x2x2xf32>
  %1 = glow.mul %0, %ab : tensor<1x2x2x2xf32>
  func.return %1, %0 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// Must not fire: the constant varies along W (broadcast at the last dim), not per channel.
// CHECK-LABEL:  func.func @not_per_channel
// CHECK:          %[[C:.*]] = glow.convolution %x, %w, %b
// CHECK:          glow.broadcast
// CHECK:          glow.mul %[[C]]
func.func @not_per_channel(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = glow.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = glow.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %a = glow.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %ab = glow.broadcast %a {axis = 3 : i64} : tensor<2xf32> -> tensor<1x2x2x2xf32>
  %1 = glow.mul %0, %ab : tensor<1x2x2x2xf32>
  func.return %1 : tensor<1x2x2x2xf32>
}

// -----

// Must not fire: a fused activation sits between the convolution and the scale.
// CHECK-LABEL:  func.func @fused_relu
// CHECK:          glow.convolution {{.*}}fused_activation = "relu"
// CHECK:          glow.mul
func.func @fused_relu(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = glow.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = glow.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %a = glow.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, fused_activation = "relu"} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %ab = glow.broadcast %a {axis = 1 : i64} : tensor<2xf32> -> tensor<1x2x2x2xf32>
  %1 = glow.mul %0, %ab : tensor<1x2x2x2xf32>
  func.return %1 : tensor<1x2x2x2xf32>
}
