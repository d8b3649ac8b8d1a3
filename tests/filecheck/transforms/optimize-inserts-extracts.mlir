// RUN: glow-opt %s --split-input-file --optimize-inserts-extracts | FileCheck %s

// A concat along the first dimension (what lower-to-instr makes of glow.concat): each
// producer writes its rows of the destination in place, through a view; the inserts and
// the inputs' buffers go.
// CHECK-LABEL:  glow_ir.func @concat_rows
// CHECK:        program(%x, %w, %y) {
// CHECK-NEXT:     %[[A:.*]] = glow_ir.tensor_view %y[0, 0] : memref<4x3xf32> to memref<2x3xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[A]], @in %x : memref<2x3xf32>
// CHECK-NEXT:     %[[B:.*]] = glow_ir.tensor_view %y[2, 0] : memref<4x3xf32> to memref<2x3xf32>
// CHECK-NEXT:     glow_ir.tanh @out %[[B]], @in %w : memref<2x3xf32>
// CHECK-NEXT:   }
glow_ir.func @concat_rows declare {
  glow_ir.weight @x mutable input : memref<2x3xf32>
  glow_ir.weight @w mutable input : memref<2x3xf32>
  glow_ir.weight @y mutable output : memref<4x3xf32>
} program(%x, %w, %y) {
  %a = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.relu @out %a, @in %x : memref<2x3xf32>
  %b = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.tanh @out %b, @in %w : memref<2x3xf32>
  glow_ir.insert_tensor @inout %y, @in %a {offsets = array<i64: 0, 0>} : memref<4x3xf32>, memref<2x3xf32>
  glow_ir.insert_tensor @inout %y, @in %b {offsets = array<i64: 2, 0>} : memref<4x3xf32>, memref<2x3xf32>
  glow_ir.dealloc_activation %b : memref<2x3xf32>
  glow_ir.dealloc_activation %a : memref<2x3xf32>
}

// -----

// The destination is an activation allocated after the producers: its alloc moves up
// before the first producer (the view must see it allocated). A leading 1 and a
// partial dimension still make a contiguous box (1x1x3 at [0, 1, 0] of 1x2x3).
// CHECK-LABEL:  glow_ir.func @dest_alloc_moves_up
// CHECK:        program(%x, %w, %z) {
// CHECK-NEXT:     %c = glow_ir.alloc_activation : memref<1x2x3xf32>
// CHECK-NEXT:     %[[A:.*]] = glow_ir.tensor_view %c[0, 0, 0] : memref<1x2x3xf32> to memref<1x1x3xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[A]], @in %x
// CHECK-NEXT:     %[[B:.*]] = glow_ir.tensor_view %c[0, 1, 0] : memref<1x2x3xf32> to memref<1x1x3xf32>
// CHECK-NEXT:     glow_ir.tanh @out %[[B]], @in %w
// CHECK-NEXT:     glow_ir.element_exp @out %z, @in %c
// CHECK-NEXT:     glow_ir.dealloc_activation %c
// CHECK-NEXT:   }
glow_ir.func @dest_alloc_moves_up declare {
  glow_ir.weight @x mutable input : memref<1x1x3xf32>
  glow_ir.weight @w mutable input : memref<1x1x3xf32>
  glow_ir.weight @z mutable output : memref<1x2x3xf32>
} program(%x, %w, %z) {
  %a = glow_ir.alloc_activation : memref<1x1x3xf32>
  glow_ir.relu @out %a, @in %x : memref<1x1x3xf32>
  %b = glow_ir.alloc_activation : memref<1x1x3xf32>
  glow_ir.tanh @out %b, @in %w : memref<1x1x3xf32>
  %c = glow_ir.alloc_activation : memref<1x2x3xf32>
  glow_ir.insert_tensor @inout %c, @in %a {offsets = array<i64: 0, 0, 0>} : memref<1x2x3xf32>, memref<1x1x3xf32>
  glow_ir.insert_tensor @inout %c, @in %b {offsets = array<i64: 0, 1, 0>} : memref<1x2x3xf32>, memref<1x1x3xf32>
  glow_ir.element_exp @out %z, @in %c : memref<1x2x3xf32>
  glow_ir.dealloc_activation %c : memref<1x2x3xf32>
  glow_ir.dealloc_activation %b : memref<1x1x3xf32>
  glow_ir.dealloc_activation %a : memref<1x1x3xf32>
}

