// RUN: glow-opt %s --split-input-file --schedule-graph | FileCheck %s
// RUN: glow-opt %s --split-input-file --schedule-graph=report=true 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

// Sizes are arena bytes: function inputs, constants and outputs count 0 (see
// analysis/graph_memory.py). tensor<256xf32> is 1 KiB.

// Two branches: %b (1 KiB) is held while the tile/mul branch peaks at 2 KiB (3 KiB in
// all). The bigger sub-graph goes first, then %b; the constant moves right before its use.
// CHECK-LABEL: func.func @big_subtree_first
// CHECK-SAME:    attributes {glow.peak_live_bytes_before = 3072 : i64, glow.peak_live_bytes_after = 2048 : i64}
// CHECK-NEXT:    %t = glow.tile %x
// CHECK-NEXT:    %c = glow.constant
// CHECK-NEXT:    %u = glow.mul %t, %c
// CHECK-NEXT:    %a = glow.slice %u
// CHECK-NEXT:    %b = glow.tile %x
// CHECK-NEXT:    %o = glow.concat %a, %b
// CHECK-NEXT:    func.return %o
// REPORT: schedule-graph: @big_subtree_first peak live bytes 3072 -> 2048
func.func @big_subtree_first(%x: tensor<4xf32>) -> tensor<260xf32> {
  %c = glow.constant dense<2.0> : tensor<256xf32>
  %b = glow.tile %x {count = 64 : i64, axis = 0 : i64} : tensor<4xf32> -> tensor<256xf32>
  %t = glow.tile %x {count = 64 : i64, axis = 0 : i64} : tensor<4xf32> -> tensor<256xf32>
  %u = glow.mul %t, %c : tensor<256xf32>
  %a = glow.slice %u {start = array<i64: 0>} : tensor<256xf32> -> tensor<4xf32>
  %o = glow.concat %a, %b {dim = 0 : i64} : (tensor<4xf32>, tensor<256xf32>) -> tensor<260xf32>
  func.return %o : tensor<260xf32>
}

// -----

// The same graph already in the good order: nothing moves, the peaks are equal.
// CHECK-LABEL: func.func @already_optimal
// CHECK-SAME:    attributes {glow.peak_live_bytes_before = 2048 : i64, glow.peak_live_bytes_after = 2048 : i64}
// CHECK-NEXT:    %c = glow.constant
// CHECK-NEXT:    %t = glow.tile %x
// CHECK-NEXT:    %u = glow.mul %t, %c
// CHECK-NEXT:    %a = glow.slice %u
// CHECK-NEXT:    %b = glow.tile %x
// CHECK-NEXT:    %o = glow.concat %a, %b
// CHECK-NEXT:    func.return %o
// REPORT: schedule-graph: @already_optimal peak live bytes 2048 -> 2048
func.func @already_optimal(%x: tensor<4xf32>) -> tensor<260xf32> {
  %c = glow.constant dense<2.0> : tensor<256xf32>
  %t = glow.tile %x {count = 64 : i64, axis = 0 : i64} : tensor<4xf32> -> tensor<256xf32>
  %u = glow.mul %t, %c : tensor<256xf32>
  %a = glow.slice %u {start = array<i64: 0>} : tensor<256xf32> -> tensor<4xf32>
  %b = glow.tile %x {count = 64 : i64, axis = 0 : i64} : tensor<4xf32> -> tensor<256xf32>
  %o = glow.concat %a, %b {dim = 0 : i64} : (tensor<4xf32>, tensor<256xf32>) -> tensor<260xf32>
  func.return %o : tensor<260xf32>
}

// -----

// A chain has one order. Two values live at each step: 2 x 1 KiB.
// CHECK-LABEL: func.func @chain
// CHECK-SAME:    attributes {glow.peak_live_bytes_before = 2048 : i64, glow.peak_live_bytes_after = 2048 : i64}
// CHECK-NEXT:    %a = glow.relu %x
// CHECK-NEXT:    %b = glow.tanh %a
// CHECK-NEXT:    %c = glow.sigmoid %b
// CHECK-NEXT:    func.return %c
// REPORT: schedule-graph: @chain peak live bytes 2048 -> 2048
func.func @chain(%x: tensor<256xf32>) -> tensor<256xf32> {
  %a = glow.relu %x : tensor<256xf32>
  %b = glow.tanh %a : tensor<256xf32>
  %c = glow.sigmoid %b : tensor<256xf32>
  func.return %c : tensor<256xf32>
}

// -----

// A DAG: %s feeds both branches and stays first. Running the 4 KiB tile/tanh branch
// before %b (1 KiB) saves holding %b through it: 9216 -> 8256 bytes.
// CHECK-LABEL: func.func @shared_value
// CHECK-SAME:    attributes {glow.peak_live_bytes_before = 9216 : i64, glow.peak_live_bytes_after = 8256 : i64}
// CHECK-NEXT:    %s = glow.tile %x
// CHECK-NEXT:    %t = glow.tile %s
// CHECK-NEXT:    %u = glow.tanh %t
// CHECK-NEXT:    %a = glow.slice %u
// CHECK-NEXT:    %b = glow.tile %s
// CHECK-NEXT:    %o = glow.add %a, %b
// CHECK-NEXT:    func.return %o
// REPORT: schedule-graph: @shared_value peak live bytes 9216 -> 8256
func.func @shared_value(%x: tensor<4xf32>) -> tensor<256xf32> {
  %s = glow.tile %x {count = 4 : i64, axis = 0 : i64} : tensor<4xf32> -> tensor<16xf32>
  %b = glow.tile %s {count = 16 : i64, axis = 0 : i64} : tensor<16xf32> -> tensor<256xf32>
  %t = glow.tile %s {count = 64 : i64, axis = 0 : i64} : tensor<16xf32> -> tensor<1024xf32>
  %u = glow.tanh %t : tensor<1024xf32>
  %a = glow.slice %u {start = array<i64: 0>} : tensor<1024xf32> -> tensor<256xf32>
  %o = glow.add %a, %b : tensor<256xf32>
  func.return %o : tensor<256xf32>
}

