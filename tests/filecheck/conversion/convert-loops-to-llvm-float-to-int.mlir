// RUN: glow-opt %s --convert-loops-to-llvm | filecheck %s

// Float to integer conversions keep arith's saturating meaning (NaN -> 0, clipped to the
// integer's range) without LLVM's per-element `fptosi.sat`, which LLVM does not
// vectorize on x86 (conversion/float_to_int.py): a NaN select, a clip, a trunc and
// `llvm.lrint`.
func.func @to_i8(%x: f32) -> i8 {
  %y = arith.fptosi %x : f32 to i8
  func.return %y : i8
}
// CHECK-LABEL: llvm.func @to_i8(%x: f32) -> i8 {
// CHECK-NEXT:    %0 = llvm.fcmp "uno" %x, %x : f32
// CHECK-NEXT:    %1 = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT:    %2 = llvm.select %0, %1, %x : i1, f32
// CHECK-NEXT:    %3 = llvm.mlir.constant(-1.280000e+02 : f32) : f32
// CHECK-NEXT:    %4 = llvm.intr.maxnum(%2, %3) : (f32, f32) -> f32
// CHECK-NEXT:    %5 = llvm.mlir.constant(1.270000e+02 : f32) : f32
// CHECK-NEXT:    %6 = llvm.intr.minnum(%4, %5) : (f32, f32) -> f32
// CHECK-NEXT:    %7 = llvm.call_intrinsic "llvm.trunc.f32"(%6) : (f32) -> f32
// CHECK-NEXT:    %8 = llvm.call_intrinsic "llvm.lrint.i32.f32"(%7) : (f32) -> i32
// CHECK-NEXT:    %y = llvm.trunc %8 : i32 to i8
// CHECK-NEXT:    llvm.return %y : i8

// i64's top bound is not a double: values above the largest double below it select
// INT64_MAX.
func.func @to_i64(%x: f64) -> i64 {
  %y = arith.fptosi %x : f64 to i64
  func.return %y : i64
}
// CHECK-LABEL: llvm.func @to_i64(
// CHECK-NOT:     fptosi.sat
// CHECK:         llvm.call_intrinsic "llvm.lrint.i64.f64"
// CHECK:         %{{.*}} = llvm.fcmp "ogt"
// CHECK:         llvm.mlir.constant(9223372036854775807) : i64
// CHECK:         llvm.select

// Must not fire: a 64-bit unsigned result keeps the saturating intrinsic (lrint gives
// signed results).
func.func @to_u64(%x: f64) -> i64 {
  %y = arith.fptoui %x : f64 to i64
  func.return %y : i64
}
// CHECK-LABEL: llvm.func @to_u64(
// CHECK-NEXT:    %y{{.*}} = llvm.call_intrinsic "llvm.fptoui.sat.i64.f64"(%x{{.*}}) : (f64) -> i64
