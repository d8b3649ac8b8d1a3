// RUN: glow-opt %s --split-input-file --constant-fold | FileCheck %s
// RUN: glow-opt %s --split-input-file --constant-fold=max-elements=2 | FileCheck %s --check-prefix=LIMIT
// RUN: not glow-opt %s --split-input-file --constant-fold=max-elements=-5 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: glow-opt: error: constant-fold: max-elements must be 0 or more, got -5
// RUN: glow-opt %s --split-input-file --constant-fold=max-growth=4096 | FileCheck %s --check-prefix=GROWTH
// RUN: not glow-opt %s --split-input-file --constant-fold=max-growth=0 2>&1 | FileCheck %s --check-prefix=BADGROWTH
// BADGROWTH: glow-opt: error: constant-fold: max-growth must be 1 or more, got 0

// A constant sub-graph folds into one constant; the graph input keeps its ops.
// CHECK-LABEL: func.func @fold_chain
// CHECK-NEXT:    %[[C:.*]] = glow.constant dense<[3.000000e+00, 2.000000e+00, 5.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %[[R:.*]] = glow.add %x, %[[C]] : tensor<3xf32>
// CHECK-NEXT:    func.return %[[R]]
// LIMIT-LABEL: func.func @fold_chain
// LIMIT:         glow.relu
func.func @fold_chain(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = glow.constant dense<[1.0, -2.0, 3.0]> : tensor<3xf32>
  %b = glow.constant dense<1.0> : tensor<3xf32>
  %r = glow.relu %a : tensor<3xf32>
  %s = glow.add %r, %b : tensor<3xf32>
  %t = glow.add %s, %b : tensor<3xf32>
  %o = glow.add %x, %t : tensor<3xf32>
  func.return %o : tensor<3xf32>
}

// -----

// A uniform result becomes a splat, not a big blob.
// CHECK-LABEL: func.func @fold_to_splat
// CHECK-NEXT:    %[[S:.*]] = glow.splat {value = 6.000000e+00 : f32} : tensor<64x64xf32>
// CHECK-NEXT:    func.return %[[S]]
func.func @fold_to_splat() -> tensor<64x64xf32> {
  %a = glow.splat {value = 2.0 : f32} : tensor<64x64xf32>
  %b = glow.splat {value = 3.0 : f32} : tensor<64x64xf32>
  %m = glow.mul %a, %b : tensor<64x64xf32>
  func.return %m : tensor<64x64xf32>
}

// -----

// Must not fire: an operand is a function input.
// CHECK-LABEL: func.func @no_fold_input
// CHECK:         glow.mul %x
func.func @no_fold_input(%x: tensor<2xf32>) -> tensor<2xf32> {
  %b = glow.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %m = glow.mul %x, %b : tensor<2xf32>
  func.return %m : tensor<2xf32>
}

// -----

// A large non-uniform result goes to a dense_resource blob.
// CHECK-LABEL: func.func @fold_to_resource
// CHECK-NEXT:    %[[C:.*]] = glow.constant dense_resource<transpose_folded> : tensor<3x8xf32>
// CHECK:       dialect_resources
// CHECK:         transpose_folded: "0x04000000
func.func @fold_to_resource() -> tensor<3x8xf32> {
  %a = glow.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0], [12.0, 13.0, 14.0], [15.0, 16.0, 17.0], [18.0, 19.0, 20.0], [21.0, 22.0, 23.0]]> : tensor<8x3xf32>
  %t = glow.transpose %a {shuffle = array<i64: 1, 0>} : tensor<8x3xf32> -> tensor<3x8xf32>
  func.return %t : tensor<3x8xf32>
}

// -----

