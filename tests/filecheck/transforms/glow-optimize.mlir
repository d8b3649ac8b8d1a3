// RUN: glow-opt %s --split-input-file --glow-optimize | FileCheck %s
// RUN: glow-opt %s --split-input-file --glow-optimize=max-iterations=1 | FileCheck %s --check-prefix=ONE
// RUN: glow-opt %s --split-input-file -p 'glow-optimize{disable=fold-batchnorm}' | FileCheck %s --check-prefix=NOBN

// Every clean-up fires, in rounds, until the fixed point: the transpose pair cancels once
// the relu between them has sunk, the constant chain folds, x * 1 goes, the duplicate
// relu merges, and the batch norm folds into the convolution.
// CHECK-LABEL: func.func @fixed_point
// CHECK-NOT:     glow.transpose
// CHECK-NOT:     glow.batch_normalization
// CHECK:         glow.convolution
// CHECK-NEXT:    glow.relu
// CHECK-NEXT:    glow.add
// CHECK-NEXT:    func.return
// ONE-LABEL:   func.func @fixed_point
// ONE:           glow.transpose
// NOBN-LABEL:  func.func @fixed_point
// NOBN:          glow.batch_normalization
func.func @fixed_point(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %t = glow.transpose %x {shuffle = array<i64: 0, 2, 3, 1>} : tensor<1x2x4x4xf32> -> tensor<1x4x4x2xf32>
  %r = glow.relu %t : tensor<1x4x4x2xf32>
  %u = glow.transpose %r {shuffle = array<i64: 0, 3, 1, 2>} : tensor<1x4x4x2xf32> -> tensor<1x2x4x4xf32>
  %w = glow.constant dense<0.5> : tensor<2x2x1x1xf32>
  %b = glow.constant dense<0.0> : tensor<2xf32>
  %c = glow.convolution %u, %w, %b {kernels = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %s = glow.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %z = glow.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %m = glow.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %v = glow.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %bn = glow.batch_normalization %c, %s, %z, %m, %v {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %one = glow.splat {value = 1.0 : f32} : tensor<1x2x4x4xf32>
  %k = glow.mul %bn, %one : tensor<1x2x4x4xf32>
  %a1 = glow.relu %k : tensor<1x2x4x4xf32>
  %a2 = glow.relu %k : tensor<1x2x4x4xf32>
  %sum = glow.add %a1, %a2 : tensor<1x2x4x4xf32>
  func.return %sum : tensor<1x2x4x4xf32>
}

// -----

// Nothing to do: the graph comes back unchanged.
// CHECK-LABEL: func.func @already_optimal
// CHECK-NEXT:    %[[R:.*]] = glow.relu %x
// CHECK-NEXT:    %[[S:.*]] = glow.sigmoid %[[R]]
// CHECK-NEXT:    func.return %[[S]]
func.func @already_optimal(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = glow.relu %x : tensor<8xf32>
  %s = glow.sigmoid %r : tensor<8xf32>
  func.return %s : tensor<8xf32>
}

// -----

// In glow.if branches: an op equal to one before the if (which dominates it) is replaced
// by it.
// CHECK-LABEL: func.func @cse_into_branch
// CHECK-NEXT:    %d = glow.relu %x
// CHECK-NEXT:    %r = glow.if %c : tensor<i1> -> (tensor<4xf32>) {
// CHECK-NEXT:      %a2 = glow.tanh %d
// CHECK-NEXT:      glow.yield %a2
func.func @cse_into_branch(%c: tensor<i1>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %d = glow.relu %x : tensor<4xf32>
  %r = glow.if %c : tensor<i1> -> (tensor<4xf32>) {
    %a = glow.relu %x : tensor<4xf32>
    %a2 = glow.tanh %a : tensor<4xf32>
    glow.yield %a2 : tensor<4xf32>
  } else {
    glow.yield %x : tensor<4xf32>
  }
  func.return %r, %d : tensor<4xf32>, tensor<4xf32>
}

// -----

// Must not fire: equal ops in the two branches, or in a branch and after the if, do
// not dominate each other; nothing moves out of a branch.
// CHECK-LABEL: func.func @cse
// CHECK-NEXT:    %r = glow.if %c : tensor<i1> -> (tensor<4xf32>) {
// CHECK-NEXT:      %a = glow.relu %x
// CHECK-NEXT:      glow.yield %a
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %b = glow.relu %x
// CHECK-NEXT:      %b2 = glow.neg %b
// CHECK-NEXT:      glow.yield %b2
// CHECK-NEXT:    }
// CHECK-NEXT:    %d = glow.relu %x
func.func @cse(%c: tensor<i1>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = glow.if %c : tensor<i1> -> (tensor<4xf32>) {
    %a = glow.relu %x : tensor<4xf32>
    glow.yield %a : tensor<4xf32>
  } else {
    %b = glow.relu %x : tensor<4xf32>
    %b2 = glow.neg %b : tensor<4xf32>
    glow.yield %b2 : tensor<4xf32>
  }
  %d = glow.relu %x : tensor<4xf32>
  func.return %r, %d : tensor<4xf32>, tensor<4xf32>
}
