// RUN: glow-opt %s --split-input-file -p 'glow-graph-pipeline{backend=cpu}' | FileCheck %s --check-prefix=CPU
// RUN: glow-opt %s --split-input-file -p 'glow-graph-pipeline{backend=interpreter}' | FileCheck %s --check-prefix=INTERP
// RUN: glow-opt %s --split-input-file -p 'glow-graph-pipeline{backend=cpu disable=fuse-activations}' | FileCheck %s --check-prefix=NOFUSE
// RUN: not glow-opt %s --split-input-file -p 'glow-graph-pipeline{backend=cpu disable=fuse-activation}' 2>&1 | FileCheck %s --check-prefix=TYPO

// fully_connected + relu: the cpu backend keeps the FC and fuses the relu; the
// interpreter never fuses (as in Glow) and keeps the relu apart.
// The last step, schedule-graph, records the peaks on the function.
// CPU-LABEL:   func.func @fc_relu{{.*}}attributes {glow.peak_live_bytes_before = {{[0-9]+}} : i64, glow.peak_live_bytes_after = {{[0-9]+}} : i64}
// CPU:           glow.fully_connected {{.*}}fused_activation = "relu"
// CPU-NOT:       glow.relu
// INTERP-LABEL: func.func @fc_relu
// INTERP:        glow.fully_connected
// INTERP-NOT:    fused_activation
// INTERP-NEXT:   glow.relu
// NOFUSE-LABEL: func.func @fc_relu
// NOFUSE:        glow.fully_connected
// NOFUSE-NEXT:   glow.relu
// TYPO:          cannot disable unknown pass(es) 'fuse-activation'
func.func @fc_relu(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = glow.constant dense<0.25> : tensor<8x4xf32>
  %b = glow.constant dense<[0.0, 1.0, -1.0, 2.0]> : tensor<4xf32>
  %y = glow.fully_connected %x, %w, %b : (tensor<2x8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %r = glow.relu %y : tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// -----

// Layer normalization: the cpu backend keeps it (one row-wise kernel); the interpreter
// lowers it to reductions and arithmetic.
// CPU-LABEL:   func.func @layer_norm
// CPU-NOT:       glow.batched_reduce_mean
// CPU:           glow.layer_normalization
// CPU-NOT:       glow.batched_reduce_mean
// INTERP-LABEL: func.func @layer_norm
// INTERP-NOT:    glow.layer_normalization
// INTERP:        glow.batched_reduce_mean
func.func @layer_norm(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = glow.constant dense<1.5> : tensor<16xf32>
  %b = glow.constant dense<0.5> : tensor<16xf32>
  %y = glow.layer_normalization %x, %s, %b {epsilon = 1.0e-05 : f32} : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}
