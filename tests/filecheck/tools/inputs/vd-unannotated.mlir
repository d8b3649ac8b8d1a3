// No expectation in the whole file: --verify-diagnostics behaves as xdsl-opt's, printing
// each chunk's diagnostic or output to stdout and exiting 0, for FileCheck to check.

// CHECK: vd-unannotated.mlir:[[# @LINE + 2]]:8: error: 'glow.sigmoid' op operand must have floating-point elements, got i32
func.func @bad(%x: tensor<4xi32>) {
  %0 = glow.sigmoid %x : tensor<4xi32>
  func.return
}

// -----

// CHECK: vd-unannotated.mlir:[[# @LINE + 3]]:8: error: unknown op 'glow.frob'
// CHECK-NEXT: glow.frob
func.func @parse(%x: tensor<4xf32>) {
  %0 = glow.frob %x : tensor<4xf32>
  func.return
}

// -----

// CHECK: func.func @good
func.func @good(%x: tensor<4xf32>) {
  func.return
}