// Found by fuzz/fuzz_mlir.py: a declaration (no body) and a body of two blocks were an
// internal error ('block' property of Region ... only available for single-block regions).
// CHECK-LABEL: func.func private @declared(tensor<4xf32>) -> tensor<4xf32>
// CHECK-LABEL: func.func @two_blocks
// CHECK:         cf.br ^bb1
// CHECK:         %{{.*}} = glow.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    func.return
// LIMIT-LABEL: func.func @two_blocks
func.func private @declared(tensor<4xf32>) -> tensor<4xf32>
func.func @two_blocks() -> tensor<4xf32> {
  %c = glow.constant dense<1.0> : tensor<4xf32>
  cf.br ^bb1
^bb1:
  %d = glow.add %c, %c : tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// -----

// A glow.if whose condition is known is the branch it takes: its ops move before it and
// its results are what the branch yields.
// CHECK-LABEL: func.func @known_condition
// CHECK-NEXT:    %[[A:.*]] = glow.relu %x : tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]]
func.func @known_condition(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = glow.splat {value = 1.0 : f32} : tensor<i1>
  %r = glow.if %c : tensor<i1> -> (tensor<4xf32>) {
    %a = glow.relu %x : tensor<4xf32>
    glow.yield %a : tensor<4xf32>
  } else {
    glow.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// The false branch of a known condition, with a nested if whose condition is only known
// at run time: it stays.
// CHECK-LABEL: func.func @known_false_nested
// CHECK-NEXT:    %[[N:.*]] = glow.if %d : tensor<i1> -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[T:.*]] = glow.tanh %x
// CHECK-NEXT:      glow.yield %[[T]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      glow.yield %x
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[N]]
func.func @known_false_nested(%d: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %c = glow.constant dense<false> : tensor<1xi1>
  %r = glow.if %c : tensor<1xi1> -> (tensor<4xf32>) {
    %a = glow.relu %x : tensor<4xf32>
    glow.yield %a : tensor<4xf32>
  } else {
    %n = glow.if %d : tensor<i1> -> (tensor<4xf32>) {
      %t = glow.tanh %x : tensor<4xf32>
      glow.yield %t : tensor<4xf32>
    } else {
      glow.yield %x : tensor<4xf32>
    }
    glow.yield %n : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// Constant sub-graphs inside a branch fold there (in place, not hoisted); a condition
// known only at run time keeps both branches.
// Must not fire on the if itself: %c is an argument.
// CHECK-LABEL: func.func @fold_in_branch
// CHECK-NEXT:    %[[R:.*]] = glow.if %c : tensor<i1> -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[K:.*]] = glow.constant dense<-2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:      %[[A:.*]] = glow.add %x, %[[K]]
// CHECK-NEXT:      glow.yield %[[A]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      glow.yield %x
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
func.func @fold_in_branch(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = glow.if %c : tensor<i1> -> (tensor<4xf32>) {
    %k = glow.splat {value = 2.0 : f32} : tensor<4xf32>
    %n = glow.neg %k : tensor<4xf32>
    %a = glow.add %x, %n : tensor<4xf32>
    glow.yield %a : tensor<4xf32>
  } else {
    glow.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// Must not fire: a per-channel vector broadcast to a feature map (a batch normalization
// no convolution absorbs) would be a constant 4096 times bigger than its operand, over
// SMALL_RESULT (4096) elements: the broadcast stays, the kernels read it per channel.
// With max-growth=4096 it folds.
// CHECK-LABEL: func.func @no_fold_growing_broadcast
// CHECK-NEXT:    %[[V:.*]] = glow.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[B:.*]] = glow.broadcast %[[V]] {axis = 1 : i64} : tensor<2xf32> -> tensor<1x2x64x64xf32>
// CHECK-NEXT:    %[[M:.*]] = glow.mul %x, %[[B]]
// GROWTH-LABEL: func.func @no_fold_growing_broadcast
// GROWTH-NEXT:    %[[C:.*]] = glow.constant dense_resource<broadcast_folded> : tensor<1x2x64x64xf32>
// GROWTH-NEXT:    glow.mul %x, %[[C]]
func.func @no_fold_growing_broadcast(%x: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  %v = glow.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = glow.broadcast %v {axis = 1 : i64} : tensor<2xf32> -> tensor<1x2x64x64xf32>
  %m = glow.mul %x, %b : tensor<1x2x64x64xf32>
  func.return %m : tensor<1x2x64x64xf32>
}

// -----

// Must fire: a small result (at most SMALL_RESULT elements) folds however much it grew,
// and a big uniform one becomes a splat.
// CHECK-LABEL: func.func @fold_small_or_uniform_broadcast
// CHECK-NEXT:    %[[S:.*]] = glow.constant dense_resource<broadcast_folded> : tensor<64x2xf32>
// CHECK-NEXT:    %[[U:.*]] = glow.splat {value = 3.000000e+00 : f32} : tensor<1x2x64x64xf32>
// CHECK-NEXT:    func.return %[[S]], %[[U]]
func.func @fold_small_or_uniform_broadcast() -> (tensor<64x2xf32>, tensor<1x2x64x64xf32>) {
  %v = glow.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %s = glow.broadcast %v {axis = 1 : i64} : tensor<2xf32> -> tensor<64x2xf32>
  %w = glow.constant dense<3.0> : tensor<2xf32>
  %u = glow.broadcast %w {axis = 1 : i64} : tensor<2xf32> -> tensor<1x2x64x64xf32>
  func.return %s, %u : tensor<64x2xf32>, tensor<1x2x64x64xf32>
}

// -----

// A broadcast of a uniform constant is a splat whatever its size (over max-elements here:
// whisper's scalar scale broadcast to its attention scores), so x * 1 is seen as a no-op.
// CHECK-LABEL: func.func @broadcast_splat_over_limit
// CHECK-NEXT:    %[[S:.*]] = glow.splat {value = 1.000000e+00 : f32} : tensor<2x3x4xf32>
// CHECK-NEXT:    %[[M:.*]] = glow.mul %x, %[[S]]
// LIMIT-LABEL: func.func @broadcast_splat_over_limit
// LIMIT-NEXT:    %[[S:.*]] = glow.splat {value = 1.000000e+00 : f32} : tensor<2x3x4xf32>
// LIMIT-NEXT:    glow.mul %x, %[[S]]
func.func @broadcast_splat_over_limit(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %c = glow.constant dense<1.0> : tensor<f32>
  %b = glow.broadcast %c {axis = 3 : i64} : tensor<f32> -> tensor<2x3x4xf32>
  %m = glow.mul %x, %b : tensor<2x3x4xf32>
  func.return %m : tensor<2x3x4xf32>
}

// -----

// Must not fold to a splat: the broadcast repeats a non-uniform row (it folds to a
// constant within max-elements; LIMIT keeps the op).
// CHECK-LABEL: func.func @broadcast_row
// CHECK-NOT:     glow.splat
// CHECK:         glow.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [1.000000e+00, 2.000000e+00]]>
// LIMIT-LABEL: func.func @broadcast_row
// LIMIT:         glow.broadcast
func.func @broadcast_row(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c = glow.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = glow.broadcast %c {axis = 1 : i64} : tensor<2xf32> -> tensor<2x2xf32>
  %m = glow.mul %x, %b : tensor<2x2xf32>
  func.return %m : tensor<2x2xf32>
}