// -----

// Must not fire: a concat along columns is not contiguous (2x3 inside 2x6 at [0, 3]),
// and an insert with count 2 stays an insert (Glow's rule: the producer would have to
// run twice).
// CHECK-LABEL:  glow_ir.func @not_contiguous
// CHECK:          glow_ir.insert_tensor @inout %y, @in %a {offsets = array<i64: 0, 3>}
// CHECK:          glow_ir.insert_tensor @inout %z, @in %b {offsets = array<i64: 0, 0>, count = 2 : i64, axis = 0 : i64}
glow_ir.func @not_contiguous declare {
  glow_ir.weight @x mutable input : memref<2x3xf32>
  glow_ir.weight @y mutable output : memref<2x6xf32>
  glow_ir.weight @z mutable output : memref<4x3xf32>
} program(%x, %y, %z) {
  %a = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.relu @out %a, @in %x : memref<2x3xf32>
  glow_ir.insert_tensor @inout %y, @in %a {offsets = array<i64: 0, 3>} : memref<2x6xf32>, memref<2x3xf32>
  %b = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.tanh @out %b, @in %x : memref<2x3xf32>
  glow_ir.insert_tensor @inout %z, @in %b {offsets = array<i64: 0, 0>, count = 2 : i64, axis = 0 : i64} : memref<4x3xf32>, memref<2x3xf32>
  glow_ir.dealloc_activation %b : memref<2x3xf32>
  glow_ir.dealloc_activation %a : memref<2x3xf32>
}

// -----

// Must not fire: the destination's rows are read between the producer and the insert
// (they must still hold the old value there).
// CHECK-LABEL:  glow_ir.func @dest_read_in_between
// CHECK:          glow_ir.relu @out %a, @in %x
// CHECK-NEXT:     glow_ir.tanh @out %z, @in %y
// CHECK-NEXT:     glow_ir.insert_tensor @inout %y, @in %a
glow_ir.func @dest_read_in_between declare {
  glow_ir.weight @x mutable input : memref<2x3xf32>
  glow_ir.weight @y mutable output : memref<4x3xf32>
  glow_ir.weight @z mutable output : memref<4x3xf32>
} program(%x, %y, %z) {
  %a = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.relu @out %a, @in %x : memref<2x3xf32>
  glow_ir.tanh @out %z, @in %y : memref<4x3xf32>
  glow_ir.insert_tensor @inout %y, @in %a {offsets = array<i64: 2, 0>} : memref<4x3xf32>, memref<2x3xf32>
  glow_ir.dealloc_activation %a : memref<2x3xf32>
}

// -----

// A write to other rows of the destination in between is fine (disjoint bytes).
// CHECK-LABEL:  glow_ir.func @other_rows_in_between
// CHECK:          %[[V:.*]] = glow_ir.tensor_view %y[2, 0]
// CHECK-NEXT:     glow_ir.relu @out %[[V]], @in %x
// CHECK-NEXT:     glow_ir.tanh @out %top, @in %x
// CHECK-NOT:      glow_ir.insert_tensor
glow_ir.func @other_rows_in_between declare {
  glow_ir.weight @x mutable input : memref<2x3xf32>
  glow_ir.weight @y mutable output : memref<4x3xf32>
} program(%x, %y) {
  %top = glow_ir.tensor_view %y[0, 0] : memref<4x3xf32> to memref<2x3xf32>
  %a = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.relu @out %a, @in %x : memref<2x3xf32>
  glow_ir.tanh @out %top, @in %x : memref<2x3xf32>
  glow_ir.insert_tensor @inout %y, @in %a {offsets = array<i64: 2, 0>} : memref<4x3xf32>, memref<2x3xf32>
  glow_ir.dealloc_activation %a : memref<2x3xf32>
}

