// differentiate's float options take whole numbers too (xDSL types `1` as an int), a
// value out of range is refused with its range before any IR is read, and a batch-size
// other than the graph's (the loss's mean would count the wrong samples) or a graph of
// batch 0 is refused at the function.
//
// RUN: glow-opt %s -p 'differentiate{loss=mse learning-rate=1 momentum=0 l1=0 l2=0}' | FileCheck %s --check-prefix=WHOLE
// RUN: glow-opt %s -p 'differentiate{loss=mse learning-rate=1.0 momentum=0.0 l1=0.0 l2=0.0}' | FileCheck %s --check-prefix=WHOLE
// RUN: glow-opt %s -p 'differentiate{loss=mse batch-size=2}' | FileCheck %s --check-prefix=WHOLE
// RUN: not glow-opt %s -p 'differentiate{learning-rate=-1}' 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not glow-opt %s -p 'differentiate{momentum=-0.5}' 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// RUN: not glow-opt %s -p 'differentiate{loss=mse batch-size=3}' 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not glow-opt %S/../inputs/differentiate-batch0.mlir -p 'differentiate{loss=mse}' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not glow-opt %S/../inputs/differentiate-no-weight.mlir -p 'differentiate{loss=mse}' 2>&1 | FileCheck %s --check-prefix=NOWEIGHT
// RUN: not glow-opt %s -p 'differentiate{loss=mse trainable=v}' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// WHOLE:       func.func @fc({{.*}}%labels: tensor<2x2xf32>{{.*}}%w: tensor<3x2xf32>
// WHOLE:       glow.sub %w,
// RANGE:       glow-opt: error: invalid pass pipeline 'differentiate{learning-rate=-1}': differentiate: the learning rate must be a finite number >= 0, got -1.0
// RANGE-NOT:   Incompatible types
// MOMENTUM:    glow-opt: error: invalid pass pipeline 'differentiate{momentum=-0.5}': differentiate: the momentum must be a finite number >= 0, got -0.5
// BATCH:       differentiate-options.mlir:{{[0-9]+}}:1: error: 'func.func' op batch-size 3 differs from the graph's batch, 2 (result #0's first dim)
// ZERO:        error: 'func.func' op input 'input0' has batch 0 (shape 0x3): a training step needs a batch of at least one sample
// ZERO-NOT:    Traceback
// NOWEIGHT:    differentiate-no-weight.mlir:{{[0-9]+}}:1: error: 'func.func' op has no trainable weight (no float initializer reaches the loss)
// UNKNOWN:     differentiate-options.mlir:{{[0-9]+}}:1: error: 'func.func' op no trainable weight named 'v' (the model's float weights: w)
func.func @fc(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %w = glow.constant dense_resource<w> : tensor<3x2xf32>
  %y = glow.mat_mul %x, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803f000000400000404000008040000000000000803f"
    }
  }
#-}
