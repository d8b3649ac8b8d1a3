// RUN: glow-opt %s --split-input-file --make-weights-const | FileCheck %s

// An input nothing writes becomes constant (its role stays); one written in place (even
// through a view) stays mutable; a constant with a value stays constant; outputs are
// mutable, even one the program never writes (the caller reads it with the others).
// CHECK-LABEL:  glow_ir.func @main declare {
// CHECK-NEXT:     glow_ir.weight @x constant input : memref<4xf32>
// CHECK-NEXT:     glow_ir.weight @s mutable input : memref<4xf32>
// CHECK-NEXT:     glow_ir.weight @w constant : memref<2xf32> = dense_resource<w> : tensor<2xf32>
// CHECK-NEXT:     glow_ir.weight @y mutable output : memref<4xf32>
// CHECK-NEXT:     glow_ir.weight @z mutable output : memref<2xf32>
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @s mutable input : memref<4xf32>
  glow_ir.weight @w constant : memref<2xf32> = dense_resource<w> : tensor<2xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @z constant output : memref<2xf32>
} program(%x, %s, %w, %y, %z) {
  %hi = glow_ir.tensor_view %s[2] : memref<4xf32> to memref<2xf32>
  glow_ir.relu @out %hi, @in %w : memref<2xf32>
  glow_ir.element_add @out %y, @in %x, @in %s : memref<4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// A weight written only through @inout (an insert) is written: it stays mutable.
// CHECK-LABEL:  glow_ir.func @inout
// CHECK-NEXT:     glow_ir.weight @h constant input : memref<2xf32>
// CHECK-NEXT:     glow_ir.weight @y mutable output : memref<4xf32>
glow_ir.func @inout declare {
  glow_ir.weight @h mutable input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%h, %y) {
  glow_ir.insert_tensor @inout %y, @in %h {offsets = array<i64: 0>, count = 2 : i64} : memref<4xf32>, memref<2xf32>
}

// -----

// State (mutable with a value) stays mutable, written or not: the caller reads and sets
// it between runs.
// CHECK-LABEL:  glow_ir.func @state declare {
// CHECK-NEXT:     glow_ir.weight @m mutable : memref<2xf32> = dense_resource<m> : tensor<2xf32>
// CHECK-NEXT:     glow_ir.weight @k mutable : memref<2xf32> = dense_resource<k> : tensor<2xf32>
glow_ir.func @state declare {
  glow_ir.weight @m mutable : memref<2xf32> = dense_resource<m> : tensor<2xf32>
  glow_ir.weight @k mutable : memref<2xf32> = dense_resource<k> : tensor<2xf32>
  glow_ir.weight @y mutable output : memref<2xf32>
} program(%m, %k, %y) {
  glow_ir.element_add @out %y, @in %m, @in %k : memref<2xf32>
  glow_ir.element_sub @out %m, @in %m, @in %k : memref<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      m: "0x040000000000803F00000040",
      k: "0x040000000000803F00000040"
    }
  }
#-}
