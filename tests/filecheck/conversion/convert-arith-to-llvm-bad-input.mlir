// What convert-arith-to-llvm refuses: an error at each op without an LLVM form, all of
// them at once, before anything is rewritten (exit status 1, no traceback).
// RUN: glow-opt %s --split-input-file --convert-arith-to-llvm --verify-diagnostics

// Found by fuzz/fuzz_mlir.py: an arith op on tensors has no LLVM form (was: an
// llvm.mlir.constant holding a dense_resource, which failed verification after the pass).
func.func @tensor_constant() -> tensor<2xf32> {
  // expected-error @+1 {{'arith.constant' op on tensor<2xf32>: only scalars and vectors lower to the LLVM dialect}}
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

func.func @floordiv(%a: i32, %b: i32) -> i32 {
  // expected-error @+1 {{'arith.floordivsi' op has no lowering to the LLVM dialect}}
  %c = arith.floordivsi %a, %b : i32
  // expected-error @+1 {{'arith.ceildivsi' op has no lowering to the LLVM dialect}}
  %d = arith.ceildivsi %c, %b : i32
  func.return %d : i32
}
