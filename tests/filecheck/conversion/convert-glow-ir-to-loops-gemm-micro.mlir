// RUN: glow-opt %s --split-input-file --convert-glow-ir-to-loops --cse | FileCheck %s

// The f32 gemm's register-blocked micro-kernel (conversion/glow_ir_to_loops/gemm_micro.py):
// each block of rows x 2 vectors of C is loaded from the accumulation tile into vectors,
// carried through the k loop as iter_args (one broadcast of A per row, fused
// multiply-adds on whole vectors: llvm.fma), and stored back once. The vector width is
// the host's (16 lanes and blocks of 64 columns with AVX-512, else 8 lanes and 16); the
// 72 columns hold at least one block either way, the rest go through the scalar loops.
// CHECK-LABEL: func.func private @mm_k0_mat_mul(
// CHECK:         vector.load %{{.*}} : memref<4x{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (vector<{{[0-9]+}}xf32>
// CHECK:           vector.load %{{.*}} : memref<8x72xf32>, vector<{{[0-9]+}}xf32>
// CHECK:           vector.broadcast %{{.*}} : f32 to vector<{{[0-9]+}}xf32>
// CHECK-NEXT:      llvm.call_intrinsic "llvm.fma.v{{[0-9]+}}f32"
// CHECK:           scf.yield
// CHECK:         vector.store %{{.*}} : memref<4x{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>
// CHECK:         func.return
glow_ir.func @mm declare {
  glow_ir.weight @x constant input : memref<10x8xf32>
  glow_ir.weight @w constant input : memref<8x72xf32>
  glow_ir.weight @y mutable output : memref<10x72xf32>
} program(%x, %w, %y) {
  glow_ir.mat_mul @out %y, @in %x, @in %w : memref<10x72xf32>, memref<10x8xf32>, memref<8x72xf32>
} attributes {activations_size = 0 : i64, alignment = 64 : i64}

// -----

// Blocks of k (k > gemm_micro.KC, several blocks of rows share the block of B): the
// first block of rows stores the vectors it reads from B into the pack (strips x KC x
// the block's columns), the other blocks of rows read them from there.
// CHECK-LABEL: func.func private @packed_k0_fully_connected(
// CHECK:         vector.store %{{.*}} : memref<{{[0-9]+}}x768x{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>
// CHECK:         vector.load %{{.*}} : memref<{{[0-9]+}}x768x{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>
// CHECK:         func.return
glow_ir.func @packed declare {
  glow_ir.weight @x constant input : memref<24x800xf32>
  glow_ir.weight @w constant input : memref<800x128xf32>
  glow_ir.weight @b constant input : memref<128xf32>
  glow_ir.weight @y mutable output : memref<24x128xf32>
} program(%x, %w, %b, %y) {
  glow_ir.fully_connected @out %y, @in %x, @in %w, @in %b : memref<24x128xf32>, memref<24x800xf32>, memref<800x128xf32>, memref<128xf32>
} attributes {activations_size = 0 : i64, alignment = 64 : i64}

// -----

// Weights packed at compile time in panels of 64 columns (`gemm_panels`, the cpu
// backend's `targets/cpu/gemm_panels.py`): the micro-kernel loads B's vectors from the
// panels ([ceil(M / 64), K, 64]), through the blocks of k too, and packs nothing (no
// store into a KC-deep scratch); the 8 leftover columns are one more vector of the last
// panel, whose lanes past column 136 are its zero padding (`vector_columns`): no scalar
// load of the panels at all.
// CHECK-LABEL: func.func private @panels_k0_fully_connected(
// CHECK-NOT:     memref<{{[0-9]+}}x768x{{[0-9]+}}xf32>
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (vector<{{[0-9]+}}xf32>
// CHECK:           vector.load %{{.*}} : memref<3x800x64xf32>, vector<{{[0-9]+}}xf32>
// CHECK:           llvm.call_intrinsic "llvm.fma.v{{[0-9]+}}f32"
// CHECK-NOT:     memref<{{[0-9]+}}x768x{{[0-9]+}}xf32>
// CHECK-NOT:     memref.load %{{.*}} : memref<3x800x64xf32>
// CHECK:         func.return
glow_ir.func @panels declare {
  glow_ir.weight @x constant input : memref<24x800xf32>
  glow_ir.weight @w constant input : memref<3x800x64xf32>
  glow_ir.weight @b constant input : memref<136xf32>
  glow_ir.weight @y mutable output : memref<24x136xf32>
} program(%x, %w, %b, %y) {
  glow_ir.fully_connected @out %y, @in %x, @in %w, @in %b {gemm_panels = 64 : i64} : memref<24x136xf32>, memref<24x800xf32>, memref<3x800x64xf32>, memref<136xf32>
} attributes {activations_size = 0 : i64, alignment = 64 : i64}

// -----

// Columns past the whole blocks (108: 64 + 32 + 12 with 16 lanes, 96 + 8 + 4 with 8):
// the whole vectors left go through a second, narrower block of the micro-kernel (its
// own k loop over vectors of B, read where B is: an input, not packed), and only the
// last partial vector's columns through the scalar loops.
// CHECK-LABEL: func.func private @tail_k0_mat_mul(
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (vector<{{[0-9]+}}xf32>
// CHECK:           vector.load %{{.*}} : memref<8x108xf32>, vector<{{[0-9]+}}xf32>
// CHECK:           scf.yield
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (vector<{{[0-9]+}}xf32>
// CHECK:           vector.load %{{.*}} : memref<8x108xf32>, vector<{{[0-9]+}}xf32>
// CHECK:           scf.yield
// CHECK:         memref.load %{{.*}} : memref<8x108xf32>
// CHECK:         func.return
glow_ir.func @tail declare {
  glow_ir.weight @x constant input : memref<8x8xf32>
  glow_ir.weight @w constant input : memref<8x108xf32>
  glow_ir.weight @y mutable output : memref<8x108xf32>
} program(%x, %w, %y) {
  glow_ir.mat_mul @out %y, @in %x, @in %w : memref<8x108xf32>, memref<8x8xf32>, memref<8x108xf32>
} attributes {activations_size = 0 : i64, alignment = 64 : i64}

// -----

// Not taken: f64 (the scalar loops, vectorized by LLVM), and C rows narrower than one
// block of columns.
// CHECK-LABEL: func.func private @f64_k0_mat_mul(
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         func.return
// CHECK-LABEL: func.func private @f64_k1_mat_mul(
// CHECK-NOT:     llvm.call_intrinsic
// CHECK-NOT:     vector.load
// CHECK:         func.return
glow_ir.func @f64 declare {
  glow_ir.weight @x constant input : memref<10x8xf64>
  glow_ir.weight @w constant input : memref<8x40xf64>
  glow_ir.weight @y mutable output : memref<10x40xf64>
  glow_ir.weight @x2 constant input : memref<10x8xf32>
  glow_ir.weight @w2 constant input : memref<8x8xf32>
  glow_ir.weight @y2 mutable output : memref<10x8xf32>
} program(%x, %w, %y, %x2, %w2, %y2) {
  glow_ir.mat_mul @out %y, @in %x, @in %w : memref<10x40xf64>, memref<10x8xf64>, memref<8x40xf64>
  glow_ir.mat_mul @out %y2, @in %x2, @in %w2 : memref<10x8xf32>, memref<10x8xf32>, memref<8x8xf32>
} attributes {activations_size = 0 : i64, alignment = 64 : i64}
