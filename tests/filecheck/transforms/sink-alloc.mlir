// RUN: glow-opt %s --split-input-file --sink-alloc | FileCheck %s

// Allocs at the start move right before the first instruction using their buffer.
// CHECK-LABEL:  glow_ir.func @to_first_use
// CHECK:          } program(%x, %y) {
// CHECK-NEXT:     %[[A:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[A]], @in %x : memref<4xf32>
// CHECK-NEXT:     %[[B:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %[[B]], @in %[[A]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_add @out %y, @in %[[A]], @in %[[B]] : memref<4xf32>
glow_ir.func @to_first_use declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  glow_ir.element_exp @out %b, @in %a : memref<4xf32>
  glow_ir.element_add @out %y, @in %a, @in %b : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// The first use is through a view of a view: the alloc moves before that instruction and
// the two views, which would now come before their buffer, move right before their first
// users (the source view before the view built on it). A view nobody uses follows the
// alloc.
// CHECK-LABEL:  glow_ir.func @views_follow
// CHECK:          } program(%x, %y, %z) {
// CHECK-NEXT:     %xv = glow_ir.tensor_view %x[0] : memref<4xf32> to memref<2x2xf32>
// CHECK-NEXT:     glow_ir.element_neg @out %z, @in %x : memref<4xf32>
// CHECK-NEXT:     %[[A:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     %[[U:.*]] = glow_ir.tensor_view %[[A]][0] : memref<4xf32> to memref<4x1xf32>
// CHECK-NEXT:     %[[V:.*]] = glow_ir.tensor_view %[[A]][0] : memref<4xf32> to memref<1x4xf32>
// CHECK-NEXT:     %[[W:.*]] = glow_ir.tensor_view %[[V]][0, 0] : memref<1x4xf32> to memref<2x2xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[W]], @in %xv : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %y, @in %[[A]] : memref<4xf32>
glow_ir.func @views_follow declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @z mutable output : memref<4xf32>
} program(%x, %y, %z) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  %u = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<4x1xf32>
  %v = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<1x4xf32>
  %w = glow_ir.tensor_view %v[0, 0] : memref<1x4xf32> to memref<2x2xf32>
  %xv = glow_ir.tensor_view %x[0] : memref<4xf32> to memref<2x2xf32>
  glow_ir.element_neg @out %z, @in %x : memref<4xf32>
  glow_ir.relu @out %w, @in %xv : memref<2x2xf32>
  glow_ir.element_exp @out %y, @in %a : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// Allocs right before their first use, or with only allocs and views between, stay:
// %a (a view of it between) and %b (the alloc of %c between); %c moves.
// CHECK-LABEL:  glow_ir.func @already_tight
// CHECK:          } program(%x, %y) {
// CHECK-NEXT:     %[[A:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     %[[V:.*]] = glow_ir.tensor_view %[[A]][0] : memref<4xf32> to memref<2x2xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[A]], @in %x : memref<4xf32>
// CHECK-NEXT:     %[[B:.*]] = glow_ir.alloc_activation : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.tanh @out %[[B]], @in %[[V]] : memref<2x2xf32>
// CHECK-NEXT:     %[[C:.*]] = glow_ir.alloc_activation : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %[[C]], @in %[[B]] : memref<2x2xf32>
glow_ir.func @already_tight declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<2x2xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  %v = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<2x2xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<2x2xf32>
  %c = glow_ir.alloc_activation : memref<2x2xf32>
  glow_ir.tanh @out %b, @in %v : memref<2x2xf32>
  glow_ir.element_exp @out %c, @in %b : memref<2x2xf32>
  glow_ir.element_add @out %y, @in %b, @in %c : memref<2x2xf32>
  glow_ir.dealloc_activation %c : memref<2x2xf32>
  glow_ir.dealloc_activation %b : memref<2x2xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// A buffer only its dealloc uses is allocated right before it (delete-dead-allocs
// removes the pair).
// CHECK-LABEL:  glow_ir.func @unused
// CHECK:          } program(%x, %y) {
// CHECK-NEXT:     glow_ir.relu @out %y, @in %x : memref<4xf32>
// CHECK-NEXT:     %[[A:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[A]] : memref<4xf32>
glow_ir.func @unused declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %y, @in %x : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}
