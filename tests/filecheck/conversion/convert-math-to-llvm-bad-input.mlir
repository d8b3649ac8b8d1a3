// What convert-math-to-llvm refuses: an error at each op on a type without an LLVM
// lowering, all of them at once (exit status 1, no traceback).
// RUN: glow-opt %s --split-input-file --convert-math-to-llvm --verify-diagnostics

func.func @ctlz(%x: i32) -> i32 {
  // expected-error @+1 {{'math.ctlz' op on i32 has no lowering to the LLVM dialect}}
  %r = math.ctlz %x : i32
  // expected-error @+1 {{'math.cttz' op on i32 has no lowering to the LLVM dialect}}
  %s = math.cttz %r : i32
  func.return %s : i32
}
