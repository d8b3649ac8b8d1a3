// RUN: glow-opt %s --split-input-file --delete-dead-allocs | FileCheck %s

// %a is only deallocated, %b only viewed by views nobody uses (one of them a view of a
// view): both go with their deallocs and views; so does an unused view of a weight.
// CHECK-LABEL:  glow_ir.func @dead
// CHECK:          } program(%x, %y) {
// CHECK-NEXT:     glow_ir.relu @out %y, @in %x : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @dead declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  %v = glow_ir.tensor_view %b[0] : memref<4xf32> to memref<2x2xf32>
  %w = glow_ir.tensor_view %v[1, 0] : memref<2x2xf32> to memref<2xf32>
  %xv = glow_ir.tensor_view %x[0] : memref<4xf32> to memref<2x2xf32>
  glow_ir.relu @out %y, @in %x : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// Buffers read or written, directly or through a view, stay; so does one that is written
// and never read (removing its write is dse's job). The unused view of %c goes.
// CHECK-LABEL:  glow_ir.func @alive
// CHECK:          } program(%x, %y) {
// CHECK-NEXT:     %[[A:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     %[[V:.*]] = glow_ir.tensor_view %[[A]][0] : memref<4xf32> to memref<2x2xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[A]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.tanh @out %y, @in %[[V]] : memref<2x2xf32>
// CHECK-NEXT:     %[[C:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_neg @out %[[C]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[C]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[A]] : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @alive declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<2x2xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  %v = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<2x2xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  glow_ir.tanh @out %y, @in %v : memref<2x2xf32>
  %c = glow_ir.alloc_activation : memref<4xf32>
  %cv = glow_ir.tensor_view %c[0] : memref<4xf32> to memref<2x2xf32>
  glow_ir.element_neg @out %c, @in %x : memref<4xf32>
  glow_ir.dealloc_activation %c : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}
