// fuse-gelu: an exact GELU as exporters write it without ONNX's Gelu (x / sqrt 2, erf,
// + 1, and the product of that, x and 0.5 in any grouping, the 0.5 also as a division by
// exactly 2; in f32 or f16) becomes one glow.gelu.
// It must not fire when the ops compute something else (another scale, erf of
// another value, no 0.5), or when a piece is also read outside the pattern.
// RUN: glow-opt %s --split-input-file -p fuse-gelu | FileCheck %s

// torch.onnx's nn.GELU: (x * (erf(x / sqrt 2) + 1)) * 0.5
// CHECK-LABEL: func.func @torch_form
// CHECK-NOT:     glow.erf
// CHECK:         %[[Y:.*]] = glow.gelu %x : tensor<2x8xf32>
// CHECK-NOT:     glow.erf
// CHECK:         func.return %[[Y]]
func.func @torch_form(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = glow.splat {value = 1.41421354 : f32} : tensor<2x8xf32>
  %d = glow.div %x, %s : tensor<2x8xf32>
  %e = glow.erf %d : tensor<2x8xf32>
  %one = glow.splat {value = 1.0 : f32} : tensor<2x8xf32>
  %f = glow.add %e, %one : tensor<2x8xf32>
  %g = glow.mul %x, %f : tensor<2x8xf32>
  %half = glow.splat {value = 0.5 : f32} : tensor<2x8xf32>
  %y = glow.mul %g, %half : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

// transformers' BERT: x * 0.5 * (1 + erf(x * (1 / sqrt 2)))
// CHECK-LABEL: func.func @bert_form
// CHECK:         %[[Y:.*]] = glow.gelu %x : tensor<2x8xf32>
// CHECK-NOT:     glow.mul
// CHECK:         func.return %[[Y]]
func.func @bert_form(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = glow.splat {value = 0.5 : f32} : tensor<2x8xf32>
  %h = glow.mul %x, %half : tensor<2x8xf32>
  %r = glow.splat {value = 0.707106769 : f32} : tensor<2x8xf32>
  %d = glow.mul %r, %x : tensor<2x8xf32>
  %e = glow.erf %d : tensor<2x8xf32>
  %one = glow.splat {value = 1.0 : f32} : tensor<2x8xf32>
  %f = glow.add %one, %e : tensor<2x8xf32>
  %y = glow.mul %h, %f : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

// Divided by 2, not sqrt 2: no GELU, left alone.
// CHECK-LABEL: func.func @other_scale
// CHECK:         glow.erf
// CHECK-NOT:     glow.gelu
func.func @other_scale(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = glow.splat {value = 2.0 : f32} : tensor<2x8xf32>
  %d = glow.div %x, %s : tensor<2x8xf32>
  %e = glow.erf %d : tensor<2x8xf32>
  %one = glow.splat {value = 1.0 : f32} : tensor<2x8xf32>
  %f = glow.add %e, %one : tensor<2x8xf32>
  %g = glow.mul %x, %f : tensor<2x8xf32>
  %half = glow.splat {value = 0.5 : f32} : tensor<2x8xf32>
  %y = glow.mul %g, %half : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

// The erf reads another value than the one multiplied: left alone.
// CHECK-LABEL: func.func @two_inputs
// CHECK:         glow.erf
// CHECK-NOT:     glow.gelu
func.func @two_inputs(%x: tensor<2x8xf32>, %z: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = glow.splat {value = 1.41421354 : f32} : tensor<2x8xf32>
  %d = glow.div %z, %s : tensor<2x8xf32>
  %e = glow.erf %d : tensor<2x8xf32>
  %one = glow.splat {value = 1.0 : f32} : tensor<2x8xf32>
  %f = glow.add %e, %one : tensor<2x8xf32>
  %g = glow.mul %x, %f : tensor<2x8xf32>
  %half = glow.splat {value = 0.5 : f32} : tensor<2x8xf32>
  %y = glow.mul %g, %half : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

// No factor 0.5 (x * (1 + erf(.)) is twice a GELU): left alone.
// CHECK-LABEL: func.func @no_half
// CHECK:         glow.erf
// CHECK-NOT:     glow.gelu
func.func @no_half(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = glow.splat {value = 1.41421354 : f32} : tensor<2x8xf32>
  %d = glow.div %x, %s : tensor<2x8xf32>
  %e = glow.erf %d : tensor<2x8xf32>
  %one = glow.splat {value = 1.0 : f32} : tensor<2x8xf32>
  %f = glow.add %e, %one : tensor<2x8xf32>
  %y = glow.mul %x, %f : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

// The erf is a second result: the pieces stay.
// CHECK-LABEL: func.func @erf_read_outside
// CHECK:         glow.erf
// CHECK-NOT:     glow.gelu
func.func @erf_read_outside(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %s = glow.splat {value = 1.41421354 : f32} : tensor<2x8xf32>
  %d = glow.div %x, %s : tensor<2x8xf32>
  %e = glow.erf %d : tensor<2x8xf32>
  %one = glow.splat {value = 1.0 : f32} : tensor<2x8xf32>
  %f = glow.add %e, %one : tensor<2x8xf32>
  %g = glow.mul %x, %f : tensor<2x8xf32>
  %half = glow.splat {value = 0.5 : f32} : tensor<2x8xf32>
  %y = glow.mul %g, %half : tensor<2x8xf32>
  func.return %y, %e : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// The half product x * (1 + erf(.)) is read outside: the pieces stay.
// CHECK-LABEL: func.func @inner_product_read_outside
// CHECK:         glow.erf
// CHECK-NOT:     glow.gelu
func.func @inner_product_read_outside(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %s = glow.splat {value = 1.41421354 : f32} : tensor<2x8xf32>
  %d = glow.div %x, %s : tensor<2x8xf32>
  %e = glow.erf %d : tensor<2x8xf32>
  %one = glow.splat {value = 1.0 : f32} : tensor<2x8xf32>
  %f = glow.add %e, %one : tensor<2x8xf32>
  %g = glow.mul %x, %f : tensor<2x8xf32>
  %half = glow.splat {value = 0.5 : f32} : tensor<2x8xf32>
  %y = glow.mul %g, %half : tensor<2x8xf32>
  func.return %y, %g : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// The half as a division: x * (erf(x / sqrt 2) + 1) / 2
// CHECK-LABEL: func.func @divided_by_two
// CHECK-NOT:     glow.erf
// CHECK:         %[[Y:.*]] = glow.gelu %x : tensor<2x8xf32>
// CHECK-NOT:     glow.div
// CHECK:         func.return %[[Y]]
func.func @divided_by_two(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = glow.splat {value = 1.41421354 : f32} : tensor<2x8xf32>
  %d = glow.div %x, %s : tensor<2x8xf32>
  %e = glow.erf %d : tensor<2x8xf32>
  %one = glow.splat {value = 1.0 : f32} : tensor<2x8xf32>
  %f = glow.add %e, %one : tensor<2x8xf32>
  %g = glow.mul %x, %f : tensor<2x8xf32>
  %two = glow.splat {value = 2.0 : f32} : tensor<2x8xf32>
  %y = glow.div %g, %two : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

// x halved by a division first: (x / 2) * (1 + erf(x * (1 / sqrt 2)))
// CHECK-LABEL: func.func @x_divided_by_two
// CHECK:         %[[Y:.*]] = glow.gelu %x : tensor<2x8xf32>
// CHECK-NOT:     glow.div
// CHECK:         func.return %[[Y]]
func.func @x_divided_by_two(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %two = glow.splat {value = 2.0 : f32} : tensor<2x8xf32>
  %h = glow.div %x, %two : tensor<2x8xf32>
  %r = glow.splat {value = 0.707106769 : f32} : tensor<2x8xf32>
  %d = glow.mul %x, %r : tensor<2x8xf32>
  %e = glow.erf %d : tensor<2x8xf32>
  %one = glow.splat {value = 1.0 : f32} : tensor<2x8xf32>
  %f = glow.add %one, %e : tensor<2x8xf32>
  %y = glow.mul %h, %f : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

// Divided by 2.5, not 2: left alone.
// CHECK-LABEL: func.func @divided_by_other
// CHECK:         glow.erf
// CHECK-NOT:     glow.gelu
func.func @divided_by_other(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = glow.splat {value = 1.41421354 : f32} : tensor<2x8xf32>
  %d = glow.div %x, %s : tensor<2x8xf32>
  %e = glow.erf %d : tensor<2x8xf32>
  %one = glow.splat {value = 1.0 : f32} : tensor<2x8xf32>
  %f = glow.add %e, %one : tensor<2x8xf32>
  %g = glow.mul %x, %f : tensor<2x8xf32>
  %two = glow.splat {value = 2.5 : f32} : tensor<2x8xf32>
  %y = glow.div %g, %two : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

// Halved twice (times 0.5, then divided by 2): the GELU is the product with 0.5; the
// division stays after it (it is not taken as the GELU's half a second time).
// CHECK-LABEL: func.func @halved_twice
// CHECK:         %[[G:.*]] = glow.gelu %x : tensor<2x8xf32>
// CHECK:         %[[Y:.*]] = glow.div %[[G]], %{{.*}} : tensor<2x8xf32>
// CHECK:         func.return %[[Y]]
func.func @halved_twice(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = glow.splat {value = 1.41421354 : f32} : tensor<2x8xf32>
  %d = glow.div %x, %s : tensor<2x8xf32>
  %e = glow.erf %d : tensor<2x8xf32>
  %one = glow.splat {value = 1.0 : f32} : tensor<2x8xf32>
  %f = glow.add %e, %one : tensor<2x8xf32>
  %g = glow.mul %x, %f : tensor<2x8xf32>
  %half = glow.splat {value = 0.5 : f32} : tensor<2x8xf32>
  %q = glow.mul %g, %half : tensor<2x8xf32>
  %two = glow.splat {value = 2.0 : f32} : tensor<2x8xf32>
  %y = glow.div %q, %two : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

// An f16 graph: its sqrt 2 is f16's (1.4140625), its 1 / sqrt 2 too (0.70703125).
// CHECK-LABEL: func.func @f16
// CHECK:         %[[Y:.*]] = glow.gelu %x : tensor<2x8xf16>
// CHECK-NEXT:    %[[Z:.*]] = glow.gelu %x : tensor<2x8xf16>
// CHECK-NOT:     glow.erf
// CHECK:         func.return %[[Y]], %[[Z]]
func.func @f16(%x: tensor<2x8xf16>) -> (tensor<2x8xf16>, tensor<2x8xf16>) {
  %s = glow.splat {value = 1.4140625 : f16} : tensor<2x8xf16>
  %d = glow.div %x, %s : tensor<2x8xf16>
  %e = glow.erf %d : tensor<2x8xf16>
  %one = glow.splat {value = 1.0 : f16} : tensor<2x8xf16>
  %f = glow.add %e, %one : tensor<2x8xf16>
  %g = glow.mul %x, %f : tensor<2x8xf16>
  %half = glow.splat {value = 0.5 : f16} : tensor<2x8xf16>
  %y = glow.mul %g, %half : tensor<2x8xf16>
  %r = glow.splat {value = 0.70703125 : f16} : tensor<2x8xf16>
  %d2 = glow.mul %x, %r : tensor<2x8xf16>
  %e2 = glow.erf %d2 : tensor<2x8xf16>
  %f2 = glow.add %e2, %one : tensor<2x8xf16>
  %g2 = glow.mul %x, %f2 : tensor<2x8xf16>
  %two = glow.splat {value = 2.0 : f16} : tensor<2x8xf16>
  %z = glow.div %g2, %two : tensor<2x8xf16>
  func.return %y, %z : tensor<2x8xf16>, tensor<2x8xf16>
}

// -----

// An f16 scale one step below f16's sqrt 2 (1.4130859): no GELU, left alone.
// CHECK-LABEL: func.func @f16_other_scale
// CHECK:         glow.erf
// CHECK-NOT:     glow.gelu
func.func @f16_other_scale(%x: tensor<2x8xf16>) -> tensor<2x8xf16> {
  %s = glow.splat {value = 1.4130859375 : f16} : tensor<2x8xf16>
  %d = glow.div %x, %s : tensor<2x8xf16>
  %e = glow.erf %d : tensor<2x8xf16>
  %one = glow.splat {value = 1.0 : f16} : tensor<2x8xf16>
  %f = glow.add %e, %one : tensor<2x8xf16>
  %g = glow.mul %x, %f : tensor<2x8xf16>
  %half = glow.splat {value = 0.5 : f16} : tensor<2x8xf16>
  %y = glow.mul %g, %half : tensor<2x8xf16>
  func.return %y : tensor<2x8xf16>
}