// -----

// Must not fire: the inserted buffer is also read by another instruction, or it is not an
// activation made for the insert (an input).
// CHECK-LABEL:  glow_ir.func @source_not_private
// CHECK:          glow_ir.insert_tensor @inout %y, @in %a
// CHECK:          glow_ir.insert_tensor @inout %y, @in %x
glow_ir.func @source_not_private declare {
  glow_ir.weight @x mutable input : memref<2x3xf32>
  glow_ir.weight @y mutable output : memref<4x3xf32>
  glow_ir.weight @z mutable output : memref<2x3xf32>
} program(%x, %y, %z) {
  %a = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.relu @out %a, @in %x : memref<2x3xf32>
  glow_ir.insert_tensor @inout %y, @in %a {offsets = array<i64: 0, 0>} : memref<4x3xf32>, memref<2x3xf32>
  glow_ir.tanh @out %z, @in %a : memref<2x3xf32>
  glow_ir.insert_tensor @inout %y, @in %x {offsets = array<i64: 2, 0>} : memref<4x3xf32>, memref<2x3xf32>
  glow_ir.dealloc_activation %a : memref<2x3xf32>
}

// -----

// Must not fire: the producer reads the rows it would now overwrite (%y[0..2) is both an
// input of the add and the insert's box).
// CHECK-LABEL:  glow_ir.func @producer_reads_box
// CHECK:          glow_ir.element_add @out %a, @in %top, @in %x
// CHECK-NEXT:     glow_ir.insert_tensor @inout %y, @in %a
glow_ir.func @producer_reads_box declare {
  glow_ir.weight @x mutable input : memref<2x3xf32>
  glow_ir.weight @y mutable output : memref<4x3xf32>
} program(%x, %y) {
  %top = glow_ir.tensor_view %y[0, 0] : memref<4x3xf32> to memref<2x3xf32>
  %a = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.element_add @out %a, @in %top, @in %x : memref<2x3xf32>
  glow_ir.insert_tensor @inout %y, @in %a {offsets = array<i64: 0, 0>} : memref<4x3xf32>, memref<2x3xf32>
  glow_ir.dealloc_activation %a : memref<2x3xf32>
}

// -----

// A contiguous extract (a slice of rows) becomes a view: its readers read the source.
// CHECK-LABEL:  glow_ir.func @extract_rows
// CHECK:        program(%x, %y) {
// CHECK-NEXT:     %[[V:.*]] = glow_ir.tensor_view %x[1, 0] : memref<4x3xf32> to memref<2x3xf32>
// CHECK-NEXT:     glow_ir.relu @out %y, @in %[[V]] : memref<2x3xf32>
// CHECK-NEXT:   }
glow_ir.func @extract_rows declare {
  glow_ir.weight @x mutable input : memref<4x3xf32>
  glow_ir.weight @y mutable output : memref<2x3xf32>
} program(%x, %y) {
  %s = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.extract_tensor @out %s, @in %x {offsets = array<i64: 1, 0>} : memref<2x3xf32>, memref<4x3xf32>
  glow_ir.relu @out %y, @in %s : memref<2x3xf32>
  glow_ir.dealloc_activation %s : memref<2x3xf32>
}

// -----

