// RUN: glow-opt %s --split-input-file --share-buffers | FileCheck %s

// The example of the pass: exp's source dies where its destination is born (an in-place
// pair), and the copy into the output is propagated: exp writes @y directly. Relu's
// destination is an activation and its source a weight: never shared.
// CHECK-LABEL:  glow_ir.func @copy_into_output
// CHECK:          %[[A:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[A]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %y, @in %[[A]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[A]] : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @copy_into_output declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %a : memref<4xf32>
  glow_ir.copy @out %y, @in %b : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// A chain of element-wise ops, each source dying where its destination is born: one
// buffer holds every value (Glow's choice: the buffer that already holds several values
// takes the one of a single-value buffer, which then disappears). The multiply reads
// %d twice: both operands are in-place pairs of its destination, but that is a weight.
// CHECK-LABEL:  glow_ir.func @inplace_chain
// CHECK:          %[[C:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[C]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %[[C]], @in %[[C]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.tanh @out %[[C]], @in %[[C]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_add @out %[[C]], @in %[[C]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_mul @out %y, @in %[[C]], @in %[[C]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[C]] : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @inplace_chain declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %a : memref<4xf32>
  %c = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.tanh @out %c, @in %b : memref<4xf32>
  %d = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_add @out %d, @in %c, @in %x : memref<4xf32>
  glow_ir.element_mul @out %y, @in %d, @in %d : memref<4xf32>
  glow_ir.dealloc_activation %d : memref<4xf32>
  glow_ir.dealloc_activation %c : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// %a is still read after the exp (by the add): %b cannot take its buffer, nor %a %b's.
// The copy is still propagated into the output.
// CHECK-LABEL:  glow_ir.func @source_still_read
// CHECK:          %[[A:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[A]], @in %x : memref<4xf32>
// CHECK-NEXT:     %[[B:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %[[B]], @in %[[A]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_add @out %y, @in %[[A]], @in %[[B]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[B]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[A]] : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @source_still_read declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %a : memref<4xf32>
  %c = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_add @out %c, @in %a, @in %b : memref<4xf32>
  glow_ir.copy @out %y, @in %c : memref<4xf32>
  glow_ir.dealloc_activation %c : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// %a is read later through a view (%v): it is alive after the exp, whose destination
// must get a buffer of its own (here the output, by copy propagation).
// CHECK-LABEL:  glow_ir.func @read_through_view_later
// CHECK:          %[[A:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[A]], @in %x : memref<4xf32>
// CHECK-NEXT:     %[[V:.*]] = glow_ir.tensor_view %[[A]][0] : memref<4xf32> to memref<2x2xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %y, @in %[[A]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.tanh @out %z, @in %[[V]] : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[A]] : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @read_through_view_later declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @z mutable output : memref<2x2xf32>
} program(%x, %y, %z) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %v = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<2x2xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %a : memref<4xf32>
  glow_ir.tanh @out %z, @in %v : memref<2x2xf32>
  glow_ir.copy @out %y, @in %b : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// Operands through views: the destination is a reshape view of a 2x2 buffer, the source
// a 4-element buffer; same element type and count, so the destination's value moves into
// the source's buffer, its later uses through a new reshape view of it.
// CHECK-LABEL:  glow_ir.func @views_and_reshapes
// CHECK:          %[[A:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[A]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %[[A]], @in %[[A]] : memref<4xf32>
// CHECK-NEXT:     %[[R:.*]] = glow_ir.tensor_view %[[A]][0] : memref<4xf32> to memref<2x2xf32>
// CHECK-NEXT:     glow_ir.tanh @out %z, @in %[[R]] : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[A]] : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @views_and_reshapes declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @z mutable output : memref<2x2xf32>
} program(%x, %z) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<2x2xf32>
  %bv = glow_ir.tensor_view %b[0, 0] : memref<2x2xf32> to memref<4xf32>
  glow_ir.element_exp @out %bv, @in %a : memref<4xf32>
  glow_ir.tanh @out %z, @in %b : memref<2x2xf32>
  glow_ir.dealloc_activation %b : memref<2x2xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// The destination is a view of part of a bigger buffer (a partial write): its value does
// not start there, nothing is shared.
// CHECK-LABEL:  glow_ir.func @partial_destination
// CHECK:          %[[A:.*]] = glow_ir.alloc_activation : memref<2xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[A]], @in %x : memref<2xf32>
// CHECK-NEXT:     %[[B:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     %[[V:.*]] = glow_ir.tensor_view %[[B]][2] : memref<4xf32> to memref<2xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %[[V]], @in %[[A]] : memref<2xf32>
glow_ir.func @partial_destination declare {
  glow_ir.weight @x mutable input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<2xf32>
  glow_ir.relu @out %a, @in %x : memref<2xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  %v = glow_ir.tensor_view %b[2] : memref<4xf32> to memref<2xf32>
  glow_ir.element_exp @out %v, @in %a : memref<2xf32>
  %w = glow_ir.tensor_view %b[0] : memref<4xf32> to memref<2xf32>
  glow_ir.element_neg @out %w, @in %x : memref<2xf32>
  glow_ir.tanh @out %y, @in %b : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<2xf32>
}

// -----

// An in-place pair whose operand types differ (a comparison: i1 from f32) is no in-place
// pair: %c keeps its own buffer though %a dies there.
// CHECK-LABEL:  glow_ir.func @different_types
// CHECK:          %[[A:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK:          %[[C:.*]] = glow_ir.alloc_activation : memref<4xi1>
// CHECK-NEXT:     glow_ir.element_cmp_lt @out %[[C]], @in %[[A]], @in %x : memref<4xi1>, memref<4xf32>, memref<4xf32>
// CHECK-NEXT:     glow_ir.element_select @out %y, @in %[[C]], @in %x, @in %x
glow_ir.func @different_types declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %c = glow_ir.alloc_activation : memref<4xi1>
  glow_ir.element_cmp_lt @out %c, @in %a, @in %x : memref<4xi1>, memref<4xf32>, memref<4xf32>
  glow_ir.element_select @out %y, @in %c, @in %x, @in %x : memref<4xf32>, memref<4xi1>, memref<4xf32>, memref<4xf32>
  glow_ir.dealloc_activation %c : memref<4xi1>
  glow_ir.dealloc_activation %a : memref<4xf32>
}
