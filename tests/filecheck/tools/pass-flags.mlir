// glow-opt takes passes as MLIR-style flags, run in the order given, and as an xDSL
// pipeline; both spellings (and a mix) give the same result. Pass options as
// `--pass=opt=val` (several: `--pass="a=1 b=2"`) equal `-p 'pass{opt=val}'`. `-o` writes
// the output to a file, `-` reads stdin.

// RUN: glow-opt %s --cse --dce | FileCheck %s
// RUN: glow-opt %s -p cse,dce | FileCheck %s
// RUN: glow-opt %s -cse -dce | FileCheck %s
// RUN: glow-opt %s -p cse --dce | FileCheck %s
// RUN: glow-opt %s --cse --dce > %t.flags
// RUN: glow-opt %s -p cse,dce > %t.pipeline
// RUN: diff %t.flags %t.pipeline

// mlir-opt's spelling: `--pass-pipeline=` is `-p`, and an outer `builtin.module(...)`
// anchor is the module the passes run on anyway; any other anchor is refused.
// RUN: glow-opt %s --pass-pipeline='builtin.module(cse,dce)' > %t.mlir-opt
// RUN: diff %t.flags %t.mlir-opt
// RUN: glow-opt %s --pass-pipeline 'cse,dce' | diff %t.flags -
// RUN: glow-opt %s -p 'builtin.module(cse,dce)' | diff %t.flags -
// RUN: not glow-opt %s --pass-pipeline='builtin.module(func.func(cse))' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// ANCHOR: glow-opt: error: invalid pass pipeline 'builtin.module(func.func(cse))': the anchor 'func.func(...)' is not supported: only an outer 'builtin.module(...)'
// ANCHOR-NOT: Traceback

// The order is the one on the command line (the IR is printed after the first pass):
// RUN: glow-opt %s --cse --dce --print-between-passes 2> %t.cse-dce > /dev/null
// RUN: FileCheck %s --check-prefix=CSE-FIRST < %t.cse-dce
// RUN: glow-opt %s --dce --cse --print-between-passes 2> %t.dce-cse > /dev/null
// RUN: FileCheck %s --check-prefix=DCE-FIRST < %t.dce-cse
// CSE-FIRST:     IR after cse
// CSE-FIRST-NOT: IR after dce
// DCE-FIRST:     IR after dce
// DCE-FIRST-NOT: IR after cse

// Options: the flag form and the pipeline form are the same pass; the option reaches it
// (max-elements=2 keeps the 3-element constant chain, the default folds it).
// RUN: glow-opt %s --constant-fold=max-elements=2 > %t.opt-flag
// RUN: glow-opt %s -p 'constant-fold{max-elements=2}' > %t.opt-spec
// RUN: diff %t.opt-flag %t.opt-spec
// RUN: FileCheck %s --check-prefix=LIMIT < %t.opt-flag
// RUN: glow-opt %s --constant-fold | FileCheck %s --check-prefix=FOLD
// RUN: not glow-opt %s "--constant-fold=max-elements=2 no-such-option=1" 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: glow-opt: error: invalid pass pipeline 'constant-fold{max-elements=2 no-such-option=1}': constant-fold: unknown option no-such-option (its options: max-elements, max-growth)

// Output file, stdin:
// RUN: glow-opt %s --cse --dce -o %t.out.mlir
// RUN: FileCheck %s < %t.out.mlir
// RUN: glow-opt - --cse --dce < %s | FileCheck %s
// RUN: glow-opt --cse --dce < %s | FileCheck %s
// RUN: glow-opt %s --cse --dce -o - | FileCheck %s
// RUN: not glow-opt %s -o %t.no-such-dir/out.mlir 2>&1 | FileCheck %s --check-prefix=NO-DIR
// NO-DIR: glow-opt: error: cannot write '{{.*}}no-such-dir/out.mlir': no such folder

// CHECK-LABEL: func.func @cse_dce
// CHECK-NEXT:    %a = glow.relu %x : tensor<4xf32>
// CHECK-NEXT:    %s = glow.add %a, %a : tensor<4xf32>
// CHECK-NEXT:    func.return %s : tensor<4xf32>
func.func @cse_dce(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = glow.relu %x : tensor<4xf32>
  %b = glow.relu %x : tensor<4xf32>
  %dead = glow.exp %x : tensor<4xf32>
  %s = glow.add %a, %b : tensor<4xf32>
  func.return %s : tensor<4xf32>
}

// LIMIT-LABEL: func.func @fold
// LIMIT:         glow.relu
// LIMIT:         glow.add
// FOLD-LABEL:  func.func @fold
// FOLD-NEXT:     %{{.*}} = glow.constant dense<[2.000000e+00, 1.000000e+00, 4.000000e+00]> : tensor<3xf32>
// FOLD-NEXT:     func.return
func.func @fold() -> tensor<3xf32> {
  %a = glow.constant dense<[1.0, -2.0, 3.0]> : tensor<3xf32>
  %b = glow.constant dense<1.0> : tensor<3xf32>
  %r = glow.relu %a : tensor<3xf32>
  %s = glow.add %r, %b : tensor<3xf32>
  func.return %s : tensor<3xf32>
}
