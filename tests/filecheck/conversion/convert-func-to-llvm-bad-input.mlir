// What convert-func-to-llvm refuses: an error at each function (or return) without an LLVM
// form, all of them at once (exit status 1, no traceback).
// RUN: glow-opt %s --split-input-file --convert-func-to-llvm --verify-diagnostics

// Found by fuzz/fuzz_mlir.py: a function whose arguments have no LLVM type, and one that
// returns two values (were: an unlocated xDSL verifier message, and an internal error).
// expected-error @+1 {{'func.func' op LLVM function argument #0 has incompatible type 'tensor<4xf32>'}}
func.func @tensor_arg(%x: tensor<4xf32>) {
  func.return
}

// -----

// expected-error @+1 {{'func.func' op functions with several results are not supported}}
func.func @two_results(%x: i32) -> (i32, i32) {
  // expected-error @+1 {{'func.return' op returns 2 values; an LLVM function returns at most one}}
  func.return %x, %x : i32, i32
}
