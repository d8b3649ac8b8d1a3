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

// -----

// A 1x1 expansion and the depthwise convolution reading its result share one kernel
// function and one parallel region (conv_pairs.py): each group of channels runs the
// expansion's blocks, then the depthwise channels of the same group. One thread: two
// kernel functions, no mark.
// CHECK-LABEL: func.func private @pair_k0_convolution_then_convolution(
// CHECK:         } {glow.parallel = 2 : i64}
// CHECK-NOT:     glow.parallel
// CHECK:       func.func @pair(
// CHECK:         func.call @glow_pool_begin(
// CHECK-COUNT-1: func.call @pair_k0_convolution_then_convolution(
// CHECK-NOT:     func.call @pair_
// CHECK:         func.call @glow_pool_end(
// CHECK:         return
// ONE-LABEL: func.func private @pair_k0_convolution(
// ONE-NOT:     glow.parallel
// ONE:       func.func private @pair_k1_convolution(
// ONE-NOT:     glow.parallel
// ONE:       func.func @pair(
// ONE-NOT:     glow_pool_
func.func @pair(%x: tensor<1x24x28x28xf32>, %we: tensor<144x24x1x1xf32>, %be: tensor<144xf32>, %wd: tensor<144x1x3x3xf32>, %bd: tensor<144xf32>) -> tensor<1x144x28x28xf32> {
  %e = glow.convolution %x, %we, %be {kernels = array<i64: 1, 1>, fused_activation = "clip", fused_activation_args = array<f32: 0.000000e+00, 6.000000e+00>} : (tensor<1x24x28x28xf32>, tensor<144x24x1x1xf32>, tensor<144xf32>) -> tensor<1x144x28x28xf32>
  %d = glow.convolution %e, %wd, %bd {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, group = 144 : i64, fused_activation = "clip", fused_activation_args = array<f32: 0.000000e+00, 6.000000e+00>} : (tensor<1x144x28x28xf32>, tensor<144x1x3x3xf32>, tensor<144xf32>) -> tensor<1x144x28x28xf32>
  return %d : tensor<1x144x28x28xf32>
}

// -----

// Not paired: the depthwise convolution reads the input, not the 1x1's result (each
// kernel its own region), and a narrowing 1x1 (split by pixels) before a depthwise one.
// CHECK-LABEL: func.func private @apart_k0_convolution(
// CHECK:         } {glow.parallel = 2 : i64}
// CHECK:       func.func private @apart_k1_convolution(
// CHECK:         } {glow.parallel = 2 : i64}
// CHECK:       func.func private @apart_k2_convolution(
// CHECK:         } {glow.parallel = 2 : i64}
// CHECK:       func.func private @apart_k3_convolution(
// CHECK:         } {glow.parallel = 2 : i64}
// CHECK-NOT:   then
// CHECK:       func.func @apart(
func.func @apart(%x: tensor<1x144x56x56xf32>, %we: tensor<144x144x1x1xf32>, %be: tensor<144xf32>, %wd: tensor<144x1x3x3xf32>, %bd: tensor<144xf32>, %wp: tensor<24x144x1x1xf32>, %bp: tensor<24xf32>, %wd2: tensor<24x1x3x3xf32>, %bd2: tensor<24xf32>) -> (tensor<1x144x56x56xf32>, tensor<1x144x56x56xf32>, tensor<1x24x56x56xf32>) {
  %e = glow.convolution %x, %we, %be {kernels = array<i64: 1, 1>} : (tensor<1x144x56x56xf32>, tensor<144x144x1x1xf32>, tensor<144xf32>) -> tensor<1x144x56x56xf32>
  %d = glow.convolution %x, %wd, %bd {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, group = 144 : i64} : (tensor<1x144x56x56xf32>, tensor<144x1x3x3xf32>, tensor<144xf32>) -> tensor<1x144x56x56xf32>
  %p = glow.convolution %d, %wp, %bp {kernels = array<i64: 1, 1>} : (tensor<1x144x56x56xf32>, tensor<24x144x1x1xf32>, tensor<24xf32>) -> tensor<1x24x56x56xf32>
  %q = glow.convolution %p, %wd2, %bd2 {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, group = 24 : i64} : (tensor<1x24x56x56xf32>, tensor<24x1x3x3xf32>, tensor<24xf32>) -> tensor<1x24x56x56xf32>
  return %e, %d, %q : tensor<1x144x56x56xf32>, tensor<1x144x56x56xf32>, tensor<1x24x56x56xf32>
}
