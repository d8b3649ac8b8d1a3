// RUN: glow-opt %s --split-input-file --convert-memref-to-llvm | filecheck %s
// RUN: glow-opt %s --split-input-file --convert-func-to-llvm --convert-arith-to-llvm --convert-memref-to-llvm --reconcile-unrealized-casts | filecheck %s --check-prefix=ALL

// A view is an inbounds i8 GEP at its byte offset; a load or store linearizes its indices
// with the constant row-major strides (nsw) into one inbounds GEP on the element type
// (constant indices fold into one constant offset; the stride constants are shared by the
// function, at the start of its entry block). A 0-d memref is its pointer. No
// ptrtoint/inttoptr (they stop LLVM's vectorizer).
// CHECK-LABEL: func.func @views(
// CHECK-NEXT:    %[[C12:.*]] = llvm.mlir.constant(12) : i64
// CHECK-NEXT:    %[[C4:.*]] = llvm.mlir.constant(4) : i64
// CHECK:         %[[AREA:.*]] = builtin.unrealized_conversion_cast %area : memref<256xi8> to !llvm.ptr
// CHECK:         %a = llvm.getelementptr inbounds %[[AREA]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %a_1 = builtin.unrealized_conversion_cast %a : !llvm.ptr to memref<2x3x4xf32>
// CHECK:         llvm.mul %{{[0-9]+}}, %[[C12]] overflow<nsw> : i64
// CHECK-NEXT:    llvm.mul %{{[0-9]+}}, %[[C4]] overflow<nsw> : i64
// CHECK-NEXT:    llvm.add %{{[0-9]+}}, %{{[0-9]+}} overflow<nsw> : i64
// CHECK-NEXT:    %[[LIN:[0-9]+]] = llvm.add %{{[0-9]+}}, %{{[0-9]+}} overflow<nsw> : i64
// CHECK-NEXT:    %[[PTR:.*]] = llvm.getelementptr inbounds %a[%[[LIN]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %x = llvm.load %[[PTR]] : !llvm.ptr -> f32
// CHECK:         %s = llvm.getelementptr inbounds %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:         llvm.store %x, %s : f32, !llvm.ptr
// CHECK-NOT:     memref.
// CHECK-NOT:     inttoptr

// ALL-LABEL: llvm.func @views(%area: !llvm.ptr, %i: i64, %j: i64) {
// ALL-NEXT:    %0 = llvm.mlir.constant(12) : i64
// ALL-NEXT:    %1 = llvm.mlir.constant(4) : i64
// ALL-NEXT:    %off = llvm.mlir.constant(64) : i64
// ALL-NEXT:    %a = llvm.getelementptr inbounds %area[%off] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// ALL-NEXT:    %2 = llvm.mul %i, %0 overflow<nsw> : i64
// ALL-NEXT:    %3 = llvm.mul %j, %1 overflow<nsw> : i64
// ALL-NEXT:    %4 = llvm.add %2, %3 overflow<nsw> : i64
// ALL-NEXT:    %5 = llvm.add %4, %i overflow<nsw> : i64
// ALL-NEXT:    %6 = llvm.getelementptr inbounds %a[%5] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// ALL-NEXT:    %x = llvm.load %6 : !llvm.ptr -> f32
// ALL-NEXT:    %z = llvm.mlir.constant(0) : i64
// ALL-NEXT:    %s = llvm.getelementptr inbounds %area[%z] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// ALL-NEXT:    llvm.store %x, %s : f32, !llvm.ptr
// ALL-NEXT:    llvm.return
func.func @views(%area: memref<256xi8>, %i: index, %j: index) {
  %off = arith.constant 64 : index
  %a = memref.view %area[%off][] : memref<256xi8> to memref<2x3x4xf32>
  %x = memref.load %a[%i, %j, %i] : memref<2x3x4xf32>
  %z = arith.constant 0 : index
  %s = memref.view %area[%z][] : memref<256xi8> to memref<f32>
  memref.store %x, %s[] : memref<f32>
  func.return
}

// -----

// A static alloca is an llvm.alloca of its element count.
// ALL-LABEL: llvm.func @scratch(%v: f32) {
// ALL-NEXT:    %0 = llvm.mlir.constant(8) : i64
// ALL-NEXT:    %m = llvm.alloca %0 x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
// ALL-NEXT:    %c = llvm.mlir.constant(3) : i64
// ALL-NEXT:    %[[P:.*]] = llvm.getelementptr inbounds %m[%c] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// ALL-NEXT:    llvm.store %v, %[[P]] : f32, !llvm.ptr
func.func @scratch(%v: f32) {
  %m = memref.alloca() {alignment = 64 : i64} : memref<8xf32>
  %c = arith.constant 3 : index
  memref.store %v, %m[%c] : memref<8xf32>
  func.return
}

// -----

// Constant indices of a multi-dimensional memref fold into one constant offset.
// ALL-LABEL: llvm.func @folded(%p: !llvm.ptr, %i: i64) -> f32 {
// ALL-NEXT:    %0 = llvm.mlir.constant(4) : i64
// ALL-NEXT:    %1 = llvm.mlir.constant(14) : i64
// ALL:         %[[M:.*]] = llvm.mul %i, %0 overflow<nsw> : i64
// ALL-NEXT:    %[[L:.*]] = llvm.add %[[M]], %1 overflow<nsw> : i64
// ALL-NEXT:    %[[P:.*]] = llvm.getelementptr inbounds %p[%[[L]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// ALL-NEXT:    %x = llvm.load %[[P]] : !llvm.ptr -> f32
func.func @folded(%p: memref<2x3x4xf32>, %i: index) -> f32 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %x = memref.load %p[%c1, %i, %c2] : memref<2x3x4xf32>
  func.return %x : f32
}

// -----

// No memref ops: nothing changes.
// CHECK-LABEL: func.func @none(%x: f32) -> f32 {
// CHECK-NEXT:    func.return %x : f32
// ALL-LABEL: llvm.func @none(%x: f32) -> f32 {
func.func @none(%x: f32) -> f32 {
  func.return %x : f32
}
