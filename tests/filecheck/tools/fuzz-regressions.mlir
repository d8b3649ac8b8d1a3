// Parse and verifier errors found by fuzz/fuzz_mlir.py that used to escape as internal
// errors, hang or say no place: each is now a located error (exit 1, no traceback).
//
// RUN: glow-opt %s --split-input-file --verify-diagnostics

// A value the element type of a dense literal cannot hold (was: internal error, ValueError).
func.func @dense_out_of_range() {
  // expected-error @+1 {{invalid dense literal: Integer value 300 is out of range for type i8}}
  %c = glow.constant dense<[1, 300]> : tensor<2xi8>
  func.return
}

// -----

// A splat of 2^32 elements: xDSL expands it into a Python list (was: MemoryError, or
// the machine's memory without a limit).
func.func @dense_huge_splat() {
  // expected-error @+1 {{dense literal of 4294967296 elements is too large}}
  %c = glow.constant dense<1.0> : tensor<65536x65536xf32>
  func.return
}

// -----

// The same for dense arrays (an out-of-range value was already located; an element type
// xDSL cannot pack was an internal error, NotImplementedError).
func.func @array_out_of_range(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{Integer value 300 is out of range for type i8}}
  %0 = glow.max_pool %x {kernels = array<i8: 300, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return
}

// -----

func.func @array_odd_width(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{invalid array attribute: Format not implemented for i643}}
  %0 = glow.max_pool %x {kernels = array<i643>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return
}

// -----

// An unterminated string literal: xDSL's lexer backtracked exponentially on it (was: a hang).
glow_ir.func @unterminated declare {
  // expected-error @+1 {{End of file reached before closing string literal.}}
  glow_ir.weight @w"constant input : memref<4xf32> = dense_resource<w> : tensor<4xf32> and more
} program(%w) {
}

// -----

// An integer type wider than MLIR's limit: the range check of its literal computed
// 1 << width (was: internal error, MemoryError).
func.func @wide_integer(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{integer bitwidth is limited to 16777215 bits}}
  %0 = glow.tile %x {count = 2 : i64, axis = 1 : i429496729664} : tensor<2x3xf32> -> tensor<2x6xf32>
  func.return
}

// -----

// A symbol defined twice: xDSL reports it at the (implicit, unlocated) module; now at the
// second definition, as MLIR (was: an error without a location).
func.func private @ext(f32) -> f32
// expected-error @+1 {{'func.func' op redefinition of symbol named 'ext'}}
func.func private @ext(f32) -> f32

// -----

// Offsets and sizes of the custom forms are i64 arrays: a wider integer was a ValueError
// of DenseArrayBase (internal error); now a parse error at it.
glow_ir.func @wide_offset declare {
  glow_ir.weight @a mutable input : memref<2x8xf32>
} program(%a) {
  // expected-error @+1 {{integer 18446744073709551616 does not fit in 64 bits}}
  %row = glow_ir.tensor_view %a[18446744073709551616, 0] : memref<2x8xf32> to memref<8xf32>
}

// -----

func.func @wide_dma(%x: memref<4xf32>, %t: memref<4xf32, 1 : i64>) {
  // expected-error @+1 {{integer 18446744073709551616 does not fit in 64 bits}}
  %k = glow_accel.dma_start %x[0] -> %t[0] sizes [18446744073709551616] : memref<4xf32> -> memref<4xf32, 1 : i64>
  func.return
}

// -----

// A declare region of two blocks (was: internal error, Region.block of a multi-block region).
// expected-error @+1 {{the declare region of glow_ir.func @two_blocks is one block, got 2}}
glow_ir.func @two_blocks declare {
  glow_ir.weight @x mutable input : memref<4xf32>
^bb1:
} program(%x) {
}

// -----

// A weight in generic form without its type property (was: internal error, KeyError).
glow_ir.func @untyped declare {
  "glow_ir.weight"() <{sym_name = "x", mutability = "mutable", role = "input"}> : () -> ()
// expected-error @+1 {{glow_ir.weight "x" has no 'type' property, so its program argument has no type}}
} program(%x) {
}

// -----

// An infinite resize scale (was: internal error, OverflowError in the shape check).
func.func @resize_inf(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{'glow.resize_nearest' op scale must be positive and finite, got [1.0, 1.0, inf, 2.0]}}
  %0 = glow.resize_nearest %x {scale = array<f32: 1.0, 1.0, 1.0e400, 2.0>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  func.return
}

// -----

// A block defined twice after a branch to it (was: internal error, KeyError in xDSL).
func.func @loop(%n: index) {
  cf.br ^head
^head:
  cf.br ^head
// expected-error @+1 {{re-declaration of block 'head'}}
^head:
  func.return
}

// -----

// A block name xDSL refuses as a name hint (MLIR allows ^0; was: internal error, ValueError).
func.func @numbered() {
  // expected-error @+1 {{block name '^0' is not supported}}
  cf.br ^0
^0:
  func.return
}
