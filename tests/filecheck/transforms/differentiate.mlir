// RUN: glow-opt %s --split-input-file -p 'differentiate{loss=mse learning-rate=0.5}' | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'differentiate{loss=mse learning-rate=0.5 momentum=0.9 trainable=w2}' | FileCheck %s --check-prefix=SUBSET
// RUN: glow-opt %s --split-input-file -p 'differentiate{loss=mse batch-norm=frozen trainable=w2}' | FileCheck %s --check-prefix=FROZEN

// A fully connected layer: the weights become state arguments (glow.initial: their bytes),
// their updates results that write them back (glow.updates); the weight's gradient is x^T g, the bias's the sum of g over the batch, g = 2 (y - t) / 4.
// CHECK-LABEL:  func.func @fc(%x: tensor<2x3xf32> {glow.name = "input0"}, %labels: tensor<2x2xf32> {glow.name = "labels"}, %w: tensor<3x2xf32> {glow.name = "w", glow.initial = dense_resource<w> : tensor<3x2xf32>}, %b: tensor<2xf32> {glow.name = "b", glow.initial = dense_resource<b> : tensor<2xf32>}, %w2: tensor<3x2xf32> {glow.name = "w2", glow.initial = dense_resource<w2> : tensor<3x2xf32>})
// CHECK-SAME:     -> (tensor<2x2xf32> {glow.name = "output0"}, tensor<f32> {glow.name = "loss"}, tensor<3x2xf32> {glow.name = "w.updated", glow.updates = "w"}, tensor<2xf32> {glow.name = "b.updated", glow.updates = "b"}, tensor<3x2xf32> {glow.name = "w2.updated", glow.updates = "w2"})
// CHECK-NOT:      glow.constant
// CHECK:          %[[Y:.*]] = glow.fully_connected %x, %w, %b
// CHECK:          %[[S:.*]] = glow.add %[[Y]], %{{.*}}
// CHECK-NEXT:     %[[D:.*]] = glow.sub %[[S]], %labels
// CHECK:          %[[LOSS:.*]] = glow.mul %{{.*}}, %{{.*}} : tensor<f32>
// CHECK:          %[[G:.*]] = glow.mul %[[D]], %{{.*}} : tensor<2x2xf32>
// CHECK-NEXT:     %[[XT:.*]] = glow.transpose %x {shuffle = array<i64: 1, 0>}
// CHECK-NEXT:     %[[GW2:.*]] = glow.mat_mul %[[XT]], %[[G]]
// CHECK:          %[[GW:.*]] = glow.mat_mul %{{.*}}, %[[G]]
// CHECK-NEXT:     %[[GB:.*]] = glow.batched_reduce_add %[[G]] {axes = array<i64: 0>}
// CHECK:          %[[W1:.*]] = glow.sub %w, %{{.*}} : tensor<3x2xf32>
// CHECK:          %[[B1:.*]] = glow.sub %b, %{{.*}} : tensor<2xf32>
// CHECK:          %[[W21:.*]] = glow.sub %w2, %{{.*}} : tensor<3x2xf32>
// CHECK-NEXT:     func.return %[[S]], %[[LOSS]], %[[W1]], %[[B1]], %[[W21]]

// Must not fire for w and b (trainable=w2): they stay constants, without gradients.
// SUBSET-LABEL:  func.func @fc
// SUBSET-SAME:     %w2: tensor<3x2xf32> {glow.name = "w2", glow.initial = dense_resource<w2> : tensor<3x2xf32>}, %{{.*}}: tensor<3x2xf32> {glow.name = "w2.momentum", glow.initial = dense_resource<{{.*}}> : tensor<3x2xf32>})
// SUBSET:          glow.constant dense_resource<w>
// SUBSET:          glow.constant dense_resource<b>
// SUBSET-NOT:      glow.sub %w,
// SUBSET-NOT:      glow.sub %b,
// SUBSET:          glow.sub %w2,
// SUBSET-NEXT:     func.return
func.func @fc(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %w = glow.constant dense_resource<w> : tensor<3x2xf32>
  %b = glow.constant dense_resource<b> : tensor<2xf32>
  %y = glow.fully_connected %x, %w, %b : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %w2 = glow.constant dense_resource<w2> : tensor<3x2xf32>
  %z = glow.mat_mul %x, %w2 : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %s = glow.add %y, %z : tensor<2x2xf32>
  func.return %s : tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803f000000400000404000008040000000000000803f",
      b: "0x040000000000003f000080bf",
      w2: "0x040000000000803f000000400000404000008040000000000000803f"
    }
  }
