// RUN: glow-opt %s --split-input-file --lower-to-instr --glow-instr-pipeline --convert-glow-ir-to-loops --cse | FileCheck %s
// RUN: glow-opt %s --split-input-file --convert-glow-ir-to-loops --cse | FileCheck %s --check-prefix=VIEW

// Stacking: an element-wise chain over equal element counts is ONE loop, in ONE kernel
// function (the entry point calls it with byte views of the memory it touches). Each
// input is loaded once per element, intermediates stay in registers (the activation the
// chain computes in place is never stored: nothing reads it after the chain), and only
// the output is stored.
// CHECK-LABEL: func.func private @chain_k0_elementwise(
// CHECK-SAME:      %r0: memref<128xi8> {llvm.noalias}, %r1: memref<128xi8> {llvm.noalias}, %r2: memref<128xi8> {llvm.noalias}, %r3: memref<128xi8> {llvm.noalias}) attributes {glow.kernel}
// CHECK-DAG:     %[[X:.*]] = memref.view %r1[%{{.*}}][] : memref<128xi8> to memref<32xf32>
// CHECK-DAG:     %[[OUT:.*]] = memref.view %r3[%{{.*}}][] : memref<128xi8> to memref<32xf32>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[A:.*]] = memref.load %{{.*}}[%[[I]]] : memref<32xf32>
// CHECK-NEXT:      %[[B:.*]] = memref.load %{{.*}}[%[[I]]] : memref<32xf32>
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[NEG:.*]] = arith.cmpf olt, %[[SUM]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[RELU:.*]] = arith.select %[[NEG]], %[[ZERO]], %[[SUM]] : f32
// CHECK-NEXT:      %{{.*}} = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[E:.*]] = arith.negf %[[RELU]] : f32
// The f32 exp is a straight-line polynomial (vectorizable), not a call:
// CHECK-NOT:       math.exp
// CHECK-NOT:       memref.load
// CHECK:           arith.bitcast
// CHECK-NOT:       memref.load
// CHECK:           %[[SIG:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      %[[R:.*]] = arith.mulf %[[SIG]], %[[A]] : f32
// CHECK-NEXT:      memref.store %[[R]], %[[OUT]][%[[I]]] : memref<32xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     scf.for
// CHECK:         func.return
// The entry point: views of the areas at the plan's offsets, one call.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME:      %constantWeight: memref<1xi8> {llvm.noalias}, %mutableWeight: memref<384xi8> {llvm.noalias}, %activations: memref<{{[0-9]+}}xi8> {llvm.noalias}) -> i32
// CHECK:         %[[IN0:.*]] = memref.view %mutableWeight[%{{.*}}][] : memref<384xi8> to memref<128xi8>
// CHECK:         func.call @chain_k0_elementwise(%{{.*}}, %[[IN0]], %{{.*}}, %{{.*}}) : (memref<128xi8>, memref<128xi8>, memref<128xi8>, memref<128xi8>) -> ()
// CHECK-NOT:     scf.for
// CHECK:         func.return
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = glow.add %x, %y : tensor<4x8xf32>
  %1 = glow.relu %0 : tensor<4x8xf32>
  %2 = glow.sigmoid %1 : tensor<4x8xf32>
  %3 = glow.mul %2, %x : tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}

// -----

// A value of the chain that is also an output is stored (once), and read back from its
// register, not from memory.
// CHECK-LABEL: func.func private @two_outputs_k0_elementwise(
// CHECK:         scf.for %[[I:.*]] =
// CHECK-NEXT:      %[[X:.*]] = memref.load %{{.*}}[%[[I]]] : memref<16xf32>
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT:      memref.store %[[N]], %[[O1:.*]][%[[I]]] : memref<16xf32>
// CHECK-NEXT:      %[[T:.*]] = math.sqrt %[[N]] : f32
// CHECK-NEXT:      memref.store %[[T]], %{{.*}}[%[[I]]] : memref<16xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     scf.for
func.func @two_outputs(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %0 = glow.neg %x : tensor<16xf32>
  %1 = glow.sqrt %0 : tensor<16xf32>
  func.return %0, %1 : tensor<16xf32>, tensor<16xf32>
}

// -----

// Different element counts: two loops, two kernels.
// CHECK-LABEL: func.func private @counts_k0_element_floor(
// CHECK:         scf.for
// CHECK:           math.floor {{.*}} : f32
// CHECK-LABEL: func.func private @counts_k1_element_ceil(
// CHECK:         scf.for
// CHECK:           math.ceil {{.*}} : f32
// CHECK-LABEL: func.func @counts(
// CHECK-NOT:     scf.for
// CHECK:         func.call @counts_k0_element_floor(
// CHECK:         func.call @counts_k1_element_ceil(
// CHECK-NOT:     scf.for
func.func @counts(%x: tensor<8xf32>, %y: tensor<2x8xf32>) -> (tensor<8xf32>, tensor<2x8xf32>) {
  %0 = glow.floor %x : tensor<8xf32>
  %1 = glow.ceil %y : tensor<2x8xf32>
  func.return %0, %1 : tensor<8xf32>, tensor<2x8xf32>
}

