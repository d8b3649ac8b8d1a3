// An input with no op (empty, or only comments like this file) is an empty module, which
// glow-opt prints as mlir-opt does, exit status 0; with --no-implicit-module it is an
// error that says so.
// RUN: glow-opt %S/inputs/empty.mlir | FileCheck %s
// RUN: glow-opt - < %S/inputs/empty.mlir | FileCheck %s
// RUN: glow-opt %s --cse | FileCheck %s
// RUN: glow-opt %s --split-input-file | FileCheck %s
// RUN: not glow-opt %s --no-implicit-module 2>&1 | FileCheck %s --check-prefix=NO-IMPLICIT

// CHECK:      builtin.module {
// CHECK-NEXT: }

// NO-IMPLICIT-NOT: Traceback
// NO-IMPLICIT:     empty-input.mlir:{{[0-9]+}}:1: error: reached the end of the input before any op: with --no-implicit-module it must hold one top-level builtin.module
