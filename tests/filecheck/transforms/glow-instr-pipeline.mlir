// RUN: glow-opt %s --split-input-file --glow-instr-pipeline | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'glow-instr-pipeline{plan=false disable=optimize-inserts-extracts}' | FileCheck %s --check-prefix=NOOPT

// What lower-to-instr makes of `concat(relu(x), tanh(w))`, `exp(relu(x))` and a dead
// value: the concat is computed in place in the output (optimize-inserts-extracts), the
// dead value goes (dse), the unwritten inputs become constant (make-weights-const), and
// the one activation left is planned (plan-memory).
// CHECK-LABEL:  glow_ir.func @main declare {
// CHECK-NEXT:     glow_ir.weight @x constant input : memref<1x2x3xf32>
// CHECK-NEXT:     glow_ir.weight @w constant input : memref<1x2x3xf32>
// CHECK-NEXT:     glow_ir.weight @y mutable output : memref<1x4x3xf32>
// CHECK-NEXT:     glow_ir.weight @z mutable output : memref<1x2x3xf32>
// CHECK-NEXT:   } program(%x, %w, %y, %z) {
// CHECK-NOT:      glow_ir.insert_tensor
// CHECK-NOT:      glow_ir.element_neg
// CHECK-DAG:      %[[A:.*]] = glow_ir.tensor_view %y[0, 0, 0] : memref<1x4x3xf32> to memref<1x2x3xf32>
// CHECK-DAG:      glow_ir.relu @out %[[A]], @in %x
// CHECK-DAG:      %[[B:.*]] = glow_ir.tensor_view %y[0, 2, 0] : memref<1x4x3xf32> to memref<1x2x3xf32>
// CHECK-DAG:      glow_ir.tanh @out %[[B]], @in %w
// CHECK-DAG:      %[[C:.*]] = glow_ir.alloc_activation {offset = 0 : i64} : memref<1x2x3xf32>
// CHECK-DAG:      glow_ir.relu @out %[[C]], @in %x
// CHECK-DAG:      glow_ir.element_exp @out %z, @in %[[C]]
// CHECK-DAG:      glow_ir.dealloc_activation %[[C]]
// CHECK-NOT:      glow_ir.insert_tensor
// CHECK-NOT:      glow_ir.element_neg
// CHECK:        } attributes {activations_size = {{[0-9]+}} : i64, alignment = 64 : i64}

// NOOPT-LABEL:  glow_ir.func @main
// NOOPT:          glow_ir.insert_tensor @inout %y
// NOOPT:          glow_ir.insert_tensor @inout %y
// NOOPT-NOT:      glow_ir.element_neg
// NOOPT-NOT:      activations_size
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<1x2x3xf32>
  glow_ir.weight @w mutable input : memref<1x2x3xf32>
  glow_ir.weight @y mutable output : memref<1x4x3xf32>
  glow_ir.weight @z mutable output : memref<1x2x3xf32>
} program(%x, %w, %y, %z) {
  %a = glow_ir.alloc_activation : memref<1x2x3xf32>
  glow_ir.relu @out %a, @in %x : memref<1x2x3xf32>
  %b = glow_ir.alloc_activation : memref<1x2x3xf32>
  glow_ir.tanh @out %b, @in %w : memref<1x2x3xf32>
  %dead = glow_ir.alloc_activation : memref<1x2x3xf32>
  glow_ir.element_neg @out %dead, @in %x : memref<1x2x3xf32>
  glow_ir.insert_tensor @inout %y, @in %a {offsets = array<i64: 0, 0, 0>} : memref<1x4x3xf32>, memref<1x2x3xf32>
  glow_ir.insert_tensor @inout %y, @in %b {offsets = array<i64: 0, 2, 0>} : memref<1x4x3xf32>, memref<1x2x3xf32>
  %c = glow_ir.alloc_activation : memref<1x2x3xf32>
  glow_ir.relu @out %c, @in %x : memref<1x2x3xf32>
  glow_ir.element_exp @out %z, @in %c : memref<1x2x3xf32>
  glow_ir.dealloc_activation %c : memref<1x2x3xf32>
  glow_ir.dealloc_activation %dead : memref<1x2x3xf32>
  glow_ir.dealloc_activation %b : memref<1x2x3xf32>
  glow_ir.dealloc_activation %a : memref<1x2x3xf32>
}

