// RUN: glow-opt %s --split-input-file --fold-matmul-add | FileCheck %s
// RUN: glow-opt %s --split-input-file --fold-matmul-add=through-reshape=false | FileCheck %s --check-prefix=OFF

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

// -----

// A linear layer on [batch, seq, features] (ONNX MatMul of a 3-D input, BERT's): the
// product reshaped to [..., M] plus a bias broadcast onto the last dim ([M] at axis 2, or
// [1, 1, M] at axis 0), or plus a constant whose rows are equal: the fully_connected is
// reshaped instead. Only with through-reshape (off by default: the pipelines keep the
// mat_mul + bias + activation kernel).
// DEFAULT-LABEL:  func.func @reshaped_product
// DEFAULT-NOT:      glow.fully_connected
// CHECK-LABEL:  func.func @reshaped_product
// CHECK-NEXT:     %[[F0:.*]] = glow.fully_connected %x, %w, %b : (tensor<6x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT:     %[[R0:.*]] = glow.reshape %[[F0]] : tensor<6x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:     %[[C:.*]] = glow.reshape %c : tensor<1x1x4xf32> -> tensor<4xf32>
// CHECK-NEXT:     %[[F1:.*]] = glow.fully_connected %x, %w, %[[C]]
// CHECK-NEXT:     %[[R1:.*]] = glow.reshape %[[F1]] : tensor<6x4xf32> -> tensor<3x2x4xf32>
// CHECK-NEXT:     %[[K:.*]] = glow.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:     %[[F2:.*]] = glow.fully_connected %x, %w, %[[K]]
// CHECK-NEXT:     %[[R2:.*]] = glow.reshape %[[F2]] : tensor<6x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:     func.return %[[R0]], %[[R1]], %[[R2]]
func.func @reshaped_product(%x: tensor<6x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>, %c: tensor<1x1x4xf32>) -> (tensor<2x3x4xf32>, tensor<3x2x4xf32>, tensor<2x3x4xf32>) {
  %0 = glow.mat_mul %x, %w : (tensor<6x3xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  %1 = glow.reshape %0 : tensor<6x4xf32> -> tensor<2x3x4xf32>
  %bb = glow.broadcast %b {axis = 2 : i64} : tensor<4xf32> -> tensor<2x3x4xf32>
  %2 = glow.add %1, %bb : tensor<2x3x4xf32>
  %3 = glow.mat_mul %x, %w : (tensor<6x3xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  %4 = glow.reshape %3 : tensor<6x4xf32> -> tensor<3x2x4xf32>
  %cb = glow.broadcast %c {axis = 0 : i64} : tensor<1x1x4xf32> -> tensor<3x2x4xf32>
  %5 = glow.add %cb, %4 : tensor<3x2x4xf32>
  %k = glow.constant dense<[[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]], [[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]]]> : tensor<2x3x4xf32>
  %6 = glow.mat_mul %x, %w : (tensor<6x3xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  %7 = glow.reshape %6 : tensor<6x4xf32> -> tensor<2x3x4xf32>
  %8 = glow.add %7, %k : tensor<2x3x4xf32>
  func.return %2, %5, %8 : tensor<2x3x4xf32>, tensor<3x2x4xf32>, tensor<2x3x4xf32>
}

// -----

// Must not fire on a reshaped product: a reshape that moves elements across the columns
// ([6, 4] -> [2, 12]), a reshape with another user, a bias varying along the rows ([3]
// broadcast at axis 1 of [2, 3, 3]), a constant with different rows.
// CHECK-LABEL:  func.func @reshaped_not_a_linear
// CHECK-NOT:      glow.fully_connected
func.func @reshaped_not_a_linear(%x: tensor<6x3xf32>, %w: tensor<3x4xf32>, %v: tensor<3x3xf32>, %b: tensor<12xf32>, %d: tensor<4xf32>, %r: tensor<3xf32>) -> (tensor<2x12xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x3xf32>, tensor<2x3x4xf32>) {
  %0 = glow.mat_mul %x, %w : (tensor<6x3xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  %1 = glow.reshape %0 : tensor<6x4xf32> -> tensor<2x12xf32>
  %bb = glow.broadcast %b {axis = 1 : i64} : tensor<12xf32> -> tensor<2x12xf32>
  %2 = glow.add %1, %bb : tensor<2x12xf32>
  %3 = glow.mat_mul %x, %w : (tensor<6x3xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  %4 = glow.reshape %3 : tensor<6x4xf32> -> tensor<2x3x4xf32>
  %db = glow.broadcast %d {axis = 2 : i64} : tensor<4xf32> -> tensor<2x3x4xf32>
  %5 = glow.add %4, %db : tensor<2x3x4xf32>
  %6 = glow.mat_mul %x, %v : (tensor<6x3xf32>, tensor<3x3xf32>) -> tensor<6x3xf32>
  %7 = glow.reshape %6 : tensor<6x3xf32> -> tensor<2x3x3xf32>
  %rb = glow.broadcast %r {axis = 1 : i64} : tensor<3xf32> -> tensor<2x3x3xf32>
  %8 = glow.add %7, %rb : tensor<2x3x3xf32>
  %k = glow.constant dense<[[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]], [[5.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]]]> : tensor<2x3x4xf32>
  %9 = glow.mat_mul %x, %w : (tensor<6x3xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  %10 = glow.reshape %9 : tensor<6x4xf32> -> tensor<2x3x4xf32>
  %11 = glow.add %10, %k : tensor<2x3x4xf32>
  func.return %2, %5, %4, %8, %11 : tensor<2x12xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x3xf32>, tensor<2x3x4xf32>
}

// -----

// A linear layer on [N, H, W, C] (ConvNeXt's pointwise MLP: ONNX MatMul of a 4-D input
// by a 2-D weight, then Add of a [M] bias): the same fold, the reshape back to 4-D.
// OFF-LABEL:  func.func @rank4_linear
// OFF-NOT:      glow.fully_connected
// CHECK-LABEL:  func.func @rank4_linear
// CHECK-NEXT:     %[[X:.*]] = glow.reshape %x : tensor<1x2x3x5xf32> -> tensor<6x5xf32>
// CHECK-NEXT:     %[[F:.*]] = glow.fully_connected %[[X]], %w, %b : (tensor<6x5xf32>, tensor<5x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT:     %[[R:.*]] = glow.reshape %[[F]] : tensor<6x4xf32> -> tensor<1x2x3x4xf32>
// CHECK-NEXT:     func.return %[[R]]
func.func @rank4_linear(%x: tensor<1x2x3x5xf32>, %w: tensor<5x4xf32>, %b: tensor<4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = glow.reshape %x : tensor<1x2x3x5xf32> -> tensor<6x5xf32>
  %1 = glow.mat_mul %0, %w : (tensor<6x5xf32>, tensor<5x4xf32>) -> tensor<6x4xf32>
  %2 = glow.reshape %1 : tensor<6x4xf32> -> tensor<1x2x3x4xf32>
  %bb = glow.broadcast %b {axis = 3 : i64} : tensor<4xf32> -> tensor<1x2x3x4xf32>
  %3 = glow.add %2, %bb : tensor<1x2x3x4xf32>
  func.return %3 : tensor<1x2x3x4xf32>
}

// -----

// Must not fire: a batched product (batch_mat_mul: its right side is not one 2-D
// weight) plus a [M] bias; a 4-D linear plus a bias broadcast along H ([2] at axis 1)
// or plus a [1, 1, 3, 4] bias that varies along W.
// CHECK-LABEL:  func.func @rank4_not_a_linear
// CHECK-NOT:      glow.fully_connected
// CHECK:          func.return
func.func @rank4_not_a_linear(%a: tensor<2x3x5xf32>, %v: tensor<2x5x4xf32>, %x: tensor<6x5xf32>, %w: tensor<5x4xf32>, %b: tensor<4xf32>, %h: tensor<2xf32>, %c: tensor<1x1x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) {
  %0 = glow.batch_mat_mul %a, %v : (tensor<2x3x5xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
  %bb = glow.broadcast %b {axis = 2 : i64} : tensor<4xf32> -> tensor<2x3x4xf32>
  %1 = glow.add %0, %bb : tensor<2x3x4xf32>
  %2 = glow.mat_mul %x, %w : (tensor<6x5xf32>, tensor<5x4xf32>) -> tensor<6x4xf32>
  %3 = glow.reshape %2 : tensor<6x4xf32> -> tensor<1x2x3x4xf32>
  %hb = glow.broadcast %h {axis = 1 : i64} : tensor<2xf32> -> tensor<1x2x3x4xf32>
  %4 = glow.add %3, %hb : tensor<1x2x3x4xf32>
  %5 = glow.mat_mul %x, %w : (tensor<6x5xf32>, tensor<5x4xf32>) -> tensor<6x4xf32>
  %6 = glow.reshape %5 : tensor<6x4xf32> -> tensor<1x2x3x4xf32>
  %cb = glow.broadcast %c {axis = 0 : i64} : tensor<1x1x3x4xf32> -> tensor<1x2x3x4xf32>
  %7 = glow.add %6, %cb : tensor<1x2x3x4xf32>
  func.return %1, %4, %7 : tensor<2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>
}