// The extract's source is freed before the slice's last read: its dealloc moves after
// that read (the view keeps the source's bytes in use).
// CHECK-LABEL:  glow_ir.func @extract_source_lives_longer
// CHECK:          %a = glow_ir.alloc_activation : memref<4x3xf32>
// CHECK-NEXT:     glow_ir.tanh @out %a, @in %x
// CHECK-NEXT:     %[[V:.*]] = glow_ir.tensor_view %a[1, 0] : memref<4x3xf32> to memref<1x3xf32>
// CHECK-NEXT:     glow_ir.relu @out %y, @in %[[V]]
// CHECK-NEXT:     glow_ir.dealloc_activation %a
// CHECK-NEXT:   }
glow_ir.func @extract_source_lives_longer declare {
  glow_ir.weight @x mutable input : memref<4x3xf32>
  glow_ir.weight @y mutable output : memref<1x3xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4x3xf32>
  glow_ir.tanh @out %a, @in %x : memref<4x3xf32>
  %s = glow_ir.alloc_activation : memref<1x3xf32>
  glow_ir.extract_tensor @out %s, @in %a {offsets = array<i64: 1, 0>} : memref<1x3xf32>, memref<4x3xf32>
  glow_ir.dealloc_activation %a : memref<4x3xf32>
  glow_ir.relu @out %y, @in %s : memref<1x3xf32>
  glow_ir.dealloc_activation %s : memref<1x3xf32>
}

// -----

// Must not fire: the source's rows change after the extract while the slice is still
// read.
// CHECK-LABEL:  glow_ir.func @extract_source_overwritten
// CHECK:          glow_ir.extract_tensor @out %s, @in %a
// CHECK-NEXT:     glow_ir.element_exp @out %a, @in %x
// CHECK-NEXT:     glow_ir.relu @out %y, @in %s
glow_ir.func @extract_source_overwritten declare {
  glow_ir.weight @x mutable input : memref<4x3xf32>
  glow_ir.weight @y mutable output : memref<1x3xf32>
  glow_ir.weight @z mutable output : memref<4x3xf32>
} program(%x, %y, %z) {
  %a = glow_ir.alloc_activation : memref<4x3xf32>
  glow_ir.tanh @out %a, @in %x : memref<4x3xf32>
  %s = glow_ir.alloc_activation : memref<1x3xf32>
  glow_ir.extract_tensor @out %s, @in %a {offsets = array<i64: 1, 0>} : memref<1x3xf32>, memref<4x3xf32>
  glow_ir.element_exp @out %a, @in %x : memref<4x3xf32>
  glow_ir.relu @out %y, @in %s : memref<1x3xf32>
  glow_ir.copy @out %z, @in %a : memref<4x3xf32>
  glow_ir.dealloc_activation %s : memref<1x3xf32>
  glow_ir.dealloc_activation %a : memref<4x3xf32>
}

// -----

// Must not fire: a column slice is not contiguous, and a slice written again after the
// extract (in place, @out and @in on one buffer) is not a read-only copy of the source.
// CHECK-LABEL:  glow_ir.func @extract_stays
// CHECK:          glow_ir.extract_tensor @out %s, @in %x {offsets = array<i64: 0, 1>}
// CHECK:          glow_ir.extract_tensor @out %t, @in %x {offsets = array<i64: 1, 0>}
// CHECK-NEXT:     glow_ir.relu @out %t, @in %t
glow_ir.func @extract_stays declare {
  glow_ir.weight @x mutable input : memref<4x3xf32>
  glow_ir.weight @y mutable output : memref<4x2xf32>
  glow_ir.weight @z mutable output : memref<1x3xf32>
} program(%x, %y, %z) {
  %s = glow_ir.alloc_activation : memref<4x2xf32>
  glow_ir.extract_tensor @out %s, @in %x {offsets = array<i64: 0, 1>} : memref<4x2xf32>, memref<4x3xf32>
  glow_ir.relu @out %y, @in %s : memref<4x2xf32>
  %t = glow_ir.alloc_activation : memref<1x3xf32>
  glow_ir.extract_tensor @out %t, @in %x {offsets = array<i64: 1, 0>} : memref<1x3xf32>, memref<4x3xf32>
  glow_ir.relu @out %t, @in %t : memref<1x3xf32>
  glow_ir.copy @out %z, @in %t : memref<1x3xf32>
  glow_ir.dealloc_activation %t : memref<1x3xf32>
  glow_ir.dealloc_activation %s : memref<4x2xf32>
}

// -----

