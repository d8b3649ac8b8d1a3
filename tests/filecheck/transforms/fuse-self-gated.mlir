// fuse-self-gated: mul(x, sigmoid(x)) (torch.onnx's nn.SiLU), the operands either way
// round, becomes one glow.swish; x may have other users.
// It must not fire when the sigmoid is also read elsewhere, when it reads another value
// than the other factor, or on a gate that is not the swish's (tanh).
// RUN: glow-opt %s --split-input-file -p fuse-self-gated | FileCheck %s

// CHECK-LABEL: func.func @x_first
// CHECK-NOT:     glow.sigmoid
// CHECK:         %[[Y:.*]] = glow.swish %x : tensor<2x8xf32>
// CHECK-NOT:     glow.mul
// CHECK:         func.return %[[Y]]
func.func @x_first(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = glow.sigmoid %x : tensor<2x8xf32>
  %y = glow.mul %x, %s : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

// The sigmoid first; x also read by a second op (EfficientNet's squeeze-and-excitation).
// CHECK-LABEL: func.func @sigmoid_first_x_shared
// CHECK:         %[[Y:.*]] = glow.swish %x : tensor<1x4x3x3xf32>
// CHECK:         %[[Z:.*]] = glow.add %[[Y]], %x
// CHECK-NOT:     glow.sigmoid
// CHECK:         func.return %[[Z]]
func.func @sigmoid_first_x_shared(%x: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %s = glow.sigmoid %x : tensor<1x4x3x3xf32>
  %y = glow.mul %s, %x : tensor<1x4x3x3xf32>
  %z = glow.add %y, %x : tensor<1x4x3x3xf32>
  func.return %z : tensor<1x4x3x3xf32>
}

// -----

// The sigmoid is returned too: left alone.
// CHECK-LABEL: func.func @sigmoid_read_twice
// CHECK:         glow.sigmoid
// CHECK:         glow.mul
// CHECK-NOT:     glow.swish
func.func @sigmoid_read_twice(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %s = glow.sigmoid %x : tensor<2x8xf32>
  %y = glow.mul %x, %s : tensor<2x8xf32>
  func.return %y, %s : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// sigmoid of another value: a gate, not a swish.
// CHECK-LABEL: func.func @other_value
// CHECK:         glow.sigmoid %b
// CHECK:         glow.mul
// CHECK-NOT:     glow.swish
func.func @other_value(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = glow.sigmoid %b : tensor<2x8xf32>
  %y = glow.mul %a, %s : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

// x * tanh(x) is no self-gated op.
// CHECK-LABEL: func.func @tanh_gate
// CHECK:         glow.tanh
// CHECK:         glow.mul
// CHECK-NOT:     glow.swish
func.func @tanh_gate(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %t = glow.tanh %x : tensor<2x8xf32>
  %y = glow.mul %x, %t : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
