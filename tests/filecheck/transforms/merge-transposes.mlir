// RUN: glow-opt %s --split-input-file --merge-transposes | FileCheck %s

// A transpose followed by its inverse cancels.
// CHECK-LABEL: func.func @cancel
// CHECK-NEXT:    func.return %x
func.func @cancel(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %t = glow.transpose %x {shuffle = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %b = glow.transpose %t {shuffle = array<i64: 1, 2, 0>} : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
  func.return %b : tensor<2x3x4xf32>
}

// -----

// Two transposes compose into one: r[i] = p[q[i]] = [1,0,2].
// CHECK-LABEL: func.func @compose
// CHECK-NEXT:    %[[T:.*]] = glow.transpose %x {shuffle = array<i64: 1, 0, 2>} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @compose(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %a = glow.transpose %x {shuffle = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %b = glow.transpose %a {shuffle = array<i64: 0, 2, 1>} : tensor<3x4x2xf32> -> tensor<3x2x4xf32>
  func.return %b : tensor<3x2x4xf32>
}

// -----

// The inner transpose has another user: it stays, the outer one still composes.
// CHECK-LABEL: func.func @shared_inner
// CHECK-NEXT:    %[[A:.*]] = glow.transpose %x {shuffle = array<i64: 1, 0, 2>} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
// CHECK-NEXT:    %[[R:.*]] = glow.relu %[[A]]
// CHECK-NEXT:    %[[B:.*]] = glow.transpose %x {shuffle = array<i64: 2, 1, 0>} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// CHECK-NEXT:    func.return %[[R]], %[[B]]
func.func @shared_inner(%x: tensor<2x3x4xf32>) -> (tensor<3x2x4xf32>, tensor<4x3x2xf32>) {
  %a = glow.transpose %x {shuffle = array<i64: 1, 0, 2>} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %r = glow.relu %a : tensor<3x2x4xf32>
  %b = glow.transpose %a {shuffle = array<i64: 2, 0, 1>} : tensor<3x2x4xf32> -> tensor<4x3x2xf32>
  func.return %r, %b : tensor<3x2x4xf32>, tensor<4x3x2xf32>
}

// -----

// Identity shuffles are removed.
// CHECK-LABEL: func.func @identity
// CHECK-NEXT:    func.return %x
func.func @identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %t = glow.transpose %x {shuffle = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %t : tensor<2x3xf32>
}

// -----

// Moving only size-1 dims keeps the element order: a reshape.
// CHECK-LABEL: func.func @unit_dims
// CHECK-NEXT:    %[[A:.*]] = glow.reshape %x : tensor<1x3x1x4xf32> -> tensor<3x1x4x1xf32>
// CHECK-NEXT:    %[[B:.*]] = glow.reshape %y : tensor<5x1xf32> -> tensor<1x5xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @unit_dims(%x: tensor<1x3x1x4xf32>, %y: tensor<5x1xf32>) -> (tensor<3x1x4x1xf32>, tensor<1x5xf32>) {
  %a = glow.transpose %x {shuffle = array<i64: 1, 0, 3, 2>} : tensor<1x3x1x4xf32> -> tensor<3x1x4x1xf32>
  %b = glow.transpose %y {shuffle = array<i64: 1, 0>} : tensor<5x1xf32> -> tensor<1x5xf32>
  func.return %a, %b : tensor<3x1x4x1xf32>, tensor<1x5xf32>
}

// -----

// Must not fire: these move dims of size > 1 past each other.
// CHECK-LABEL: func.func @real_transposes
// CHECK-NEXT:    glow.transpose %x {shuffle = array<i64: 3, 1, 2, 0>}
// CHECK-NEXT:    glow.transpose %y {shuffle = array<i64: 1, 0>}
// CHECK-NEXT:    func.return
func.func @real_transposes(%x: tensor<1x3x1x4xf32>, %y: tensor<2x5xf32>) -> (tensor<4x3x1x1xf32>, tensor<5x2xf32>) {
  %a = glow.transpose %x {shuffle = array<i64: 3, 1, 2, 0>} : tensor<1x3x1x4xf32> -> tensor<4x3x1x1xf32>
  %b = glow.transpose %y {shuffle = array<i64: 1, 0>} : tensor<2x5xf32> -> tensor<5x2xf32>
  func.return %a, %b : tensor<4x3x1x1xf32>, tensor<5x2xf32>
}

// -----

// A unit-dim transpose feeding another transpose composes first (one transpose, not a
// reshape followed by a transpose).
// CHECK-LABEL: func.func @compose_before_reshape
// CHECK-NEXT:    %[[T:.*]] = glow.transpose %x {shuffle = array<i64: 2, 0, 1>} : tensor<1x3x4xf32> -> tensor<4x1x3xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @compose_before_reshape(%x: tensor<1x3x4xf32>) -> tensor<4x1x3xf32> {
  %a = glow.transpose %x {shuffle = array<i64: 1, 0, 2>} : tensor<1x3x4xf32> -> tensor<3x1x4xf32>
  %b = glow.transpose %a {shuffle = array<i64: 2, 1, 0>} : tensor<3x1x4xf32> -> tensor<4x1x3xf32>
  func.return %b : tensor<4x1x3xf32>
}

// -----

// [1, 0] on 1x1 leaves the type and the data alone: dropped, not composed into a copy
// of the transpose above it, which stays for its other user.
// CHECK-LABEL: func.func @noop_outer
// CHECK-NEXT:    %[[A:.*]] = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    %[[S:.*]] = glow.slice %[[A]]
// CHECK-NEXT:    %[[R:.*]] = glow.relu %[[A]]
// CHECK-NEXT:    func.return %[[S]], %[[R]]
func.func @noop_outer(%x: tensor<2x3xf32>) -> (tensor<1x1xf32>, tensor<3x2xf32>) {
  %a = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %s = glow.slice %a {start = array<i64: 0, 0>} : tensor<3x2xf32> -> tensor<1x1xf32>
  %t = glow.transpose %s {shuffle = array<i64: 1, 0>} : tensor<1x1xf32> -> tensor<1x1xf32>
  %r = glow.relu %a : tensor<3x2xf32>
  func.return %t, %r : tensor<1x1xf32>, tensor<3x2xf32>
}

// -----

// A unit-dim transpose with a transpose user and another user: the chain composes first,
// then what is left becomes a reshape.
// CHECK-LABEL: func.func @shared_unit_dim_inner
// CHECK-NEXT:    %[[A:.*]] = glow.reshape %x : tensor<1x2xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[R:.*]] = glow.relu %[[A]]
// CHECK-NEXT:    func.return %[[R]], %x
func.func @shared_unit_dim_inner(%x: tensor<1x2xf32>) -> (tensor<2x1xf32>, tensor<1x2xf32>) {
  %a = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<1x2xf32> -> tensor<2x1xf32>
  %r = glow.relu %a : tensor<2x1xf32>
  %b = glow.transpose %a {shuffle = array<i64: 1, 0>} : tensor<2x1xf32> -> tensor<1x2xf32>
  func.return %r, %b : tensor<2x1xf32>, tensor<1x2xf32>
}
