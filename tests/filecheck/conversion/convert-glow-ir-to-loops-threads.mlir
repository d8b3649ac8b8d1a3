// RUN: glow-opt %s --split-input-file --lower-to-instr --glow-instr-pipeline --convert-glow-ir-to-loops=num-threads=2 --cse | FileCheck %s
// RUN: glow-opt %s --split-input-file --lower-to-instr --glow-instr-pipeline --convert-glow-ir-to-loops --cse | FileCheck %s --check-prefix=ONE
// A bad thread count is refused where the pass is given:
// RUN: not glow-opt %s --split-input-file --lower-to-instr --glow-instr-pipeline --convert-glow-ir-to-loops=num-threads=0 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: num-threads must be 1 to 256, got 0

// Threads (conversion/glow_ir_to_loops/parallel.py): a large matrix product splits the
// rows of C into groups of whole blocks of ROWS (64 rows in 2 groups of 32) in a loop
// marked parallel for the translator to outline; each group runs the serial gemm on its
// rows. The accumulation tile is per worker (`glow.private`, and the kernel function's
// `glow.worker_scratch` bytes per worker). One thread: no mark, no private tile.
// CHECK-LABEL: func.func private @mm_k0_mat_mul(
// CHECK-SAME:      attributes {glow.kernel, glow.worker_scratch = {{[0-9]+}} : i64}
// CHECK:         memref.view {{.*}} {glow.private}
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:         } {glow.parallel = 2 : i64}
// ONE-LABEL: func.func private @mm_k0_mat_mul(
// ONE-NOT:     glow.parallel
// ONE-NOT:     glow.private
// ONE:       func.func @mm(
func.func @mm(%a: tensor<64x256xf32>, %b: tensor<256x256xf32>) -> tensor<64x256xf32> {
  %c = glow.mat_mul %a, %b : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  return %c : tensor<64x256xf32>
}

// -----

// Small kernels stay serial (PARALLEL_MIN_WORK): 4x8 @ 8x8 is 256 multiply-adds.
// CHECK-LABEL: func.func private @small_k0_mat_mul(
// CHECK-NOT:     glow.parallel
// CHECK:       func.func @small(
func.func @small(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %c = glow.mat_mul %a, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}
