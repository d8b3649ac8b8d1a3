// verify-instr (Glow's IRVerify): program-wide rules of the instruction IR, each broken
// once, and a program that keeps them all (first chunk: it must pass unchanged).
//
// RUN: glow-opt %s --split-input-file --verify-instr --verify-diagnostics
// RUN: not glow-opt %s --split-input-file --verify-instr 2>&1 | FileCheck %s

// CHECK-LABEL: glow_ir.func @ok
// CHECK: glow_ir.element_add @out %a, @in %a, @in %x
// CHECK: glow_ir.dealloc_activation %a
glow_ir.func @ok declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  glow_ir.element_add @out %a, @in %a, @in %x : memref<4xf32>
  %v = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<2x2xf32>
  %w = glow_ir.tensor_view %y[0] : memref<4xf32> to memref<2x2xf32>
  glow_ir.transpose @out %w, @in %v {shuffle = array<i64: 1, 0>} : memref<2x2xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

glow_ir.func @use_after_dealloc declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
  // expected-error @+1 {{'glow_ir.copy' op uses %a after its dealloc_activation}}
  glow_ir.copy @out %y, @in %a : memref<4xf32>
}

// -----

glow_ir.func @view_after_dealloc declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
  // expected-error @+1 {{'glow_ir.tensor_view' op uses %a after its dealloc_activation}}
  %v = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<2x2xf32>
}

// -----

// A use before the alloc is a use before the definition: the verifier's dominance check
// (ir/text.py) reports it before verify-instr runs (which still checks it in IR built in
// memory without verification).
glow_ir.func @use_before_alloc declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  // expected-error @+1 {{'glow_ir.relu' op operand #0 does not dominate this use}}
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

glow_ir.func @freed_twice declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
  // expected-error @+1 {{'glow_ir.dealloc_activation' op deallocates %a a second time}}
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

glow_ir.func @never_freed declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  // expected-error @+1 {{'glow_ir.alloc_activation' op %a is never deallocated}}
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
}

// -----

// A transpose cannot run in place: its destination overlaps its source.
glow_ir.func @not_inplace declare {
  glow_ir.weight @x mutable input : memref<2x2xf32>
} program(%x) {
  %a = glow_ir.alloc_activation : memref<2x2xf32>
  glow_ir.copy @out %a, @in %x : memref<2x2xf32>
  // expected-error @+1 {{'glow_ir.transpose' op operand #0 (@out) overlaps operand #1 (@in) in the same buffer; only in-place operand pairs may share memory}}
  glow_ir.transpose @out %a, @in %a {shuffle = array<i64: 1, 0>} : memref<2x2xf32>
  glow_ir.dealloc_activation %a : memref<2x2xf32>
}

// -----

// In place, but shifted by one element: element i would read what element i-1 wrote.
glow_ir.func @shifted_inplace declare {
  glow_ir.weight @x mutable input : memref<8xf32>
} program(%x) {
  %a = glow_ir.alloc_activation : memref<8xf32>
  glow_ir.copy @out %a, @in %x : memref<8xf32>
  %lo = glow_ir.tensor_view %a[0] : memref<8xf32> to memref<4xf32>
  %hi = glow_ir.tensor_view %a[1] : memref<8xf32> to memref<4xf32>
  // expected-error @+1 {{'glow_ir.relu' op operand #0 (@out) overlaps operand #1 (@in) in the same buffer}}
  glow_ir.relu @out %hi, @in %lo : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<8xf32>
}

// -----

// Two destinations of one instruction never share bytes (the interpreter's rule too).
glow_ir.func @two_dests declare {
  glow_ir.weight @x mutable input : memref<8xi64>
} program(%x) {
  %a = glow_ir.alloc_activation : memref<2xi64>
  // expected-error @+1 {{'glow_ir.top_k' op operand #0 (@out) overlaps operand #1 (@out) in the same buffer; only in-place operand pairs may share memory}}
  glow_ir.top_k @out %a, @out %a, @in %x {k = 2 : i64} : memref<2xi64>, memref<2xi64>, memref<8xi64>
  glow_ir.dealloc_activation %a : memref<2xi64>
}