#-}

// -----

// A weight used twice (relu(x W) W'... here w in both products): its two gradients added.
// CHECK-LABEL:  func.func @shared
// CHECK:          %[[G1:.*]] = glow.mat_mul %{{.*}}, %{{.*}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK:          %[[SUM:.*]] = glow.add %{{.*}}, %{{.*}} : tensor<2x2xf32>
// CHECK:          glow.sub %w, %{{.*}} : tensor<2x2xf32>
// SUBSET-LABEL:  func.func @shared

// Must not fire: with trainable=w2, the weight w stays a constant and gets no gradient
// (no update and no momentum: w2 is the only weight changed).
// SUBSET-NOT:     glow.sub %w,
// SUBSET:         %w = glow.constant dense_resource<w>
// SUBSET-NOT:     glow.sub %w,
// SUBSET:         %[[M:.*]] = glow.add %{{.*}}, %{{.*}} : tensor<2x2xf32>
// SUBSET:         glow.sub %w2, %{{.*}} : tensor<2x2xf32>
// SUBSET:         func.return {{.*}} tensor<2x2xf32>, tensor<f32>, tensor<2x2xf32>, tensor<2x2xf32>{{$}}
func.func @shared(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = glow.constant dense_resource<w> : tensor<2x2xf32>
  %w2 = glow.constant dense_resource<w2> : tensor<2x2xf32>
  %h = glow.mat_mul %x, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = glow.relu %h : tensor<2x2xf32>
  %y = glow.mat_mul %r, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %z = glow.mat_mul %y, %w2 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %z : tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803f000000400000404000008040",
      w2: "0x040000000000803f000000400000404000008040"
    }
  }
#-}

// -----

// Batch norm trains on the batch's statistics: replaced by their composition, and the
// running mean and variance (initializers) become arguments updated with momentum 0.9.
// CHECK-LABEL:  func.func @bn
// CHECK-SAME:     %m: tensor<2xf32> {glow.name = "m", glow.initial = dense_resource<m> : tensor<2xf32>}, %v: tensor<2xf32> {glow.name = "v", glow.initial = dense_resource<v> : tensor<2xf32>})
// CHECK-SAME:     tensor<2xf32> {glow.name = "m.updated", glow.updates = "m"}, tensor<2xf32> {glow.name = "v.updated", glow.updates = "v"})
// CHECK-NOT:      glow.batch_normalization
// CHECK:          %[[SUM:.*]] = glow.batched_reduce_add %x {axes = array<i64: 0, 2, 3>}
// CHECK:          %[[MEAN:.*]] = glow.mul %[[SUM]], %{{.*}} : tensor<2xf32>
// CHECK:          glow.mul %m, %{{.*}} : tensor<2xf32>
// CHECK:          glow.mul %[[MEAN]], %{{.*}} : tensor<2xf32>
// CHECK:          glow.mul %v, %{{.*}} : tensor<2xf32>

// Must not fire with batch-norm=frozen: the op stays, its statistics constants.
// SUBSET-LABEL:  func.func @bn
// FROZEN-LABEL:  func.func @bn
// FROZEN:          %m = glow.constant dense_resource<m>
// FROZEN:          %v = glow.constant dense_resource<v>
// FROZEN:          glow.batch_normalization %x, %s, %b, %m, %v
// FROZEN-NOT:      glow.batched_reduce_add %x
func.func @bn(%x: tensor<2x2x1x1xf32>) -> tensor<2x2x1x1xf32> {
  %s = glow.constant dense_resource<s> : tensor<2xf32>
  %b = glow.constant dense_resource<b> : tensor<2xf32>
  %m = glow.constant dense_resource<m> : tensor<2xf32>
  %v = glow.constant dense_resource<v> : tensor<2xf32>
  %w2 = glow.constant dense_resource<w2> : tensor<2x2x1x1xf32>
  %y = glow.batch_normalization %x, %s, %b, %m, %v : (tensor<2x2x1x1xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x1x1xf32>
  %z = glow.mul %y, %w2 : tensor<2x2x1x1xf32>
  func.return %z : tensor<2x2x1x1xf32>
}

{-#
  dialect_resources: {
    builtin: {
      s: "0x040000000000803f00000040",
      b: "0x040000000000003f000080bf",
      m: "0x040000000000003f000080bf",
      v: "0x040000000000803f00000040",
      w2: "0x040000000000803f000000400000404000008040"
    }
  }
#-}
