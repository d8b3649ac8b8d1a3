// RUN: glow-opt %s --split-input-file --plan-memory | FileCheck %s
// RUN: glow-opt %s --split-input-file --plan-memory=alignment=16 | FileCheck %s --check-prefix=A16
// RUN: glow-opt %s --split-input-file -p 'plan-memory{alignment=16}' | FileCheck %s --check-prefix=A16
// RUN: not glow-opt %s --split-input-file --plan-memory=alignment=0 2>&1 | FileCheck %s --check-prefix=BAD

// RUN: not glow-opt %s --split-input-file --plan-memory=alignment=3 2>&1 | FileCheck %s --check-prefix=POW2

// BAD: glow-opt: error: plan-memory: alignment must be positive, got 0
// POW2: glow-opt: error: plan-memory: alignment must be a power of two, got 3

// Disjoint lives: %b is allocated after %a is freed, so both sit at offset 0.
// CHECK-LABEL:  glow_ir.func @disjoint
// CHECK:          %a = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x4xf32>
// CHECK:          %b = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x4xf32>
// CHECK:        } attributes {activations_size = 64 : i64, alignment = 64 : i64}
// A16-LABEL:    glow_ir.func @disjoint
// A16:            %a = glow_ir.alloc_activation {offset = 0 : i64}
// A16:            %b = glow_ir.alloc_activation {offset = 0 : i64}
// A16:          } attributes {activations_size = 32 : i64, alignment = 16 : i64}
glow_ir.func @disjoint declare {
  glow_ir.weight @x mutable input : memref<2x4xf32>
  glow_ir.weight @y mutable output : memref<2x4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<2x4xf32>
  glow_ir.relu @out %a, @in %x : memref<2x4xf32>
  glow_ir.copy @out %y, @in %a : memref<2x4xf32>
  glow_ir.dealloc_activation %a : memref<2x4xf32>
  %b = glow_ir.alloc_activation : memref<2x4xf32>
  glow_ir.sigmoid @out %b, @in %y : memref<2x4xf32>
  glow_ir.element_add @out %y, @in %y, @in %b : memref<2x4xf32>
  glow_ir.dealloc_activation %b : memref<2x4xf32>
}

// -----

// Overlapping lives: a chain a -> b -> c where each buffer is freed after the next one is
// written; %a and %c share bytes (their lives are disjoint), %b does not. A 32-byte buffer
// takes a whole 64-byte slot with the default alignment, half of one with alignment 16.
// CHECK-LABEL:  glow_ir.func @chain
// CHECK:          %a = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x4xf32>
// CHECK:          %b = glow_ir.alloc_activation {offset = 64 : i64} : memref<2x4xf32>
// CHECK:          %c = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x4xf32>
// CHECK:        } attributes {activations_size = 128 : i64, alignment = 64 : i64}
// A16-LABEL:    glow_ir.func @chain
// A16:            %a = glow_ir.alloc_activation {offset = 0 : i64}
// A16:            %b = glow_ir.alloc_activation {offset = 32 : i64}
// A16:            %c = glow_ir.alloc_activation {offset = 0 : i64}
// A16:          } attributes {activations_size = 64 : i64, alignment = 16 : i64}
glow_ir.func @chain declare {
  glow_ir.weight @x mutable input : memref<2x4xf32>
  glow_ir.weight @y mutable output : memref<2x4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<2x4xf32>
  glow_ir.relu @out %a, @in %x : memref<2x4xf32>
  %b = glow_ir.alloc_activation : memref<2x4xf32>
  glow_ir.tanh @out %b, @in %a : memref<2x4xf32>
  glow_ir.dealloc_activation %a : memref<2x4xf32>
  %c = glow_ir.alloc_activation : memref<2x4xf32>
  glow_ir.sigmoid @out %c, @in %b : memref<2x4xf32>
  glow_ir.dealloc_activation %b : memref<2x4xf32>
  glow_ir.copy @out %y, @in %c : memref<2x4xf32>
  glow_ir.dealloc_activation %c : memref<2x4xf32>
}

// -----

// An alloc without a dealloc lives to the end of the program: %late cannot reuse the
// bytes of %forever. Sizes of 4 bytes (one f32) are rounded up to the alignment.
// CHECK-LABEL:  glow_ir.func @no_dealloc
// CHECK:          %forever = glow_ir.alloc_activation {offset = 0 : i64} : memref<f32>
// CHECK:          %late = glow_ir.alloc_activation {offset = 64 : i64} : memref<f32>
// CHECK:        } attributes {activations_size = 128 : i64, alignment = 64 : i64}
// A16-LABEL:    glow_ir.func @no_dealloc
// A16:          } attributes {activations_size = 32 : i64, alignment = 16 : i64}
glow_ir.func @no_dealloc declare {
  glow_ir.weight @x mutable input : memref<f32>
  glow_ir.weight @y mutable output : memref<f32>
} program(%x, %y) {
  %forever = glow_ir.alloc_activation : memref<f32>
  glow_ir.relu @out %forever, @in %x : memref<f32>
  %late = glow_ir.alloc_activation : memref<f32>
  glow_ir.relu @out %late, @in %forever : memref<f32>
  glow_ir.copy @out %y, @in %late : memref<f32>
}

