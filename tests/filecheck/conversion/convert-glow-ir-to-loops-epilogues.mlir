// RUN: glow-opt %s --split-input-file --convert-glow-ir-to-loops --cse | FileCheck %s

// Fused epilogues (conversion/glow_ir_to_loops/epilogue.py, analysis/epilogue_fusion.py
// with the cpu's rules): the element-wise instructions after a convolution or matrix
// product are computed where the product's kernel finishes each element, in ONE kernel
// function; the entry point calls nothing else.

// BERT's linear layer: the bias added to a view of the product (the same bytes), then
// relu: both applied on the copy back of gemm's accumulation tile, one store to C.
// CHECK-LABEL: func.func private @linear_k0_mat_mul_add_relu(
// CHECK:         scf.for
// CHECK:           %[[B:.*]] = memref.load %{{.*}} : memref<2x8xf32>
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %{{.*}}, %[[B]] : f32
// CHECK:           %[[R:.*]] = arith.select %{{.*}}, %{{.*}}, %[[SUM]] : f32
// CHECK-NEXT:      memref.store %[[R]], %{{.*}} : memref<2x8xf32>
// CHECK:         func.return
// CHECK-LABEL: func.func @linear(
// CHECK:         func.call @linear_k0_mat_mul_add_relu(
// CHECK-NOT:     func.call
// CHECK:         func.return
glow_ir.func @linear declare {
  glow_ir.weight @x constant input : memref<2x4xf32>
  glow_ir.weight @w constant input : memref<4x8xf32>
  glow_ir.weight @bias constant input : memref<1x2x8xf32>
  glow_ir.weight @y mutable output : memref<1x2x8xf32>
} program(%x, %w, %bias, %y) {
  %a = glow_ir.tensor_view %y[0, 0, 0] : memref<1x2x8xf32> to memref<2x8xf32>
  glow_ir.mat_mul @out %a, @in %x, @in %w : memref<2x8xf32>, memref<2x4xf32>, memref<4x8xf32>
  %v = glow_ir.tensor_view %a[0, 0] : memref<2x8xf32> to memref<1x2x8xf32>
  glow_ir.element_add @out %v, @in %v, @in %bias : memref<1x2x8xf32>
  glow_ir.relu @out %y, @in %y : memref<1x2x8xf32>
} attributes {activations_size = 0 : i64, alignment = 64 : i64}

// -----

// Attention's scale: a splat read only by the division is a constant of the kernel,
// never written to memory; the result goes to the output, the product's own buffer
// (dead after the division) holds only the accumulation.
// CHECK-LABEL: func.func private @scale_k0_batch_mat_mul_splat_div(
// CHECK-NOT:       memref.store %{{.*}} : memref<2x3x5xf32>
// CHECK:           %[[EIGHT:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT:      %[[D:.*]] = arith.divf %{{.*}}, %[[EIGHT]] : f32
// CHECK-NEXT:      memref.store %[[D]], %{{.*}} : memref<2x3x5xf32>
// CHECK-LABEL: func.func @scale(
// CHECK:         func.call @scale_k0_batch_mat_mul_splat_div(
// CHECK-NOT:     func.call
glow_ir.func @scale declare {
  glow_ir.weight @q constant input : memref<2x3x4xf32>
  glow_ir.weight @k constant input : memref<2x4x5xf32>
  glow_ir.weight @y mutable output : memref<2x3x5xf32>
} program(%q, %k, %y) {
  %s = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x3x5xf32>
  glow_ir.batch_mat_mul @out %s, @in %q, @in %k : memref<2x3x5xf32>, memref<2x3x4xf32>, memref<2x4x5xf32>
  %c = glow_ir.alloc_activation {offset = 128 : i64} : memref<2x3x5xf32>
  glow_ir.splat @out %c {value = 8.0 : f32} : memref<2x3x5xf32>
  glow_ir.element_div @out %y, @in %s, @in %c : memref<2x3x5xf32>
  glow_ir.dealloc_activation %c : memref<2x3x5xf32>
  glow_ir.dealloc_activation %s : memref<2x3x5xf32>
} attributes {activations_size = 256 : i64, alignment = 64 : i64}

// -----

// ResNet's block end: convolution, add of the skip (in place), relu.
// CHECK-LABEL: func.func private @block_k0_convolution_add_relu(
// CHECK-LABEL: func.func @block(
// CHECK:         func.call @block_k0_convolution_add_relu(
// CHECK-NOT:     func.call
glow_ir.func @block declare {
  glow_ir.weight @x constant input : memref<1x4x4x8xf32>
  glow_ir.weight @w constant input : memref<4x4x3x3xf32>
  glow_ir.weight @b constant input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<1x4x4x8xf32>
} program(%x, %w, %b, %y) {
  glow_ir.convolution @out %y, @in %x, @in %w, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : memref<1x4x4x8xf32>, memref<1x4x4x8xf32>, memref<4x4x3x3xf32>, memref<4xf32>
  glow_ir.element_add @out %y, @in %y, @in %x : memref<1x4x4x8xf32>
  glow_ir.relu @out %y, @in %y : memref<1x4x4x8xf32>
} attributes {activations_size = 0 : i64, alignment = 64 : i64}

