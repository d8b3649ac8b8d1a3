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

// -----

// A non-copy instruction never writes a weight through sharing: %a dies at the exp, but
// the exp's destination is the output and the output is not used as scratch space
// (Glow would put %a there).
// CHECK-LABEL:  glow_ir.func @no_scratch_in_weights
// CHECK:          %[[A:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[A]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %y, @in %[[A]] : memref<4xf32>
glow_ir.func @no_scratch_in_weights declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  glow_ir.element_exp @out %y, @in %a : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// A copy from an input into a buffer only read afterwards: read the input instead.
// CHECK-LABEL:  glow_ir.func @copy_from_input
// CHECK:          } program(%x, %y) {
// CHECK-NEXT:     glow_ir.relu @out %y, @in %x : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @copy_from_input declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.copy @out %a, @in %x : memref<4xf32>
  glow_ir.relu @out %y, @in %a : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// Copy propagation where both copies are read afterwards: they hold the same value, the
// add reads %s twice.
// CHECK-LABEL:  glow_ir.func @copy_both_read_later
// CHECK:          %[[S:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[S]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_add @out %y, @in %[[S]], @in %[[S]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[S]] : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @copy_both_read_later declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %s = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %s, @in %x : memref<4xf32>
  %d = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.copy @out %d, @in %s : memref<4xf32>
  glow_ir.element_add @out %y, @in %d, @in %s : memref<4xf32>
  glow_ir.dealloc_activation %d : memref<4xf32>
  glow_ir.dealloc_activation %s : memref<4xf32>
}

// -----

// The copy's source changes later (an insert into it) while the copy is still read:
// neither buffer can stand for the other.
// CHECK-LABEL:  glow_ir.func @copy_source_changes
// CHECK:          %[[S:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[S]], @in %x : memref<4xf32>
// CHECK-NEXT:     %[[D:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.copy @out %[[D]], @in %[[S]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.insert_tensor @inout %[[S]], @in %t {offsets = array<i64: 1>}
// CHECK-NEXT:     glow_ir.element_sub @out %y, @in %[[D]], @in %[[S]] : memref<4xf32>
glow_ir.func @copy_source_changes declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @t mutable input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %t, %y) {
  %s = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %s, @in %x : memref<4xf32>
  %d = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.copy @out %d, @in %s : memref<4xf32>
  glow_ir.insert_tensor @inout %s, @in %t {offsets = array<i64: 1>} : memref<4xf32>, memref<2xf32>
  glow_ir.element_sub @out %y, @in %d, @in %s : memref<4xf32>
  glow_ir.dealloc_activation %d : memref<4xf32>
  glow_ir.dealloc_activation %s : memref<4xf32>
}

// -----

// The copy's source is overwritten later while the copy is still read: the copy's
// readers must not read %s, but the value %s held up to the copy can be computed into
// %d directly (its alloc moves up to enclose the new first use).
// CHECK-LABEL:  glow_ir.func @copy_source_rewritten
// CHECK:          %[[S:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     %[[D:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[D]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_neg @out %[[S]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_sub @out %y, @in %[[D]], @in %[[S]] : memref<4xf32>
glow_ir.func @copy_source_rewritten declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %s = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %s, @in %x : memref<4xf32>
  %d = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.copy @out %d, @in %s : memref<4xf32>
  glow_ir.element_neg @out %s, @in %x : memref<4xf32>
  glow_ir.element_sub @out %y, @in %d, @in %s : memref<4xf32>
  glow_ir.dealloc_activation %d : memref<4xf32>
  glow_ir.dealloc_activation %s : memref<4xf32>
}

// -----

// The output is written twice: the relu's value is read by the exp, whose value is the
// final one. The exp now writes the output in place; its last write stays in @y.
// CHECK-LABEL:  glow_ir.func @output_written_twice
// CHECK:          } program(%x, %y) {
// CHECK-NEXT:     glow_ir.relu @out %y, @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %y, @in %y : memref<4xf32>
// CHECK-NEXT:   }
glow_ir.func @output_written_twice declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  glow_ir.relu @out %y, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %y : memref<4xf32>
  glow_ir.copy @out %y, @in %b : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
}

// -----

// The output's first value is still read (by the add) after the value copied into it at
// the end is computed: %b cannot live in @y, the copy stays the last write.
// CHECK-LABEL:  glow_ir.func @output_read_meanwhile
// CHECK:          glow_ir.relu @out %y, @in %x : memref<4xf32>
// CHECK-NEXT:     %[[B:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %[[B]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_add @out %z, @in %y, @in %[[B]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.copy @out %y, @in %[[B]] : memref<4xf32>
glow_ir.func @output_read_meanwhile declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @z mutable output : memref<4xf32>
} program(%x, %y, %z) {
  glow_ir.relu @out %y, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %x : memref<4xf32>
  glow_ir.element_add @out %z, @in %y, @in %b : memref<4xf32>
  glow_ir.copy @out %y, @in %b : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
}

// -----

