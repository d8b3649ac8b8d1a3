// RUN: glow-opt %s --split-input-file --convert-glow-ir-to-loops --cse | FileCheck %s

// A global f32 average pool in NCHW (the window is the whole unpadded image) sums each
// channel's plane in vectors (kernels_pool._global_avg_pool, GLOBAL_VECTORS on by
// default): vector adds carried through the plane, the lanes reduced in order, the last
// h w % lanes elements added one by one, then divided by h w. No add may reassociate
// (fastmath<contract> only, the reduction without flags): the order of the sum is the
// code's, so its bits do not depend on the thread split or on LLVM's unrolling. The
// lanes are the host's (16 with AVX-512, else 8); 5 x 13 = 65 leaves a remainder either way.
// CHECK-LABEL: func.func private @gap_k0_avg_pool(
// CHECK:         scf.for
// CHECK:           vector.load %{{.*}} : memref<4x65xf32>, vector<{{[0-9]+}}xf32>
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (vector<{{[0-9]+}}xf32>)
// CHECK:             vector.load %{{.*}} : memref<4x65xf32>, vector<{{[0-9]+}}xf32>
// CHECK-NEXT:        arith.addf %{{.*}}, %{{.*}} fastmath<contract> : vector<{{[0-9]+}}xf32>
// CHECK:           llvm.call_intrinsic "llvm.vector.reduce.fadd.v{{[0-9]+}}f32"(%{{.*}}, %{{.*}}) : (f32, vector<{{[0-9]+}}xf32>) -> f32
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (f32)
// CHECK:             memref.load %{{.*}} : memref<4x65xf32>
// CHECK-NEXT:        arith.addf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK:           arith.divf
// CHECK:         func.return
glow_ir.func @gap declare {
  glow_ir.weight @x constant input : memref<1x4x5x13xf32>
  glow_ir.weight @y mutable output : memref<1x4x1x1xf32>
} program(%x, %y) {
  glow_ir.avg_pool @out %y, @in %x {kernels = array<i64: 5, 13>, strides = array<i64: 1, 1>} : memref<1x4x1x1xf32>, memref<1x4x5x13xf32>
} attributes {activations_size = 0 : i64, alignment = 64 : i64}

// -----

// Not when the plane is shorter than a vector (2 x 2 < 8 lanes): the window loop nest.
// CHECK-LABEL: func.func private @short_k0_avg_pool(
// CHECK-NOT:     vector.
// CHECK:         func.return
glow_ir.func @short declare {
  glow_ir.weight @x constant input : memref<1x4x2x2xf32>
  glow_ir.weight @y mutable output : memref<1x4x1x1xf32>
} program(%x, %y) {
  glow_ir.avg_pool @out %y, @in %x {kernels = array<i64: 2, 2>, strides = array<i64: 1, 1>} : memref<1x4x1x1xf32>, memref<1x4x2x2xf32>
} attributes {activations_size = 0 : i64, alignment = 64 : i64}

// -----

// Nor when the window is part of the image (7 x 8 of 8 x 8: 2 x 1 outputs).
// CHECK-LABEL: func.func private @part_k0_avg_pool(
// CHECK-NOT:     vector.
// CHECK:         func.return
glow_ir.func @part declare {
  glow_ir.weight @x constant input : memref<1x4x8x8xf32>
  glow_ir.weight @y mutable output : memref<1x4x2x1xf32>
} program(%x, %y) {
  glow_ir.avg_pool @out %y, @in %x {kernels = array<i64: 7, 8>, strides = array<i64: 1, 1>} : memref<1x4x2x1xf32>, memref<1x4x8x8xf32>
} attributes {activations_size = 0 : i64, alignment = 64 : i64}
