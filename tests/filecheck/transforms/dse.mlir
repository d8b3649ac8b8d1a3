// RUN: glow-opt %s --split-input-file --dse | FileCheck %s

// A value computed and freed unread goes, with its alloc and dealloc; what fed only it
// (%a) dies in the same walk.
// CHECK-LABEL:  glow_ir.func @dead_chain
// CHECK:        program(%x, %y) {
// CHECK-NEXT:     glow_ir.relu @out %y, @in %x : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @dead_chain declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.tanh @out %b, @in %a : memref<4xf32>
  glow_ir.relu @out %y, @in %x : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// A write overwritten entirely (@out) before any read is dead; the second one stays.
// CHECK-LABEL:  glow_ir.func @overwritten
// CHECK:          %a = glow_ir.alloc_activation
// CHECK-NOT:      glow_ir.element_exp
// CHECK-NEXT:     glow_ir.tanh @out %a, @in %x
// CHECK-NEXT:     glow_ir.relu @out %y, @in %a
glow_ir.func @overwritten declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %a, @in %x : memref<4xf32>
  glow_ir.tanh @out %a, @in %x : memref<4xf32>
  glow_ir.relu @out %y, @in %a : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// Overwritten through a view of the whole buffer (another type, same bytes): dead too.
// CHECK-LABEL:  glow_ir.func @overwritten_by_full_view
// CHECK-NOT:      glow_ir.element_exp
// CHECK:          glow_ir.tanh @out %v, @in %x2
glow_ir.func @overwritten_by_full_view declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @x2 mutable input : memref<2x2xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %x2, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  %v = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<2x2xf32>
  glow_ir.element_exp @out %a, @in %x : memref<4xf32>
  glow_ir.tanh @out %v, @in %x2 : memref<2x2xf32>
  glow_ir.relu @out %y, @in %a : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// Must not fire: the value is read through a view (a reshape) before it dies.
// CHECK-LABEL:  glow_ir.func @read_through_view
// CHECK:          glow_ir.element_exp @out %a, @in %x
// CHECK-NEXT:     %v = glow_ir.tensor_view %a[0]
// CHECK-NEXT:     glow_ir.relu @out %y, @in %v
glow_ir.func @read_through_view declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<2x2xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %a, @in %x : memref<4xf32>
  %v = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<2x2xf32>
  glow_ir.relu @out %y, @in %v : memref<2x2xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// Must not fire: two views of one buffer that overlap (elements 0-1 and 1-2): the write