// -----

// Views take no memory of their own; a buffer used through a view is live from its alloc
// to its dealloc all the same. Planning again replaces old offsets.
// CHECK-LABEL:  glow_ir.func @views
// CHECK:          %t = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x4xf32>
// CHECK:          %u = glow_ir.alloc_activation {offset = 64 : i64} : memref<8xf32>
// CHECK:        } attributes {activations_size = 128 : i64, alignment = 64 : i64}
glow_ir.func @views declare {
  glow_ir.weight @x mutable input : memref<2x4xf32>
  glow_ir.weight @y mutable output : memref<8xf32>
} program(%x, %y) {
  %t = glow_ir.alloc_activation {offset = 4096 : i64} : memref<2x4xf32>
  glow_ir.relu @out %t, @in %x : memref<2x4xf32>
  %v = glow_ir.tensor_view %t[0, 0] : memref<2x4xf32> to memref<8xf32>
  %u = glow_ir.alloc_activation {offset = 4096 : i64} : memref<8xf32>
  glow_ir.tanh @out %u, @in %v : memref<8xf32>
  glow_ir.dealloc_activation %t : memref<2x4xf32>
  glow_ir.copy @out %y, @in %u : memref<8xf32>
  glow_ir.dealloc_activation %u : memref<8xf32>
} attributes {activations_size = 8192 : i64, alignment = 4096 : i64}

// -----

// No activations: an empty arena.
// CHECK-LABEL:  glow_ir.func @no_activations
// CHECK-NEXT:     glow_ir.weight @x mutable input : memref<4xf32>
// CHECK-NEXT:     glow_ir.weight @y mutable output : memref<4xf32>
// CHECK-NEXT:   } program(%x, %y) {
// CHECK-NEXT:     glow_ir.relu @out %y, @in %x : memref<4xf32>
// CHECK-NEXT:   } attributes {activations_size = 0 : i64, alignment = 64 : i64}
glow_ir.func @no_activations declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  glow_ir.relu @out %y, @in %x : memref<4xf32>
}

// -----

// glow_ir.if: %a, read by the if, stays live over both branches, so no branch buffer
// shares its bytes; the two branches run one at a time, so %t and %e may share theirs;
// %d, allocated after the if and after %a's dealloc, reuses %a's.
// CHECK-LABEL:  glow_ir.func @branches
// CHECK:          %a = glow_ir.alloc_activation {offset = 0 : i64} : memref<16xf32>
// CHECK:            %t = glow_ir.alloc_activation {offset = 64 : i64} : memref<16xf32>
// CHECK:            %e = glow_ir.alloc_activation {offset = 64 : i64} : memref<16xf32>
// CHECK:          %d = glow_ir.alloc_activation {offset = 0 : i64} : memref<16xf32>
// CHECK:        } attributes {activations_size = 128 : i64, alignment = 64 : i64}
glow_ir.func @branches declare {
  glow_ir.weight @c mutable input : memref<i1>
  glow_ir.weight @x mutable input : memref<16xf32>
  glow_ir.weight @y mutable output : memref<16xf32>
} program(%c, %x, %y) {
  %a = glow_ir.alloc_activation : memref<16xf32>
  glow_ir.relu @out %a, @in %x : memref<16xf32>
  glow_ir.if @out %y, @in %c, @in %a : memref<16xf32>, memref<i1>, memref<16xf32> {
  ^bb0(%y1: memref<16xf32>, %c1: memref<i1>, %a1: memref<16xf32>):
    %t = glow_ir.alloc_activation : memref<16xf32>
    glow_ir.tanh @out %t, @in %a1 : memref<16xf32>
    glow_ir.element_add @out %y1, @in %t, @in %a1 : memref<16xf32>
    glow_ir.dealloc_activation %t : memref<16xf32>
  } else {
  ^bb0(%y2: memref<16xf32>, %c2: memref<i1>, %a2: memref<16xf32>):
    %e = glow_ir.alloc_activation : memref<16xf32>
    glow_ir.sigmoid @out %e, @in %a2 : memref<16xf32>
    glow_ir.element_mul @out %y2, @in %e, @in %a2 : memref<16xf32>
    glow_ir.dealloc_activation %e : memref<16xf32>
  }
  glow_ir.dealloc_activation %a : memref<16xf32>
  %d = glow_ir.alloc_activation : memref<16xf32>
  glow_ir.relu @out %d, @in %y : memref<16xf32>
  glow_ir.copy @out %y, @in %d : memref<16xf32>
  glow_ir.dealloc_activation %d : memref<16xf32>
}