// -----

// Must not fire: a column concat (not contiguous) stays an insert; its source buffer,
// read twice, stays too.
// CHECK-LABEL:  glow_ir.func @columns
// CHECK:          glow_ir.relu @out %[[A:.*]], @in %x
// CHECK:          glow_ir.insert_tensor @inout %y, @in %[[A]] {offsets = array<i64: 0, 3>}
// CHECK:          glow_ir.insert_tensor @inout %y, @in %[[A]] {offsets = array<i64: 0, 0>}
// NOOPT-LABEL:  glow_ir.func @columns
glow_ir.func @columns declare {
  glow_ir.weight @x mutable input : memref<2x3xf32>
  glow_ir.weight @y mutable output : memref<2x6xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.relu @out %a, @in %x : memref<2x3xf32>
  glow_ir.insert_tensor @inout %y, @in %a {offsets = array<i64: 0, 3>} : memref<2x6xf32>, memref<2x3xf32>
  glow_ir.insert_tensor @inout %y, @in %a {offsets = array<i64: 0, 0>} : memref<2x6xf32>, memref<2x3xf32>
  glow_ir.dealloc_activation %a : memref<2x3xf32>
}

// -----

// glow_ir.if is one instruction to the passes (its operands' access kinds): the copy of
// its result into the output is propagated (the if writes @y itself), an if whose result
// nobody reads is a dead store, and %a, which the if reads, is freed after it.
// CHECK-LABEL:  glow_ir.func @if_barrier
// CHECK:          %a = glow_ir.alloc_activation {offset = 0 : i64} : memref<16xf32>
// CHECK-NEXT:     glow_ir.relu @out %a, @in %x
// CHECK-NEXT:     glow_ir.if @out %y, @in %c, @in %a : memref<16xf32>, memref<i1>, memref<16xf32> {
// CHECK-NEXT:     ^bb0(%r1: memref<16xf32>, %c1: memref<i1>, %a1: memref<16xf32>):
// CHECK-NEXT:       glow_ir.tanh @out %r1, @in %a1
// CHECK-NEXT:     } else {
// CHECK-NEXT:     ^bb0(%r2: memref<16xf32>, %c2: memref<i1>, %a2: memref<16xf32>):
// CHECK-NEXT:       glow_ir.copy @out %r2, @in %a2
// CHECK-NEXT:     }
// CHECK-NEXT:     glow_ir.dealloc_activation %a
// CHECK-NEXT:   } attributes {activations_size = 64 : i64, alignment = 64 : i64}
glow_ir.func @if_barrier declare {
  glow_ir.weight @c mutable input : memref<i1>
  glow_ir.weight @x mutable input : memref<16xf32>
  glow_ir.weight @y mutable output : memref<16xf32>
} program(%c, %x, %y) {
  %a = glow_ir.alloc_activation : memref<16xf32>
  glow_ir.relu @out %a, @in %x : memref<16xf32>
  %r = glow_ir.alloc_activation : memref<16xf32>
  glow_ir.if @out %r, @in %c, @in %a : memref<16xf32>, memref<i1>, memref<16xf32> {
  ^bb0(%r1: memref<16xf32>, %c1: memref<i1>, %a1: memref<16xf32>):
    glow_ir.tanh @out %r1, @in %a1 : memref<16xf32>
  } else {
  ^bb0(%r2: memref<16xf32>, %c2: memref<i1>, %a2: memref<16xf32>):
    glow_ir.copy @out %r2, @in %a2 : memref<16xf32>
  }
  glow_ir.copy @out %y, @in %r : memref<16xf32>
  %u = glow_ir.alloc_activation : memref<16xf32>
  glow_ir.if @out %u, @in %c, @in %a : memref<16xf32>, memref<i1>, memref<16xf32> {
  ^bb0(%u1: memref<16xf32>, %c3: memref<i1>, %a3: memref<16xf32>):
    glow_ir.tanh @out %u1, @in %a3 : memref<16xf32>
  } else {
  ^bb0(%u2: memref<16xf32>, %c4: memref<i1>, %a4: memref<16xf32>):
    glow_ir.copy @out %u2, @in %a4 : memref<16xf32>
  }
  glow_ir.dealloc_activation %u : memref<16xf32>
  glow_ir.dealloc_activation %r : memref<16xf32>
  glow_ir.dealloc_activation %a : memref<16xf32>
}

