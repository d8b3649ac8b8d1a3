// RUN: glow-opt %s --split-input-file --sink-transposes | FileCheck %s

// A transpose sinks through a chain of activations until it meets the next transpose.
// CHECK-LABEL: func.func @activations
// CHECK-NEXT:    %[[R:.*]] = glow.relu %x : tensor<2x3x4xf32>
// CHECK-NEXT:    %[[C:.*]] = glow.clip %[[R]] {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<2x3x4xf32>
// CHECK-NEXT:    %[[S:.*]] = glow.sigmoid %[[C]] : tensor<2x3x4xf32>
// CHECK-NEXT:    %[[L:.*]] = glow.leaky_relu %[[S]] {alpha = 1.000000e-01 : f32} : tensor<2x3x4xf32>
// CHECK-NEXT:    %[[T1:.*]] = glow.transpose %[[L]] {shuffle = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %[[T2:.*]] = glow.transpose %[[T1]] {shuffle = array<i64: 1, 2, 0>} : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    func.return %[[T2]]
func.func @activations(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %t = glow.transpose %x {shuffle = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %r = glow.relu %t : tensor<4x2x3xf32>
  %c = glow.clip %r {min = 0.0 : f32, max = 6.0 : f32} : tensor<4x2x3xf32>
  %s = glow.sigmoid %c : tensor<4x2x3xf32>
  %l = glow.leaky_relu %s {alpha = 0.1 : f32} : tensor<4x2x3xf32>
  %b = glow.transpose %l {shuffle = array<i64: 1, 2, 0>} : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
  func.return %b : tensor<2x3x4xf32>
}

// -----

// Binary ops: both operands transposed alike, or one a splat (rebuilt in the new shape),
// or a single-use constant (its data transposed: [[1,2,3],[4,5,6]] -> [[1,4],[2,5],[3,6]]).
// CHECK-LABEL: func.func @binary
// CHECK-NEXT:    %[[A:.*]] = glow.add %x, %y : tensor<3x2xf32>
// CHECK-NEXT:    %[[H:.*]] = glow.splat {value = 5.000000e-01 : f32} : tensor<3x2xf32>
// CHECK-NEXT:    %[[M:.*]] = glow.mul %[[H]], %[[A]] : tensor<3x2xf32>
// CHECK-NEXT:    %[[C:.*]] = glow.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    %[[S:.*]] = glow.sub %[[M]], %[[C]] : tensor<3x2xf32>
// CHECK-NEXT:    %[[T:.*]] = glow.transpose %[[S]] {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @binary(%x: tensor<3x2xf32>, %y: tensor<3x2xf32>) -> tensor<2x3xf32> {
  %tx = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %ty = glow.transpose %y {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %a = glow.add %tx, %ty : tensor<2x3xf32>
  %h = glow.splat {value = 0.5 : f32} : tensor<2x3xf32>
  %m = glow.mul %h, %a : tensor<2x3xf32>
  %c = glow.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %s = glow.sub %m, %c : tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}

// -----

// Must not fire: the shuffles differ.
// CHECK-LABEL: func.func @mismatched_shuffles
// CHECK-NEXT:    glow.transpose %x {shuffle = array<i64: 2, 0, 1>}
// CHECK-NEXT:    glow.transpose %y {shuffle = array<i64: 1, 2, 0>}
// CHECK-NEXT:    glow.add
// CHECK-NEXT:    func.return
func.func @mismatched_shuffles(%x: tensor<2x2x2xf32>, %y: tensor<2x2x2xf32>) -> tensor<2x2x2xf32> {
  %tx = glow.transpose %x {shuffle = array<i64: 2, 0, 1>} : tensor<2x2x2xf32> -> tensor<2x2x2xf32>
  %ty = glow.transpose %y {shuffle = array<i64: 1, 2, 0>} : tensor<2x2x2xf32> -> tensor<2x2x2xf32>
  %a = glow.add %tx, %ty : tensor<2x2x2xf32>
  func.return %a : tensor<2x2x2xf32>
}

// -----

// Must not fire: the other operand is neither a transpose nor a constant, or the
// constant is used twice (transposing it would store the weight twice).
// CHECK-LABEL: func.func @other_operands
// CHECK-NEXT:    %[[T:.*]] = glow.transpose %x
// CHECK-NEXT:    glow.add %[[T]], %y
// CHECK-NEXT:    %[[U:.*]] = glow.transpose %x
// CHECK-NEXT:    %[[C:.*]] = glow.constant
// CHECK-NEXT:    glow.mul %[[U]], %[[C]]
// CHECK-NEXT:    glow.sub %y, %[[C]]
func.func @other_operands(%x: tensor<3x2xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %t = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %a = glow.add %t, %y : tensor<2x3xf32>
  %u = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %c = glow.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %m = glow.mul %u, %c : tensor<2x3xf32>
  %s = glow.sub %y, %c : tensor<2x3xf32>
  func.return %a, %m, %s : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Must not fire: the transpose has another user that stays above it (the return).
// CHECK-LABEL: func.func @shared_transpose
// CHECK-NEXT:    %[[T:.*]] = glow.transpose %x
// CHECK-NEXT:    %[[R:.*]] = glow.relu %[[T]]
// CHECK-NEXT:    func.return %[[T]], %[[R]]
func.func @shared_transpose(%x: tensor<3x2xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %t = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %r = glow.relu %t : tensor<2x3xf32>
  func.return %t, %r : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Every user sinks: the transpose goes below both and disappears from above them.
// CHECK-LABEL: func.func @all_users_sink
// CHECK-NEXT:    %[[R:.*]] = glow.relu %x : tensor<3x2xf32>
// CHECK-NEXT:    %[[TR:.*]] = glow.transpose %[[R]] {shuffle = array<i64: 1, 0>}
// CHECK-NEXT:    %[[H:.*]] = glow.tanh %x : tensor<3x2xf32>
// CHECK-NEXT:    %[[TH:.*]] = glow.transpose %[[H]] {shuffle = array<i64: 1, 0>}
// CHECK-NEXT:    func.return %[[TR]], %[[TH]]
func.func @all_users_sink(%x: tensor<3x2xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %t = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %r = glow.relu %t : tensor<2x3xf32>
  %h = glow.tanh %t : tensor<2x3xf32>
  func.return %r, %h : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Batch normalization: NHWC -> NCHW transpose, channel 1 of the transposed tensor is
// dim 3 of the original.
// CHECK-LABEL: func.func @batchnorm
// CHECK-NEXT:    %[[B:.*]] = glow.batch_normalization %x, %s, %b, %m, %v {channel_idx = 3 : i64, epsilon = 1.000000e-03 : f32} : (tensor<1x4x5x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x5x3xf32>
// CHECK-NEXT:    %[[T:.*]] = glow.transpose %[[B]] {shuffle = array<i64: 0, 3, 1, 2>} : tensor<1x4x5x3xf32> -> tensor<1x3x4x5xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @batchnorm(%x: tensor<1x4x5x3xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<1x3x4x5xf32> {
  %t = glow.transpose %x {shuffle = array<i64: 0, 3, 1, 2>} : tensor<1x4x5x3xf32> -> tensor<1x3x4x5xf32>
  %n = glow.batch_normalization %t, %s, %b, %m, %v {channel_idx = 1 : i64, epsilon = 0.001 : f32} : (tensor<1x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x5xf32>
  func.return %n : tensor<1x3x4x5xf32>
}

// -----

// Concat of transposes with one shuffle: dim 0 of the transposed tensors is dim 1 of
// the originals.
// CHECK-LABEL: func.func @concat
// CHECK-NEXT:    %[[C:.*]] = glow.concat %x, %y {dim = 1 : i64} : (tensor<3x2xf32>, tensor<3x4xf32>) -> tensor<3x6xf32>
// CHECK-NEXT:    %[[T:.*]] = glow.transpose %[[C]] {shuffle = array<i64: 1, 0>} : tensor<3x6xf32> -> tensor<6x3xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @concat(%x: tensor<3x2xf32>, %y: tensor<3x4xf32>) -> tensor<6x3xf32> {
  %tx = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %ty = glow.transpose %y {shuffle = array<i64: 1, 0>} : tensor<3x4xf32> -> tensor<4x3xf32>
  %c = glow.concat %tx, %ty {dim = 0 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
  func.return %c : tensor<6x3xf32>
}

// -----

// Must not fire: one concat input is not a transpose.
// CHECK-LABEL: func.func @concat_mixed
// CHECK-NEXT:    glow.transpose
// CHECK-NEXT:    glow.concat
// CHECK-NEXT:    func.return
func.func @concat_mixed(%x: tensor<3x2xf32>, %y: tensor<4x3xf32>) -> tensor<6x3xf32> {
  %tx = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %c = glow.concat %tx, %y {dim = 0 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
  func.return %c : tensor<6x3xf32>
}

// -----

// Casts, quantization and comparisons keep their element types.
// CHECK-LABEL: func.func @casts
// CHECK-NEXT:    %[[Q:.*]] = glow.quantize %x : tensor<3x2xf32> -> tensor<3x2x!glow.quant<i8, scale = 0.1, offset = 0>>
// CHECK-NEXT:    %[[D:.*]] = glow.dequantize %[[Q]] : tensor<3x2x!glow.quant<i8, scale = 0.1, offset = 0>> -> tensor<3x2xf32>
// CHECK-NEXT:    %[[I:.*]] = glow.convert_to %[[D]] : tensor<3x2xf32> -> tensor<3x2xi32>
// CHECK-NEXT:    %[[E:.*]] = glow.cmp_eq %[[I]], %[[I]] : tensor<3x2xi32> -> tensor<3x2xi1>
// CHECK-NEXT:    %[[T:.*]] = glow.transpose %[[E]] {shuffle = array<i64: 1, 0>} : tensor<3x2xi1> -> tensor<2x3xi1>
// CHECK-NEXT:    func.return %[[T]]
func.func @casts(%x: tensor<3x2xf32>) -> tensor<2x3xi1> {
  %t = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %q = glow.quantize %t : tensor<2x3xf32> -> tensor<2x3x!glow.quant<i8, scale = 0.1, offset = 0>>
  %d = glow.dequantize %q : tensor<2x3x!glow.quant<i8, scale = 0.1, offset = 0>> -> tensor<2x3xf32>
  %i = glow.convert_to %d : tensor<2x3xf32> -> tensor<2x3xi32>
  %e = glow.cmp_eq %i, %i : tensor<2x3xi32> -> tensor<2x3xi1>
  func.return %e : tensor<2x3xi1>
}

// -----

// Diamonds: the mul waits for the sigmoid to sink, the select for the comparison; the
// splat shared by cmp_lt and select is rebuilt for each (splats are free).
// CHECK-LABEL: func.func @diamond
// CHECK-NEXT:    %[[S:.*]] = glow.sigmoid %x : tensor<3x2xf32>
// CHECK-NEXT:    %[[M:.*]] = glow.mul %x, %[[S]] : tensor<3x2xf32>
// CHECK-NEXT:    %[[Z:.*]] = glow.splat {value = 0.000000e+00 : f32} : tensor<3x2xf32>
// CHECK-NEXT:    %[[C:.*]] = glow.cmp_lt %[[M]], %[[Z]] : tensor<3x2xf32> -> tensor<3x2xi1>
// CHECK-NEXT:    %[[Z2:.*]] = glow.splat {value = 0.000000e+00 : f32} : tensor<3x2xf32>
// CHECK-NEXT:    %[[R:.*]] = glow.select %[[C]], %[[Z2]], %[[M]] : tensor<3x2xi1>, tensor<3x2xf32>
// CHECK-NEXT:    %[[T:.*]] = glow.transpose %[[R]] {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @diamond(%x: tensor<3x2xf32>) -> tensor<2x3xf32> {
  %t = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %s = glow.sigmoid %t : tensor<2x3xf32>
  %m = glow.mul %t, %s : tensor<2x3xf32>
  %z = glow.splat {value = 0.0 : f32} : tensor<2x3xf32>
  %c = glow.cmp_lt %m, %z : tensor<2x3xf32> -> tensor<2x3xi1>
  %r = glow.select %c, %z, %m : tensor<2x3xi1>, tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// Must not fire: %t's users would sink only if the tanh did, but the tanh's transpose %u
// is also returned, so it would survive; sinking the relu alone would add a transpose.
// CHECK-LABEL: func.func @blocked_diamond
// CHECK-NEXT:    %[[T:.*]] = glow.transpose %x
// CHECK-NEXT:    %[[U:.*]] = glow.transpose %y
// CHECK-NEXT:    glow.relu %[[T]]
// CHECK-NEXT:    %[[W:.*]] = glow.tanh %[[U]]
// CHECK-NEXT:    glow.add %[[T]], %[[W]]
func.func @blocked_diamond(%x: tensor<3x2xf32>, %y: tensor<3x2xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %t = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %u = glow.transpose %y {shuffle = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %r = glow.relu %t : tensor<2x3xf32>
  %w = glow.tanh %u : tensor<2x3xf32>
  %v = glow.add %t, %w : tensor<2x3xf32>
  func.return %r, %v, %u : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A stack of transposes: the relu passes one per round and ends below both; identity
// transposes sink like the others (merge-transposes drops them).
// CHECK-LABEL: func.func @stack
// CHECK-NEXT:    %[[R:.*]] = glow.relu %x : tensor<2x3xf32>
// CHECK-NEXT:    %[[A:.*]] = glow.transpose %[[R]] {shuffle = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    %[[B:.*]] = glow.transpose %[[A]] {shuffle = array<i64: 0, 1>} : tensor<3x2xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %[[B]]
func.func @stack(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %a = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %b = glow.transpose %a {shuffle = array<i64: 0, 1>} : tensor<3x2xf32> -> tensor<3x2xf32>
  %r = glow.relu %b : tensor<3x2xf32>
  func.return %r : tensor<3x2xf32>
}