// Views of the extract's destination made before it is written: a dead one first (it
// goes), and a view of a view the reader reads through. The new view of %x takes %d's
// place before the first view that stays, which now views it.
// CHECK-LABEL: glow_ir.func @views_ahead_of_the_extract
// CHECK:         %d = glow_ir.tensor_view %x[1, 0] : memref<2x4xf32> to memref<1x4xf32>
// CHECK-NEXT:    %dv = glow_ir.tensor_view %d[0, 0] : memref<1x4xf32> to memref<4xf32>
// CHECK-NEXT:    %dvv = glow_ir.tensor_view %dv[2] : memref<4xf32> to memref<2xf32>
// CHECK-NEXT:    glow_ir.relu @out %y, @in %dvv : memref<2xf32>
// CHECK-NEXT:  }
glow_ir.func @views_ahead_of_the_extract declare {
  glow_ir.weight @x mutable input : memref<2x4xf32>
  glow_ir.weight @y mutable output : memref<2xf32>
} program(%x, %y) {
  %d = glow_ir.alloc_activation : memref<1x4xf32>
  %dead = glow_ir.tensor_view %d[0, 0] : memref<1x4xf32> to memref<2x2xf32>
  %dv = glow_ir.tensor_view %d[0, 0] : memref<1x4xf32> to memref<4xf32>
  %dvv = glow_ir.tensor_view %dv[2] : memref<4xf32> to memref<2xf32>
  glow_ir.extract_tensor @out %d, @in %x {offsets = array<i64: 1, 0>} : memref<1x4xf32>, memref<2x4xf32>
  glow_ir.relu @out %y, @in %dvv : memref<2xf32>
  glow_ir.dealloc_activation %d : memref<1x4xf32>
}

// -----

// The same for an insert: the producer of %s writes through a view made before it (with a
// dead view first); %c's alloc moves up before the first view that stays.
// CHECK-LABEL: glow_ir.func @views_ahead_of_the_insert
// CHECK:         %c = glow_ir.alloc_activation : memref<2x4xf32>
// CHECK-NEXT:    %s = glow_ir.tensor_view %c[1, 0] : memref<2x4xf32> to memref<1x4xf32>
// CHECK-NEXT:    %sv = glow_ir.tensor_view %s[0, 0] : memref<1x4xf32> to memref<4xf32>
// CHECK-NEXT:    glow_ir.tanh @out %sv, @in %x : memref<4xf32>
// CHECK-NEXT:    %c0 = glow_ir.tensor_view %c[0, 0]
// CHECK-NEXT:    glow_ir.splat @out %c0
// CHECK-NEXT:    glow_ir.copy @out %y, @in %c : memref<2x4xf32>
// CHECK-NEXT:    glow_ir.dealloc_activation %c : memref<2x4xf32>
// CHECK-NEXT:  }
glow_ir.func @views_ahead_of_the_insert declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<2x4xf32>
} program(%x, %y) {
  %s = glow_ir.alloc_activation : memref<1x4xf32>
  %dead = glow_ir.tensor_view %s[0, 0] : memref<1x4xf32> to memref<2x2xf32>
  %sv = glow_ir.tensor_view %s[0, 0] : memref<1x4xf32> to memref<4xf32>
  glow_ir.tanh @out %sv, @in %x : memref<4xf32>
  %c = glow_ir.alloc_activation : memref<2x4xf32>
  %c0 = glow_ir.tensor_view %c[0, 0] : memref<2x4xf32> to memref<4xf32>
  glow_ir.splat @out %c0 {value = 0.5 : f32} : memref<4xf32>
  glow_ir.insert_tensor @inout %c, @in %s {offsets = array<i64: 1, 0>} : memref<2x4xf32>, memref<1x4xf32>
  glow_ir.copy @out %y, @in %c : memref<2x4xf32>
  glow_ir.dealloc_activation %c : memref<2x4xf32>
  glow_ir.dealloc_activation %s : memref<1x4xf32>
}