// -----

// Quantized, integer and bool element types load their storage integers (signless).
// CHECK-LABEL: func.func private @types_k0_elementwise(
// CHECK:         scf.for
// CHECK:           memref.load %{{.*}} : memref<6xi8>
// CHECK:           arith.sitofp {{.*}} : i32 to f32
// CHECK:           arith.cmpi slt, {{.*}} : i32
// CHECK:           memref.store %{{.*}} : memref<6xi1>
func.func @types(%q: tensor<6x!glow.quant<i8, scale = 0.5, offset = 2>>, %a: tensor<6xi32>, %b: tensor<6xi32>) -> (tensor<6xf32>, tensor<6xi1>) {
  %0 = glow.dequantize %q : tensor<6x!glow.quant<i8, scale = 0.5, offset = 2>> -> tensor<6xf32>
  %1 = glow.cmp_lt %a, %b : tensor<6xi32> -> tensor<6xi1>
  func.return %0, %1 : tensor<6xf32>, tensor<6xi1>
}

// -----

// Planned glow_ir (second RUN line, VIEW prefix). Views: %v1 overlaps %v0 shifted by one
// element, so the relu writing %v0 and the neg reading %v1 cannot share a loop (iteration
// i would read element i+1 of the relu's result before it is written). The disjoint
// halves %h0, %h1 of one buffer stack with the add reading both.
// VIEW-LABEL: func.func private @views_k0_relu(
// VIEW:         scf.for
// VIEW:           arith.select
// VIEW-NEXT:      memref.store
// VIEW-NEXT:    }
// VIEW-LABEL: func.func private @views_k1_element_neg(
// VIEW:         scf.for
// VIEW:           arith.negf
// VIEW:         }
// VIEW-LABEL: func.func private @views_k2_elementwise(
// VIEW:         scf.for
// VIEW:           math.floor
// VIEW:           math.ceil
// VIEW:           arith.addf
// VIEW:         }
// VIEW-LABEL: func.func @views(
// VIEW-NOT:     scf.for
// VIEW:         func.call @views_k0_relu(
// VIEW:         func.call @views_k1_element_neg(
// VIEW:         func.call @views_k2_elementwise(
// VIEW-NOT:     scf.for
// VIEW:         func.return
glow_ir.func @views declare {
  glow_ir.weight @x constant input : memref<8xf32>
  glow_ir.weight @y mutable output : memref<8xf32>
  glow_ir.weight @z mutable output : memref<4xf32>
} program(%x, %y, %z) {
  %a = glow_ir.alloc_activation {offset = 0 : i64} : memref<9xf32>
  %v0 = glow_ir.tensor_view %a[0] : memref<9xf32> to memref<8xf32>
  %v1 = glow_ir.tensor_view %a[1] : memref<9xf32> to memref<8xf32>
  glow_ir.relu @out %v0, @in %x : memref<8xf32>
  glow_ir.element_neg @out %y, @in %v1 : memref<8xf32>
  %h0 = glow_ir.tensor_view %a[0] : memref<9xf32> to memref<4xf32>
  %h1 = glow_ir.tensor_view %a[4] : memref<9xf32> to memref<4xf32>
  %x0 = glow_ir.tensor_view %x[0] : memref<8xf32> to memref<4xf32>
  glow_ir.element_floor @out %h0, @in %x0 : memref<4xf32>
  glow_ir.element_ceil @out %h1, @in %x0 : memref<4xf32>
  glow_ir.element_add @out %z, @in %h0, @in %h1 : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<9xf32>
} attributes {activations_size = 64 : i64, alignment = 64 : i64}

// -----

