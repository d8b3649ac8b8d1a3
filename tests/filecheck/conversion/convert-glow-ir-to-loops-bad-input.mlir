// What convert-glow-ir-to-loops refuses: an error at the function or at each instruction
// concerned (exit status 1, no traceback).
// RUN: glow-opt %s --split-input-file --convert-glow-ir-to-loops --verify-diagnostics

// expected-error @+1 {{'glow_ir.func' op has no memory plan; run plan-memory first}}
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  glow_ir.relu @out %y, @in %x : memref<4xf32>
}

// -----

// Found by fuzz/fuzz_mlir.py: a planned function with an alloc_activation that has no
// offset (was: internal error, AttributeError). Every such alloc is reported.
glow_ir.func @unplaced declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  // expected-error @+1 {{'glow_ir.alloc_activation' op has no offset in the planned @unplaced; run plan-memory again}}
  %t = glow_ir.alloc_activation : memref<4xf32>
  // expected-error @+1 {{'glow_ir.alloc_activation' op has no offset in the planned @unplaced}}
  %u = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %t, @in %x : memref<4xf32>
  glow_ir.relu @out %u, @in %t : memref<4xf32>
  glow_ir.copy @out %y, @in %u : memref<4xf32>
  glow_ir.dealloc_activation %u : memref<4xf32>
  glow_ir.dealloc_activation %t : memref<4xf32>
} attributes {activations_size = 64 : i64, alignment = 64 : i64}
