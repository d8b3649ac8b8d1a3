// --split-input-file processes every chunk, as mlir-opt does: the output of good chunks is
// kept (before and after a failing one), each failure is reported on stderr at its line
// in the whole file, and the exit status is 1. (The checks spell the marker `// {{-----$}}`:
// as in mlir-opt, a literal marker splits the file wherever it appears, comments too.) A chunk whose parse failed does not leak
// its resource handles into the next chunk (which uses the same handle name).
//
// RUN: not glow-opt %s --split-input-file 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.err
// RUN: not glow-opt %s --split-input-file -o %t.out 2>/dev/null
// RUN: FileCheck %s < %t.out
// Without the flag the whole file is one module, which fails at the first error:
// RUN: not glow-opt %s 2>&1 | FileCheck %s --check-prefix=WHOLE

// CHECK:      func.func @first
// CHECK-NEXT:   glow.relu
// CHECK:      // {{-----$}}
// CHECK-NEXT: // {{-----$}}
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @third
// CHECK:      // {{-----$}}
// CHECK-NEXT: // {{-----$}}
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @fifth
// CHECK-NEXT:     %w = glow.constant dense_resource<w> : tensor<2xf32>
// CHECK:          w: "0x040000000000803f00000040"
// CHECK-NOT:  error

func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = glow.relu %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @second(%x: tensor<4xi32>) -> tensor<4xi32> {
  // ERR: split-input-file.mlir:[[# @LINE + 1]]:8: error: 'glow.sigmoid' op operand must have floating-point elements, got i32
  %0 = glow.sigmoid %x : tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @third(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// -----

func.func @fourth() -> tensor<2xf32> {
  %w = glow.constant dense_resource<w> : tensor<2xf32>
  // WHOLE: split-input-file.mlir:[[# @LINE + 2]]:8: error: unknown op 'glow.bogus'
  // ERR: split-input-file.mlir:[[# @LINE + 1]]:8: error: unknown op 'glow.bogus'
  %r = glow.bogus %w : tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

func.func @fifth() -> tensor<2xf32> {
  %w = glow.constant dense_resource<w> : tensor<2xf32>
  func.return %w : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F00000040"
    }
  }
#-}

// ERR-NOT: Traceback