// through one is read through the other.
// CHECK-LABEL:  glow_ir.func @aliasing_views
// CHECK:          glow_ir.element_exp @out %lo, @in %h
// CHECK-NEXT:     glow_ir.relu @out %y, @in %mid
glow_ir.func @aliasing_views declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @h mutable input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<2xf32>
} program(%x, %h, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.tanh @out %a, @in %x : memref<4xf32>
  %lo = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<2xf32>
  %mid = glow_ir.tensor_view %a[1] : memref<4xf32> to memref<2xf32>
  glow_ir.element_exp @out %lo, @in %h : memref<2xf32>
  glow_ir.relu @out %y, @in %mid : memref<2xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// Must not fire: the second write covers half of the buffer (a partial view), the first
// write's other half is read.
// CHECK-LABEL:  glow_ir.func @partial_overwrite
// CHECK:          glow_ir.element_exp @out %a, @in %x
// CHECK-NEXT:     glow_ir.tanh @out %lo, @in %h
// CHECK-NEXT:     glow_ir.relu @out %y, @in %a
glow_ir.func @partial_overwrite declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @h mutable input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %h, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  %lo = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<2xf32>
  glow_ir.element_exp @out %a, @in %x : memref<4xf32>
  glow_ir.tanh @out %lo, @in %h : memref<2xf32>
  glow_ir.relu @out %y, @in %a : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// A partial write nothing reads afterwards is dead like any other.
// CHECK-LABEL:  glow_ir.func @dead_partial_write
// CHECK:          glow_ir.element_exp @out %a, @in %x
// CHECK-NEXT:     glow_ir.relu @out %y, @in %a
// CHECK-NOT:      glow_ir.tanh
glow_ir.func @dead_partial_write declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @h mutable input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %h, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %a, @in %x : memref<4xf32>
  glow_ir.relu @out %y, @in %a : memref<4xf32>
  %hi = glow_ir.tensor_view %a[2] : memref<4xf32> to memref<2xf32>
  glow_ir.tanh @out %hi, @in %h : memref<2xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// Must not fire: @inout reads before it writes (an insert keeps what it does not cover),
// so the first write is read.
// CHECK-LABEL:  glow_ir.func @inout_is_not_a_kill
// CHECK:          glow_ir.splat @out %a
// CHECK-NEXT:     glow_ir.insert_tensor @inout %a, @in %h
// CHECK-NEXT:     glow_ir.copy @out %y, @in %a
glow_ir.func @inout_is_not_a_kill declare {
  glow_ir.weight @h mutable input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%h, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.splat @out %a {value = 0.0 : f32} : memref<4xf32>
  glow_ir.insert_tensor @inout %a, @in %h {offsets = array<i64: 1>} : memref<4xf32>, memref<2xf32>
  glow_ir.copy @out %y, @in %a : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// Must not fire on weights: an output written twice keeps both writes (the last one
// is what the caller sees), and an output written and never read is observable.
// CHECK-LABEL:  glow_ir.func @output_written_twice
// CHECK:          glow_ir.element_exp @out %y, @in %x
// CHECK-NEXT:     glow_ir.relu @out %y, @in %x
glow_ir.func @output_written_twice declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  glow_ir.element_exp @out %y, @in %x : memref<4xf32>
  glow_ir.relu @out %y, @in %x : memref<4xf32>
}

// -----

// An instruction with two destinations stays when one of them is read (top_k's values
// go to the output, its indices are dead).
// CHECK-LABEL:  glow_ir.func @one_live_destination
// CHECK:          glow_ir.top_k @out %v, @out %i, @in %x
// CHECK-NEXT:     glow_ir.copy @out %y, @in %v
glow_ir.func @one_live_destination declare {
  glow_ir.weight @x mutable input : memref<2x4xf32>
  glow_ir.weight @y mutable output : memref<2x2xf32>
} program(%x, %y) {
  %v = glow_ir.alloc_activation : memref<2x2xf32>
  %i = glow_ir.alloc_activation : memref<2x2xi64>
  glow_ir.top_k @out %v, @out %i, @in %x {k = 2 : i64} : memref<2x2xf32>, memref<2x2xi64>, memref<2x4xf32>
  glow_ir.copy @out %y, @in %v : memref<2x2xf32>
  glow_ir.dealloc_activation %i : memref<2x2xi64>
  glow_ir.dealloc_activation %v : memref<2x2xf32>
}

// -----

// Both destinations dead: the instruction goes.
// CHECK-LABEL:  glow_ir.func @all_destinations_dead
// CHECK-NOT:      glow_ir.top_k
// CHECK:          glow_ir.relu
glow_ir.func @all_destinations_dead declare {
  glow_ir.weight @x mutable input : memref<2x4xf32>
  glow_ir.weight @y mutable output : memref<2x4xf32>
} program(%x, %y) {
  %v = glow_ir.alloc_activation : memref<2x2xf32>
  %i = glow_ir.alloc_activation : memref<2x2xi64>
  glow_ir.top_k @out %v, @out %i, @in %x {k = 2 : i64} : memref<2x2xf32>, memref<2x2xi64>, memref<2x4xf32>
  glow_ir.relu @out %y, @in %x : memref<2x4xf32>
  glow_ir.dealloc_activation %i : memref<2x2xi64>
  glow_ir.dealloc_activation %v : memref<2x2xf32>
}
