// What the conversions to loops and to the LLVM dialect say about input they cannot
// lower: exit status 1, one line naming the pass and the problem, no traceback.
//
// RUN: not glow-opt %s --split-input-file --convert-memref-to-llvm 2>&1 | FileCheck %s --check-prefix=MEMREF
// RUN: not glow-opt %s --split-input-file --convert-math-to-llvm 2>&1 | FileCheck %s --check-prefix=MATH
// RUN: not glow-opt %s --split-input-file --convert-glow-ir-to-loops 2>&1 | FileCheck %s --check-prefix=LOOPS
// RUN: not glow-opt %s --split-input-file --convert-func-to-llvm 2>&1 | FileCheck %s --check-prefix=FUNC
// RUN: not glow-opt %s --split-input-file --convert-arith-to-llvm 2>&1 | FileCheck %s --check-prefix=ARITH

// MEMREF: convert-memref-to-llvm: memref.view at {{.*}}bad-input.mlir:{{[0-9]+}}:8: only static identity-layout memrefs are supported, got memref<?xf32>
func.func @dynamic_view(%b: memref<64xi8>, %n: index) {
  %c0 = arith.constant 0 : index
  %v = memref.view %b[%c0][%n] : memref<64xi8> to memref<?xf32>
  func.return
}

// -----

// MEMREF: convert-memref-to-llvm: memref.alloca at {{.*}}bad-input.mlir:{{[0-9]+}}:8: only static identity-layout memrefs are supported, got memref<?xf32>
func.func @dynamic_alloca(%n: index) {
  %a = memref.alloca(%n) : memref<?xf32>
  func.return
}

// -----

// MEMREF: convert-memref-to-llvm: no lowering for memref.cast (first at {{.*}}bad-input.mlir:{{[0-9]+}}:8)
func.func @cast(%a: memref<4xf32>) {
  %c = "memref.cast"(%a) : (memref<4xf32>) -> memref<4xf32>
  func.return
}

// -----

// MATH: convert-math-to-llvm: math.ctlz on i32 at {{.*}}bad-input.mlir:{{[0-9]+}}:8
func.func @ctlz(%x: i32) -> i32 {
  %r = math.ctlz %x : i32
  func.return %r : i32
}

// -----

// LOOPS: convert-glow-ir-to-loops: @main at {{.*}}bad-input.mlir:{{[0-9]+}}:{{[0-9]+}} has no memory plan; run plan-memory first
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  glow_ir.relu @out %y, @in %x : memref<4xf32>
}

// -----

// Found by fuzz/fuzz_mlir.py: a planned function with an alloc_activation that has no
// offset (was: internal error, AttributeError).
// LOOPS: convert-glow-ir-to-loops: alloc_activation at {{.*}}bad-input.mlir:{{[0-9]+}}:{{[0-9]+}} has no offset in the planned @unplaced; run plan-memory again
glow_ir.func @unplaced declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %t = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %t, @in %x : memref<4xf32>
  glow_ir.copy @out %y, @in %t : memref<4xf32>
  glow_ir.dealloc_activation %t : memref<4xf32>
} attributes {activations_size = 64 : i64, alignment = 64 : i64}

// -----

// Found by fuzz/fuzz_mlir.py: a function whose arguments have no LLVM type, and one that
// returns two values (were: an unlocated xDSL verifier message, and an internal error).
// FUNC: convert-func-to-llvm: @tensor_arg at {{.*}}bad-input.mlir:{{[0-9]+}}:1: LLVM function argument #0 has incompatible type 'tensor<4xf32>'
func.func @tensor_arg(%x: tensor<4xf32>) {
  func.return
}

// -----

// FUNC: convert-func-to-llvm: @two_results at {{.*}}bad-input.mlir:{{[0-9]+}}:1: functions with several results are not supported
func.func @two_results(%x: i32) -> (i32, i32) {
  func.return %x, %x : i32, i32
}

// -----

// Found by fuzz/fuzz_mlir.py: an arith op on tensors has no LLVM form (was: an
// llvm.mlir.constant holding a dense_resource, which failed verification after the pass).
// ARITH: convert-arith-to-llvm: arith.constant at {{.*}}bad-input.mlir:{{[0-9]+}}:{{[0-9]+}} on tensor<2xf32>: only scalars and vectors lower to the LLVM dialect
func.func @tensor_constant() -> tensor<2xf32> {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
