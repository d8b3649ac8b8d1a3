// RUN: glow-opt %s --split-input-file --convert-arith-to-llvm | filecheck %s

// index becomes i64; users not yet converted (memref.load) see a cast back to index.
// CHECK-LABEL: func.func @index_math(%m: memref<8xf32>, %i: index) -> f32 {
// CHECK-NEXT:    %c2 = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    %c2_1 = builtin.unrealized_conversion_cast %c2 : i64 to index
// CHECK-NEXT:    %0 = builtin.unrealized_conversion_cast %i : index to i64
// CHECK-NEXT:    %j = llvm.mul %0, %c2 : i64
// CHECK-NEXT:    %j_1 = builtin.unrealized_conversion_cast %j : i64 to index
// CHECK-NEXT:    %k = llvm.add %j, %c2 overflow<nsw> : i64
// CHECK-NEXT:    %k_1 = builtin.unrealized_conversion_cast %k : i64 to index
// CHECK-NEXT:    %v = memref.load %m[%k_1] : memref<8xf32>
func.func @index_math(%m: memref<8xf32>, %i: index) -> f32 {
  %c2 = arith.constant 2 : index
  %j = arith.muli %i, %c2 : index
  %k = arith.addi %j, %c2 overflow<nsw> : index
  %v = memref.load %m[%k] : memref<8xf32>
  func.return %v : f32
}

// -----

// Fast-math flags carry over; maximumf (NaN-propagating) is the llvm.maximum intrinsic,
// minnumf xDSL's llvm.intr.minnum.
// CHECK-LABEL: func.func @floats(
// CHECK-NEXT:    %s = llvm.fadd %a, %b {fastmathFlags = #llvm.fastmath<reassoc,contract>} : f32
// CHECK-NEXT:    %p = llvm.fmul %s, %b : f32
// CHECK-NEXT:    %n = llvm.fneg %p : f32
// CHECK-NEXT:    %mx = llvm.call_intrinsic "llvm.maximum.f32"(%n, %a) : (f32, f32) -> f32
// CHECK-NEXT:    %mn = llvm.intr.minnum(%mx, %b) : (f32, f32) -> f32
// CHECK-NEXT:    %c = llvm.fcmp "ogt" %mn, %a : f32
// CHECK-NEXT:    %r = llvm.select %c, %mn, %a : i1, f32
// CHECK-NEXT:    func.return %r : f32
func.func @floats(%a: f32, %b: f32) -> f32 {
  %s = arith.addf %a, %b fastmath<reassoc,contract> : f32
  %p = arith.mulf %s, %b : f32
  %n = arith.negf %p : f32
  %mx = arith.maximumf %n, %a : f32
  %mn = arith.minnumf %mx, %b : f32
  %c = arith.cmpf ogt, %mn, %a : f32
  %r = arith.select %c, %mn, %a : f32
  func.return %r : f32
}

// -----

// Casts xDSL's llvm dialect lacks: fptosi/fptoui as saturating intrinsics, uitofp as
// zext + sitofp. Integer max as icmp + select.
// CHECK-LABEL: func.func @casts(
// CHECK-NEXT:    %i = llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"(%f) : (f32) -> i32
// CHECK-NEXT:    %o = llvm.call_intrinsic "llvm.fptoui.sat.i8.f32"(%f) : (f32) -> i8
// CHECK-NEXT:    %[[WIDE:.*]] = llvm.zext %u : i8 to i32
// CHECK-NEXT:    %x = llvm.sitofp %[[WIDE]] : i32 to f32
// CHECK-NEXT:    %e = llvm.fpext %h : f16 to f32
// CHECK-NEXT:    %t = llvm.fptrunc %x : f32 to f16
// CHECK-NEXT:    %[[N:.*]] = builtin.unrealized_conversion_cast %n : index to i64
// CHECK-NEXT:    %c = llvm.trunc %[[N]] : i64 to i32
// CHECK-NEXT:    %w = llvm.sext %o : i8 to i32
// CHECK-NEXT:    %z = llvm.zext %o : i8 to i32
// CHECK-NEXT:    %s = llvm.add %i, %c : i32
// CHECK-NEXT:    %lt = llvm.icmp "slt" %s, %w : i32
// CHECK-NEXT:    %[[GT:.*]] = llvm.icmp "sgt" %s, %z : i32
// CHECK-NEXT:    %m = llvm.select %[[GT]], %s, %z : i1, i32
func.func @casts(%f: f32, %u: i8, %h: f16, %n: index) -> (i32) {
  %i = arith.fptosi %f : f32 to i32
  %o = arith.fptoui %f : f32 to i8
  %x = arith.uitofp %u : i8 to f32
  %e = arith.extf %h : f16 to f32
  %t = arith.truncf %x : f32 to f16
  %c = arith.index_cast %n : index to i32
  %w = arith.extsi %o : i8 to i32
  %z = arith.extui %o : i8 to i32
  %s = arith.addi %i, %c : i32
  %lt = arith.cmpi slt, %s, %w : i32
  %m = arith.maxsi %s, %z : i32
  func.return %m : i32
}


// -----

// Not arith: left alone.
// CHECK-LABEL: func.func @untouched(
// CHECK-NEXT:    %t = math.tanh %a : f32
func.func @untouched(%a: f32) -> f32 {
  %t = math.tanh %a : f32
  func.return %t : f32
}
