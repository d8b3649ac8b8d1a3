// What convert-memref-to-llvm refuses: an error at each op it cannot lower, with the
// reason (exit status 1, no traceback).
// RUN: glow-opt %s --split-input-file --convert-memref-to-llvm --verify-diagnostics

func.func @dynamic_view(%b: memref<64xi8>, %n: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.view' op only static identity-layout memrefs are supported, got memref<?xf32>}}
  %v = memref.view %b[%c0][%n] : memref<64xi8> to memref<?xf32>
  func.return
}

// -----

func.func @dynamic_alloca(%n: index) {
  // expected-error @+1 {{'memref.alloca' op only static identity-layout memrefs are supported, got memref<?xf32>}}
  %a = memref.alloca(%n) : memref<?xf32>
  func.return
}

// -----

// Every op without a lowering is reported, each at its line.
func.func @cast(%a: memref<4xf32>) {
  // expected-error @+1 {{'memref.cast' op has no lowering to the LLVM dialect}}
  %c = "memref.cast"(%a) : (memref<4xf32>) -> memref<4xf32>
  // expected-error @+1 {{'memref.cast' op has no lowering to the LLVM dialect}}
  %d = "memref.cast"(%c) : (memref<4xf32>) -> memref<4xf32>
  func.return
}
