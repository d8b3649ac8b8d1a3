// RUN: glow-opt %s --split-input-file --convert-math-to-llvm | filecheck %s

// LLVM intrinsics: xDSL's llvm.intr.* ops where it has them, llvm.call_intrinsic for the
// others (also on vectors); rsqrt as 1 / sqrt.
// CHECK-LABEL: func.func @intrinsics(
// CHECK-NEXT:    %0 = llvm.intr.exp(%x) : (f32) -> f32
// CHECK-NEXT:    %1 = llvm.intr.sqrt(%0) : (f32) -> f32
// CHECK-NEXT:    %2 = llvm.intr.fabs(%1) : (f32) -> f32
// CHECK-NEXT:    %3 = llvm.intr.floor(%2) : (f32) -> f32
// CHECK-NEXT:    %4 = llvm.intr.pow(%3, %y) : (f32, f32) -> f32
// CHECK-NEXT:    %5 = llvm.intr.fma(%4, %y, %z) : (f32, f32, f32) -> f32
// CHECK-NEXT:    %6 = llvm.call_intrinsic "llvm.roundeven.f32"(%5) : (f32) -> f32
// CHECK-NEXT:    %7 = llvm.call_intrinsic "llvm.round.f32"(%6) : (f32) -> f32
// CHECK-NEXT:    %8 = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-NEXT:    %9 = llvm.intr.sqrt(%7) : (f32) -> f32
// CHECK-NEXT:    %10 = llvm.fdiv %8, %9 : f32
// CHECK-NEXT:    %11 = llvm.intr.exp(%v) : (vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:    %12 = llvm.call_intrinsic "llvm.roundeven.v8f32"(%11) : (vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:    func.return %10 : f32
// CHECK-NOT:   llvm.func
func.func @intrinsics(%x: f32, %y: f32, %z: f32, %v: vector<8xf32>) -> f32 {
  %0 = math.exp %x : f32
  %1 = math.sqrt %0 : f32
  %2 = math.absf %1 : f32
  %3 = math.floor %2 : f32
  %4 = math.powf %3, %y : f32
  %5 = math.fma %4, %y, %z : f32
  %6 = math.roundeven %5 : f32
  %7 = math.round %6 : f32
  %8 = math.rsqrt %7 : f32
  %9 = math.exp %v : vector<8xf32>
  %10 = math.roundeven %9 : vector<8xf32>
  func.return %8 : f32
}

// -----

// libm: one external declaration per function (f32 names end in f); f16 goes through f32.
// CHECK-LABEL: func.func @libm(
// CHECK-NEXT:    %0 = llvm.call @tanhf(%x) : (f32) -> f32
// CHECK-NEXT:    %1 = llvm.call @erff(%0) : (f32) -> f32
// CHECK-NEXT:    %2 = llvm.call @tanhf(%1) : (f32) -> f32
// CHECK-NEXT:    %3 = llvm.call @atan(%d) : (f64) -> f64
// CHECK-NEXT:    %4 = llvm.fpext %h : f16 to f32
// CHECK-NEXT:    %5 = llvm.call @erff(%4) : (f32) -> f32
// CHECK-NEXT:    %6 = llvm.fptrunc %5 : f32 to f16
// CHECK-NEXT:    func.return %2 : f32
// CHECK-NEXT:  }
// CHECK-NEXT:  llvm.func @tanhf(f32) -> f32
// CHECK-NEXT:  llvm.func @erff(f32) -> f32
// CHECK-NEXT:  llvm.func @atan(f64) -> f64
// CHECK-NEXT: }
func.func @libm(%x: f32, %d: f64, %h: f16) -> f32 {
  %0 = math.tanh %x : f32
  %1 = math.erf %0 : f32
  %2 = math.tanh %1 : f32
  %3 = math.atan %d : f64
  %4 = math.erf %h : f16
  func.return %2 : f32
}

// -----

// No math ops: nothing changes.
// CHECK-LABEL: func.func @none(%x: f32) -> f32 {
// CHECK-NEXT:    %0 = arith.addf %x, %x : f32
func.func @none(%x: f32) -> f32 {
  %0 = arith.addf %x, %x : f32
  func.return %0 : f32
}