// -----

// glow_ir.loop is one instruction to the passes too: the copy of the initial value
// (relu's result) into the carried buffer, the output, is propagated (relu writes the
// output), and the loop reads and writes it (@inout); its iteration number and condition
// are freed after it; the body's activation is planned past them.
// CHECK-LABEL:  glow_ir.func @loop_after_relu
// CHECK:          glow_ir.relu @out %output0, @in %input2
// CHECK-NEXT:     %[[I:.*]] = glow_ir.alloc_activation {offset = 0 : i64} : memref<i64>
// CHECK-NEXT:     %[[K:.*]] = glow_ir.alloc_activation {offset = 64 : i64} : memref<i1>
// CHECK-NEXT:     glow_ir.loop @inout %output0, @out %[[I]], @out %[[K]], @in %input0, @in %input1, @in %input1
// CHECK-NEXT:     ^bb0(%[[V:.*]]: memref<4xf32>, %{{.*}}: memref<i64>, %[[C:.*]]: memref<i1>, %{{.*}}: memref<i64>, %{{.*}}: memref<i1>, %[[C0:.*]]: memref<i1>):
// CHECK-NEXT:       %n = glow_ir.alloc_activation {offset = 128 : i64} : memref<4xf32>
// CHECK-NEXT:       glow_ir.tanh @out %n, @in %[[V]]
// CHECK-NEXT:       glow_ir.copy @out %[[C]], @in %[[C0]]
// CHECK-NEXT:       glow_ir.copy @out %[[V]], @in %n
// CHECK-NEXT:       glow_ir.dealloc_activation %n
// CHECK-NEXT:     }
// CHECK-NEXT:     glow_ir.dealloc_activation %[[K]]
// CHECK-NEXT:     glow_ir.dealloc_activation %[[I]]
// CHECK-NEXT:   } attributes {activations_size = 192 : i64, alignment = 64 : i64}
glow_ir.func @loop_after_relu declare {
  glow_ir.weight @input0 mutable input : memref<i64>
  glow_ir.weight @input1 mutable input : memref<i1>
  glow_ir.weight @input2 mutable input : memref<4xf32>
  glow_ir.weight @output0 mutable output : memref<4xf32>
} program(%input0, %input1, %input2, %output0) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %input2 : memref<4xf32>
  glow_ir.copy @out %output0, @in %a : memref<4xf32>
  %0 = glow_ir.alloc_activation : memref<i64>
  %1 = glow_ir.alloc_activation : memref<i1>
  glow_ir.loop @inout %output0, @out %0, @out %1, @in %input0, @in %input1, @in %input1 : memref<4xf32>, memref<i64>, memref<i1>, memref<i64>, memref<i1>, memref<i1> {
  ^bb0(%2: memref<4xf32>, %3: memref<i64>, %4: memref<i1>, %5: memref<i64>, %6: memref<i1>, %7: memref<i1>):
    %n = glow_ir.alloc_activation : memref<4xf32>
    glow_ir.tanh @out %n, @in %2 : memref<4xf32>
    glow_ir.copy @out %4, @in %7 : memref<i1>
    glow_ir.copy @out %2, @in %n : memref<4xf32>
    glow_ir.dealloc_activation %n : memref<4xf32>
  }
  glow_ir.dealloc_activation %1 : memref<i1>
  glow_ir.dealloc_activation %0 : memref<i64>
  glow_ir.dealloc_activation %a : memref<4xf32>
}