// Kernel functions are shared: two equal convolutions (same shapes, attributes and
// operand layout, different buffers) are ONE function called twice with the buffers'
// offsets; a convolution on another shape gets its own.
// VIEW-LABEL: func.func private @shared_k0_convolution(
// VIEW-SAME:      %r0: memref<512xi8> {llvm.noalias}, %r1: memref<512xi8> {llvm.noalias}, %r2: memref<576xi8> {llvm.noalias}, %r3: memref<16xi8> {llvm.noalias}
// VIEW-LABEL: func.func private @shared_k1_convolution(
// VIEW-SAME:      %r0: memref<128xi8> {llvm.noalias}, %r1: memref<512xi8> {llvm.noalias}
// VIEW-NOT:     func.func private
// VIEW-LABEL: func.func @shared(
// VIEW:         %[[A:.*]] = memref.view %activations[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<512xi8>
// VIEW:         func.call @shared_k0_convolution(%[[A]], %{{.*}}, %{{.*}}, %{{.*}})
// VIEW:         %[[B:.*]] = memref.view %activations[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<512xi8>
// VIEW:         func.call @shared_k0_convolution(%[[B]], %[[A]], %{{.*}}, %{{.*}})
// VIEW:         func.call @shared_k1_convolution(
// VIEW-NOT:     func.call
// VIEW:         func.return
glow_ir.func @shared declare {
  glow_ir.weight @x constant input : memref<1x4x4x8xf32>
  glow_ir.weight @w constant input : memref<4x4x3x3xf32>
  glow_ir.weight @w2 constant input : memref<4x4x3x3xf32>
  glow_ir.weight @b constant input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<1x4x2x4xf32>
} program(%x, %w, %w2, %b, %y) {
  %a = glow_ir.alloc_activation {offset = 0 : i64} : memref<1x4x4x8xf32>
  %c = glow_ir.alloc_activation {offset = 512 : i64} : memref<1x4x4x8xf32>
  glow_ir.convolution @out %a, @in %x, @in %w, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : memref<1x4x4x8xf32>, memref<1x4x4x8xf32>, memref<4x4x3x3xf32>, memref<4xf32>
  glow_ir.convolution @out %c, @in %a, @in %w2, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : memref<1x4x4x8xf32>, memref<1x4x4x8xf32>, memref<4x4x3x3xf32>, memref<4xf32>
  glow_ir.convolution @out %y, @in %c, @in %w, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : memref<1x4x2x4xf32>, memref<1x4x4x8xf32>, memref<4x4x3x3xf32>, memref<4xf32>
  glow_ir.dealloc_activation %c : memref<1x4x4x8xf32>
  glow_ir.dealloc_activation %a : memref<1x4x4x8xf32>
} attributes {activations_size = 1024 : i64, alignment = 64 : i64}

// -----

// glow.if: the entry point loads the condition's byte and branches with scf.if, each
// branch calling its own kernels on the operands' places (the output weight at 128, x at
// 64 in the mutable area).
// CHECK-LABEL: func.func @branches(
// CHECK:         %[[C:.*]] = memref.view %mutableWeight[%{{.*}}][] : memref<192xi8> to memref<1xi1>
// CHECK-NEXT:    %[[B:.*]] = memref.load %[[C]][%{{.*}}] : memref<1xi1>
// CHECK-NEXT:    scf.if %[[B]] {
// CHECK:           func.call @branches_k0_tanh(
// CHECK-NEXT:    } else {
// CHECK:           func.call @branches_k1_element_neg(
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : i32
func.func @branches(%c: tensor<i1>, %x: tensor<16xf32>) -> tensor<16xf32> {
  %r = glow.if %c : tensor<i1> -> (tensor<16xf32>) {
    %a = glow.tanh %x : tensor<16xf32>
    glow.yield %a : tensor<16xf32>
  } else {
    %e = glow.neg %x : tensor<16xf32>
    glow.yield %e : tensor<16xf32>
  }
  func.return %r : tensor<16xf32>
}

// -----

// glow.loop: the entry point loads the trip count and the first condition, then an
// scf.while on (iteration number, condition): it goes on while the number is below the
// trip count and the condition holds; each iteration stores the number where the body
// reads it, calls the body's kernels, loads the condition the body wrote and steps.
// CHECK-LABEL: func.func @swap(
// CHECK:         %[[LIMIT:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<1xi64>
// CHECK:         %[[FIRST:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<1xi1>
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %{{.*}} = scf.while (%[[I:.*]] = %[[ZERO]], %[[GO:.*]] = %[[FIRST]]) : (i64, i1) -> i64 {
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpi slt, %[[I]], %[[LIMIT]] : i64
// CHECK-NEXT:      %[[BOTH:.*]] = arith.andi %[[LT]], %[[GO]] : i1
// CHECK-NEXT:      scf.condition(%[[BOTH]]) %[[I]] : i64
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%[[N:.*]]: i64):
// CHECK:           memref.store %[[N]], %{{.*}}[%{{.*}}] : memref<1xi64>
// CHECK:           func.call @swap_k1_element_add(
// CHECK:           %[[AGAIN:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<1xi1>
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[N]], %[[ONE]] : i64
// CHECK-NEXT:      scf.yield %[[NEXT]], %[[AGAIN]] : i64, i1
// CHECK-NEXT:    }
func.func @swap(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = glow.loop %m, %c, %a, %b : tensor<i64>, tensor<i1>, tensor<4xf32>, tensor<4xf32> -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %p: tensor<4xf32>, %q: tensor<4xf32>):
    %s = glow.add %p, %q : tensor<4xf32>
    %t = glow.splat {value = 1.0 : f32} : tensor<i1>
    glow.yield %t, %q, %s : tensor<i1>, tensor<4xf32>, tensor<4xf32>
  }
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
