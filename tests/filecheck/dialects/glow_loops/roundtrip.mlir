// glow_loops.prefetch (MLIR's memref.prefetch for the CPU loop IR) round-trips through
// glow-opt in custom and generic form, read and write; convert-memref-to-llvm lowers it
// to a void llvm.prefetch.p0 call at the element's address.
//
// RUN: glow-opt %s | FileCheck %s
// RUN: glow-opt %s --print-op-generic | glow-opt | FileCheck %s
// RUN: glow-opt %s -p convert-arith-to-llvm,convert-memref-to-llvm 2>/dev/null | FileCheck %s --check-prefix=LLVM

func.func @f(%a: memref<4x64xf32>, %i: index) {
  %c8 = arith.constant 8 : index
  glow_loops.prefetch %a[%i, %c8] {locality = 3 : i32} : memref<4x64xf32>
  glow_loops.prefetch %a[%i, %i] {locality = 1 : i32, write} : memref<4x64xf32>
  func.return
}

// CHECK:      glow_loops.prefetch %{{.*}}[%{{.*}}, %{{.*}}] {locality = 3 : i32} : memref<4x64xf32>
// CHECK-NEXT: glow_loops.prefetch %{{.*}}[%{{.*}}, %{{.*}}] {locality = 1 : i32, write} : memref<4x64xf32>

// LLVM:       %[[P:.*]] = llvm.getelementptr inbounds %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// LLVM:       llvm.call_intrinsic "llvm.prefetch.p0"(%[[P]], %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i32, i32, i32) -> ()
// LLVM:       llvm.call_intrinsic "llvm.prefetch.p0"({{.*}}) : (!llvm.ptr, i32, i32, i32) -> ()
// LLVM-NOT:   glow_loops.prefetch
