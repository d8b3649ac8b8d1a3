// RUN: glow-opt %s --split-input-file --convert-func-to-llvm | filecheck %s

// The entry point: memref arguments become bare pointers and keep llvm.noalias; the
// body's memref users see casts back (removed once memref-to-llvm has run); other
// attributes stay; func.return becomes llvm.return. arith is not this pass's business.
// CHECK-LABEL: llvm.func @entry(%c: !llvm.ptr {llvm.noalias}, %m: !llvm.ptr {llvm.noalias}, %a: !llvm.ptr {llvm.noalias}) -> i32 attributes {glow.mutable_size = 32 : i64} {
// CHECK-NEXT:    %c_1 = builtin.unrealized_conversion_cast %c : !llvm.ptr to memref<16xi8>
// CHECK-NEXT:    %m_1 = builtin.unrealized_conversion_cast %m : !llvm.ptr to memref<32xi8>
// CHECK-NEXT:    %a_1 = builtin.unrealized_conversion_cast %a : !llvm.ptr to memref<1xi8>
// CHECK-NEXT:    %z = arith.constant 0 : index
// CHECK-NEXT:    %v = memref.view %m_1[%z][] : memref<32xi8> to memref<8xf32>
// CHECK-NEXT:    %r = arith.constant 0 : i32
// CHECK-NEXT:    llvm.return %r : i32
// CHECK-NOT:   func.
func.func @entry(%c: memref<16xi8> {llvm.noalias}, %m: memref<32xi8> {llvm.noalias}, %a: memref<1xi8> {llvm.noalias}) -> i32 attributes {glow.mutable_size = 32 : i64} {
  %z = arith.constant 0 : index
  %v = memref.view %m[%z][] : memref<32xi8> to memref<8xf32>
  %r = arith.constant 0 : i32
  func.return %r : i32
}

// -----

// Declarations and calls (the libm functions math-to-llvm calls look the same).
// CHECK-LABEL: llvm.func @ext(f32) -> f32
// CHECK-NEXT:  llvm.func @caller(%x: f32) {
// CHECK-NEXT:    %y = llvm.call @ext(%x) : (f32) -> f32
// CHECK-NEXT:    llvm.return
func.func private @ext(f32) -> f32

func.func @caller(%x: f32) {
  %y = func.call @ext(%x) : (f32) -> f32
  func.return
}

// -----

// No func ops: nothing to do.
// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    llvm.func @already(%p: !llvm.ptr) {
// CHECK-NEXT:      llvm.return
llvm.func @already(%p: !llvm.ptr) {
  llvm.return
}