// -----

// Where the tree estimate misleads on a DAG, the input order is kept. The scheduler would
// run the deeper chain to %r3 first while %r1, which the concat still needs, stays live
// (48 bytes); the input order frees %r1 at the concat (32 bytes).
// CHECK-LABEL: func.func @keep_input_order
// CHECK-SAME:    attributes {glow.peak_live_bytes_before = 32 : i64, glow.peak_live_bytes_after = 32 : i64}
// CHECK-NEXT:    %r1 = glow.relu %x
// CHECK-NEXT:    %r2 = glow.relu %r1
// CHECK-NEXT:    %cat = glow.concat %x, %r1
// CHECK-NEXT:    %r3 = glow.relu %r2
// CHECK-NEXT:    %r4 = glow.relu %r3
// CHECK-NEXT:    func.return %cat, %r4
// REPORT: schedule-graph: @keep_input_order peak live bytes 32 -> 32
func.func @keep_input_order(%x: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %r1 = glow.relu %x : tensor<4xf32>
  %r2 = glow.relu %r1 : tensor<4xf32>
  %cat = glow.concat %x, %r1 {dim = 0 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  %r3 = glow.relu %r2 : tensor<4xf32>
  %r4 = glow.relu %r3 : tensor<4xf32>
  func.return %cat, %r4 : tensor<8xf32>, tensor<4xf32>
}

// -----

// Several outputs: the output with the bigger sub-graph is computed first, so the small
// one's 1 KiB intermediate %p is not held through it. Outputs themselves cost nothing.
// CHECK-LABEL: func.func @two_outputs
// CHECK-SAME:    attributes {glow.peak_live_bytes_before = 3072 : i64, glow.peak_live_bytes_after = 2048 : i64}
// CHECK-NEXT:    %t = glow.tile %x
// CHECK-NEXT:    %u = glow.tanh %t
// CHECK-NEXT:    %big = glow.slice %u
// CHECK-NEXT:    %p = glow.tile %x
// CHECK-NEXT:    %small = glow.relu %p
// CHECK-NEXT:    func.return %small, %big
// REPORT: schedule-graph: @two_outputs peak live bytes 3072 -> 2048
func.func @two_outputs(%x: tensor<4xf32>) -> (tensor<256xf32>, tensor<4xf32>) {
  %p = glow.tile %x {count = 64 : i64, axis = 0 : i64} : tensor<4xf32> -> tensor<256xf32>
  %t = glow.tile %x {count = 64 : i64, axis = 0 : i64} : tensor<4xf32> -> tensor<256xf32>
  %u = glow.tanh %t : tensor<256xf32>
  %small = glow.relu %p : tensor<256xf32>
  %big = glow.slice %u {start = array<i64: 0>} : tensor<256xf32> -> tensor<4xf32>
  func.return %small, %big : tensor<256xf32>, tensor<4xf32>
}

// -----

// Must not fire: a glow.if uses values its operands do not name (%t and %c, in its
// branch), so the function keeps its order; the uses in the branch count as uses by the
// if in the peak (%t is live up to it).
// CHECK-LABEL: func.func @with_if
// CHECK-SAME:    attributes {glow.peak_live_bytes_before = 3072 : i64, glow.peak_live_bytes_after = 3072 : i64}
// CHECK-NEXT:    %c = glow.constant
// CHECK-NEXT:    %b = glow.tile %x
// CHECK-NEXT:    %t = glow.tile %x
// CHECK-NEXT:    %u = glow.if %k
func.func @with_if(%k: tensor<i1>, %x: tensor<4xf32>) -> tensor<260xf32> {
  %c = glow.constant dense<2.0> : tensor<256xf32>
  %b = glow.tile %x {count = 64 : i64, axis = 0 : i64} : tensor<4xf32> -> tensor<256xf32>
  %t = glow.tile %x {count = 64 : i64, axis = 0 : i64} : tensor<4xf32> -> tensor<256xf32>
  %u = glow.if %k : tensor<i1> -> (tensor<256xf32>) {
    %m = glow.mul %t, %c : tensor<256xf32>
    glow.yield %m : tensor<256xf32>
  } else {
    glow.yield %t : tensor<256xf32>
  }
  %a = glow.slice %u {start = array<i64: 0>} : tensor<256xf32> -> tensor<4xf32>
  %o = glow.concat %a, %b {dim = 0 : i64} : (tensor<4xf32>, tensor<256xf32>) -> tensor<260xf32>
  func.return %o : tensor<260xf32>
}
