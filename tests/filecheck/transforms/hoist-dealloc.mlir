// RUN: glow-opt %s --split-input-file --hoist-dealloc | FileCheck %s

// Deallocs at the end (as lower-to-instr leaves them) move right after the last use of
// their buffer; two freed after one instruction keep their order.
// CHECK-LABEL:  glow_ir.func @to_last_use
// CHECK:          %[[A:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[A]], @in %x : memref<4xf32>
// CHECK-NEXT:     %[[B:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %[[B]], @in %[[A]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[A]] : memref<4xf32>
// CHECK-NEXT:     %[[C:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.tanh @out %[[C]], @in %[[B]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_add @out %y, @in %[[B]], @in %[[C]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[C]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[B]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_neg @out %z, @in %x : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @to_last_use declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @z mutable output : memref<4xf32>
} program(%x, %y, %z) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %a : memref<4xf32>
  %c = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.tanh @out %c, @in %b : memref<4xf32>
  glow_ir.element_add @out %y, @in %b, @in %c : memref<4xf32>
  glow_ir.element_neg @out %z, @in %x : memref<4xf32>
  glow_ir.dealloc_activation %c : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// A use through a view (even a view of a view) is a use of the buffer: %a lives until the
// tanh reads it through %w.
// CHECK-LABEL:  glow_ir.func @use_through_view
// CHECK:          glow_ir.element_exp @out %[[B:[^ ,]*]], @in %[[A:[^ ,]*]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.tanh @out %y, @in %w : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[A]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.copy @out %z, @in %[[B]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[B]] : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @use_through_view declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<2x2xf32>
  glow_ir.weight @z mutable output : memref<4xf32>
} program(%x, %y, %z) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %v = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<1x4xf32>
  %w = glow_ir.tensor_view %v[0, 0] : memref<1x4xf32> to memref<2x2xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %a : memref<4xf32>
  glow_ir.tanh @out %y, @in %w : memref<2x2xf32>
  glow_ir.copy @out %z, @in %b : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// Deallocs already right after their last use (or after only other deallocs) stay.
// CHECK-LABEL:  glow_ir.func @already_tight
// CHECK:          glow_ir.element_add @out %y, @in %[[B:[^ ,]*]], @in %[[A:[^ ,]*]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[A]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[B]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_neg @out %z, @in %x : memref<4xf32>
glow_ir.func @already_tight declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @z mutable output : memref<4xf32>
} program(%x, %y, %z) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.tanh @out %b, @in %x : memref<4xf32>
  glow_ir.element_add @out %y, @in %b, @in %a : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.element_neg @out %z, @in %x : memref<4xf32>
}

// -----

// A buffer nothing uses is freed right after its alloc; one only a view uses, after the
// view (delete-dead-allocs removes both).
// CHECK-LABEL:  glow_ir.func @unused
// CHECK:          %[[A:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[A]] : memref<4xf32>
// CHECK-NEXT:     %[[B:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     %{{.*}} = glow_ir.tensor_view %[[B]][0] : memref<4xf32> to memref<2x2xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[B]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.relu @out %y, @in %x : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @unused declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  %v = glow_ir.tensor_view %b[0] : memref<4xf32> to memref<2x2xf32>
  glow_ir.relu @out %y, @in %x : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}
