// RUN: glow-opt %s --convert-loops-to-llvm | filecheck %s

// What convert-glow-ir-to-loops makes (an entry point on three byte areas, a reduction
// with an iter_arg, a libm function) all the way to the LLVM dialect, which
// xdsl.backend.llvm.convert_module turns into LLVM IR: bare noalias pointers, i64 for
// index, views and element addresses as inbounds GEPs; no unrealized casts left.
// CHECK-LABEL: llvm.func @net(%constantWeight: !llvm.ptr {llvm.noalias}, %mutableWeight: !llvm.ptr {llvm.noalias}, %activations: !llvm.ptr {llvm.noalias}) -> i32 {
// CHECK-NEXT:    %c0 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %c1 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %c16 = llvm.mlir.constant(16) : i64
// CHECK-NEXT:    %c64 = llvm.mlir.constant(64) : i64
// CHECK-NEXT:    %in = llvm.getelementptr inbounds %mutableWeight[%c0] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %out = llvm.getelementptr inbounds %mutableWeight[%c64] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %zero = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT:    llvm.br ^bb1(%c0, %zero : i64, f32)
// CHECK-NEXT:  ^bb1(%i: i64, %acc: f32):
// CHECK-NEXT:    %0 = llvm.icmp "slt" %i, %c16 : i64
// CHECK-NEXT:    llvm.cond_br %0, ^bb2, ^bb3
// CHECK-NEXT:  ^bb2:
// CHECK-NEXT:    %1 = llvm.getelementptr inbounds %in[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %x = llvm.load %1 : !llvm.ptr -> f32
// CHECK-NEXT:    %t = llvm.call @tanhf(%x) : (f32) -> f32
// CHECK-NEXT:    %a = llvm.fadd %acc, %t : f32
// CHECK-NEXT:    %2 = llvm.add %i, %c1 : i64
// CHECK-NEXT:    llvm.br ^bb1(%2, %a : i64, f32)
// CHECK-NEXT:  ^bb3:
// CHECK-NEXT:    llvm.store %acc, %out : f32, !llvm.ptr
// CHECK-NEXT:    %r = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    llvm.return %r : i32
// CHECK-NEXT:  }
// CHECK-NEXT:  llvm.func @tanhf(f32) -> f32
// CHECK-NOT:   unrealized_conversion_cast
func.func @net(%constantWeight: memref<1xi8> {llvm.noalias}, %mutableWeight: memref<68xi8> {llvm.noalias}, %activations: memref<1xi8> {llvm.noalias}) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %in = memref.view %mutableWeight[%c0][] : memref<68xi8> to memref<16xf32>
  %out = memref.view %mutableWeight[%c64][] : memref<68xi8> to memref<f32>
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %in[%i] : memref<16xf32>
    %t = math.tanh %x : f32
    %a = arith.addf %acc, %t : f32
    scf.yield %a : f32
  }
  memref.store %sum, %out[] : memref<f32>
  %r = arith.constant 0 : i32
  func.return %r : i32
}