// A concatenation built in a buffer then copied to the output is built in the output.
// CHECK-LABEL:  glow_ir.func @concat_into_output
// CHECK:          } program(%x, %y) {
// CHECK-NEXT:     glow_ir.insert_tensor @inout %y, @in %x {offsets = array<i64: 0>}
// CHECK-NEXT:     glow_ir.insert_tensor @inout %y, @in %x {offsets = array<i64: 2>}
// CHECK-NEXT:   }
glow_ir.func @concat_into_output declare {
  glow_ir.weight @x mutable input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %c = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.insert_tensor @inout %c, @in %x {offsets = array<i64: 0>} : memref<4xf32>, memref<2xf32>
  glow_ir.insert_tensor @inout %c, @in %x {offsets = array<i64: 2>} : memref<4xf32>, memref<2xf32>
  glow_ir.copy @out %y, @in %c : memref<4xf32>
  glow_ir.dealloc_activation %c : memref<4xf32>
}

// -----

// A transpose has no in-place pair: its source and destination stay apart.
// CHECK-LABEL:  glow_ir.func @not_inplace
// CHECK:          glow_ir.transpose @out %[[B:[^ ,]*]], @in %[[A:[^ ,]*]] {shuffle = array<i64: 1, 0>}
// CHECK-NEXT:     glow_ir.element_exp @out %y, @in %[[B]] : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[B]] : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[A]] : memref<2x2xf32>
glow_ir.func @not_inplace declare {
  glow_ir.weight @x mutable input : memref<2x2xf32>
  glow_ir.weight @y mutable output : memref<2x2xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<2x2xf32>
  glow_ir.relu @out %a, @in %x : memref<2x2xf32>
  %b = glow_ir.alloc_activation : memref<2x2xf32>
  glow_ir.transpose @out %b, @in %a {shuffle = array<i64: 1, 0>} : memref<2x2xf32>
  glow_ir.element_exp @out %y, @in %b : memref<2x2xf32>
  glow_ir.dealloc_activation %b : memref<2x2xf32>
  glow_ir.dealloc_activation %a : memref<2x2xf32>
}

// -----

// `copy %d <- %s` where %s was computed from %d's previous value by a transpose (no
// in-place pair): %s's value cannot be built in %d (the transpose would read and write
// %d), so %d's new value lives in %s instead.
// CHECK-LABEL:  glow_ir.func @reads_old_value
// CHECK:          glow_ir.relu @out %[[D:[^ ,]*]], @in %x : memref<2x2xf32>
// CHECK-NEXT:     %[[S:.*]] = glow_ir.alloc_activation : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.transpose @out %[[S]], @in %[[D]] {shuffle = array<i64: 1, 0>}
// CHECK-NEXT:     glow_ir.element_add @out %y, @in %[[S]], @in %[[S]] : memref<2x2xf32>
glow_ir.func @reads_old_value declare {
  glow_ir.weight @x mutable input : memref<2x2xf32>
  glow_ir.weight @y mutable output : memref<2x2xf32>
} program(%x, %y) {
  %d = glow_ir.alloc_activation : memref<2x2xf32>
  glow_ir.relu @out %d, @in %x : memref<2x2xf32>
  %s = glow_ir.alloc_activation : memref<2x2xf32>
  glow_ir.transpose @out %s, @in %d {shuffle = array<i64: 1, 0>} : memref<2x2xf32>
  glow_ir.copy @out %d, @in %s : memref<2x2xf32>
  glow_ir.element_add @out %y, @in %d, @in %s : memref<2x2xf32>
  glow_ir.dealloc_activation %s : memref<2x2xf32>
  glow_ir.dealloc_activation %d : memref<2x2xf32>
}

// -----

// Renaming is per value, not per buffer: %d holds two values; the first (born where
// %s's second value dies) moves into %s, the second stays in %d.
// CHECK-LABEL:  glow_ir.func @one_value_of_two
// CHECK:          glow_ir.tanh @out %[[S:[^ ,]*]], @in %x : memref<4xf32>
// CHECK-NEXT:     %[[D:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %[[S]], @in %[[S]] : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_add @out %y, @in %[[S]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.sigmoid @out %[[D]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_mul @out %w, @in %[[D]], @in %[[D]] : memref<4xf32>
glow_ir.func @one_value_of_two declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @z mutable output : memref<4xf32>
  glow_ir.weight @w mutable output : memref<4xf32>
} program(%x, %y, %z, %w) {
  %s = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %s, @in %x : memref<4xf32>
  glow_ir.element_neg @out %z, @in %s : memref<4xf32>
  glow_ir.tanh @out %s, @in %x : memref<4xf32>
  %d = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %d, @in %s : memref<4xf32>
  glow_ir.element_add @out %y, @in %d, @in %x : memref<4xf32>
  glow_ir.sigmoid @out %d, @in %x : memref<4xf32>
  glow_ir.element_mul @out %w, @in %d, @in %d : memref<4xf32>
  glow_ir.dealloc_activation %d : memref<4xf32>
  glow_ir.dealloc_activation %s : memref<4xf32>
}

// -----

// A copy into an input weight (mutable, so it may be written) is not propagated: the
// caller's input is never used as scratch space, and the exp keeps writing %b.
// CHECK-LABEL:  glow_ir.func @copy_into_input
// CHECK:          %[[B:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %[[B]], @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.copy @out %x, @in %[[B]] : memref<4xf32>
glow_ir.func @copy_into_input declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %x : memref<4xf32>
  glow_ir.copy @out %x, @in %b : memref<4xf32>
  glow_ir.relu @out %y, @in %x : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
}