// -----

// Must not fire: the product is read again after the add (used twice): the add and
// the multiply are an element-wise stack of their own.
// CHECK-LABEL: func.func private @twice_k0_mat_mul(
// CHECK-LABEL: func.func private @twice_k1_elementwise(
// CHECK-LABEL: func.func @twice(
// CHECK:         func.call @twice_k0_mat_mul(
// CHECK:         func.call @twice_k1_elementwise(
glow_ir.func @twice declare {
  glow_ir.weight @x constant input : memref<2x4xf32>
  glow_ir.weight @w constant input : memref<4x8xf32>
  glow_ir.weight @t constant input : memref<2x8xf32>
  glow_ir.weight @y mutable output : memref<2x8xf32>
  glow_ir.weight @z mutable output : memref<2x8xf32>
} program(%x, %w, %t, %y, %z) {
  %a = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x8xf32>
  glow_ir.mat_mul @out %a, @in %x, @in %w : memref<2x8xf32>, memref<2x4xf32>, memref<4x8xf32>
  glow_ir.element_add @out %y, @in %a, @in %t : memref<2x8xf32>
  glow_ir.element_mul @out %z, @in %a, @in %t : memref<2x8xf32>
  glow_ir.dealloc_activation %a : memref<2x8xf32>
} attributes {activations_size = 64 : i64, alignment = 64 : i64}

// -----

// Must not fire: another shape (the add works on half of the product, a view with
// fewer elements), and an op that is not element-wise between (a broadcast).
// CHECK-LABEL: func.func private @shapes_k0_mat_mul(
// CHECK-LABEL: func.func private @shapes_k1_element_add(
// CHECK-LABEL: func.func private @shapes_k2_broadcast(
// CHECK-LABEL: func.func private @shapes_k3_element_add(
glow_ir.func @shapes declare {
  glow_ir.weight @x constant input : memref<2x4xf32>
  glow_ir.weight @w constant input : memref<4x8xf32>
  glow_ir.weight @h constant input : memref<1x8xf32>
  glow_ir.weight @r constant input : memref<8xf32>
  glow_ir.weight @y mutable output : memref<2x8xf32>
  glow_ir.weight @z mutable output : memref<2x8xf32>
} program(%x, %w, %h, %r, %y, %z) {
  glow_ir.mat_mul @out %y, @in %x, @in %w : memref<2x8xf32>, memref<2x4xf32>, memref<4x8xf32>
  %top = glow_ir.tensor_view %y[0, 0] : memref<2x8xf32> to memref<1x8xf32>
  glow_ir.element_add @out %top, @in %top, @in %h : memref<1x8xf32>
  glow_ir.mat_mul @out %z, @in %x, @in %w : memref<2x8xf32>, memref<2x4xf32>, memref<4x8xf32>
  %t = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x8xf32>
  glow_ir.broadcast @out %t, @in %r {axis = 1 : i64} : memref<2x8xf32>, memref<8xf32>
  glow_ir.element_add @out %z, @in %z, @in %t : memref<2x8xf32>
  glow_ir.dealloc_activation %t : memref<2x8xf32>
} attributes {activations_size = 64 : i64, alignment = 64 : i64}

// -----

// Must not fire: the planned places clash. The relu's result is placed on the bytes of
// the product's input (hand-written here: a planner gives a result whose life starts
// after the product the bytes of an input the product reads last), so writing it while
// the product still reads would clobber the input.
// CHECK-LABEL: func.func private @clash_k0_copy(
// CHECK-LABEL: func.func private @clash_k1_mat_mul(
// CHECK-LABEL: func.func private @clash_k2_relu(
glow_ir.func @clash declare {
  glow_ir.weight @x constant input : memref<2x4xf32>
  glow_ir.weight @w constant input : memref<4x8xf32>
  glow_ir.weight @y mutable output : memref<2x8xf32>
} program(%x, %w, %y) {
  %in = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x4xf32>
  %r = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x8xf32>
  %a = glow_ir.alloc_activation {offset = 128 : i64} : memref<2x8xf32>
  glow_ir.copy @out %in, @in %x : memref<2x4xf32>
  glow_ir.mat_mul @out %a, @in %in, @in %w : memref<2x8xf32>, memref<2x4xf32>, memref<4x8xf32>
  glow_ir.relu @out %r, @in %a : memref<2x8xf32>
  glow_ir.dealloc_activation %a : memref<2x8xf32>
  glow_ir.dealloc_activation %in : memref<2x4xf32>
  glow_ir.copy @out %y, @in %r : memref<2x8xf32>
  glow_ir.dealloc_activation %r : memref<2x8xf32>
} attributes {activations_size = 256 : i64, alignment = 64 : i64}
