// RUN: glow-opt %s --split-input-file --fold-matmul-add | FileCheck %s

// batched_add of any [M] slice, constant or not.
// CHECK-LABEL:  func.func @batched_add
// CHECK-NEXT:     %[[F:.*]] = glow.fully_connected %x, %w, %b : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:     func.return %[[F]]
func.func @batched_add(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = glow.mat_mul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = glow.batched_add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %1 : tensor<2x4xf32>
}

// -----

// add of a broadcast bias, on either side: [M] at axis 1, or [1, M] at axis 0 (reshaped).
// CHECK-LABEL:  func.func @add_broadcast
// CHECK-NEXT:     %[[F0:.*]] = glow.fully_connected %x, %w, %b : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:     %[[R:.*]] = glow.reshape %c : tensor<1x4xf32> -> tensor<4xf32>
// CHECK-NEXT:     %[[F1:.*]] = glow.fully_connected %y, %w, %[[R]]
// CHECK-NEXT:     func.return %[[F0]], %[[F1]]
func.func @add_broadcast(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>, %c: tensor<1x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = glow.mat_mul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %bb = glow.broadcast %b {axis = 1 : i64} : tensor<4xf32> -> tensor<2x4xf32>
  %1 = glow.add %0, %bb : tensor<2x4xf32>
  %2 = glow.mat_mul %y, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %cb = glow.broadcast %c {axis = 0 : i64} : tensor<1x4xf32> -> tensor<2x4xf32>
  %3 = glow.add %cb, %2 : tensor<2x4xf32>
  func.return %1, %3 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// add of a constant whose rows are equal: its first row is the bias (a splat stays a splat).
// CHECK-LABEL:  func.func @add_constant
// CHECK-NEXT:     %[[B:.*]] = glow.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:     %[[F0:.*]] = glow.fully_connected %x, %w, %[[B]] : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:     %[[S:.*]] = glow.constant dense<5.000000e-01> : tensor<2xf32>
// CHECK-NEXT:     %[[F1:.*]] = glow.fully_connected %y, %w, %[[S]]
// CHECK-NEXT:     func.return %[[F0]], %[[F1]]
func.func @add_constant(%x: tensor<3x2xf32>, %y: tensor<3x2xf32>, %w: tensor<2x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %c = glow.constant dense<[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]> : tensor<3x2xf32>
  %0 = glow.mat_mul %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %1 = glow.add %c, %0 : tensor<3x2xf32>
  %h = glow.splat {value = 0.5 : f32} : tensor<3x2xf32>
  %2 = glow.mat_mul %y, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %3 = glow.add %2, %h : tensor<3x2xf32>
  func.return %1, %3 : tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// Must not fire: the product has another user.
// CHECK-LABEL:  func.func @product_two_users
// CHECK-NEXT:     %[[M:.*]] = glow.mat_mul %x, %w
// CHECK-NEXT:     %[[A:.*]] = glow.batched_add %[[M]], %b
// CHECK-NEXT:     func.return %[[A]], %[[M]]
func.func @product_two_users(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = glow.mat_mul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = glow.batched_add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %1, %0 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Must not fire: an add of a non-constant full tensor, of a constant with different rows,
// of a bias broadcast along the rows ([N] at axis 0), and an integer product.
// CHECK-LABEL:  func.func @not_a_bias
// CHECK-NOT:      glow.fully_connected
func.func @not_a_bias(%x: tensor<2x2xf32>, %w: tensor<2x2xf32>, %z: tensor<2x2xf32>, %r: tensor<2xf32>, %xi: tensor<2x2xi32>, %bi: tensor<2xi32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xi32>) {
  %0 = glow.mat_mul %x, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = glow.add %0, %z : tensor<2x2xf32>
  %c = glow.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %2 = glow.mat_mul %z, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %3 = glow.add %2, %c : tensor<2x2xf32>
  %rb = glow.broadcast %r {axis = 0 : i64} : tensor<2xf32> -> tensor<2x2xf32>
  %4 = glow.mat_mul %w, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %5 = glow.add %4, %rb : tensor<2x2xf32>
  %6 = glow.mat_mul %xi, %xi : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  %7 = glow.batched_add %6, %bi : (tensor<2x2xi32>, tensor<2xi32>) -> tensor<2x2xi32>
  func.return %1, %3, %5, %7 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xi32>
}
