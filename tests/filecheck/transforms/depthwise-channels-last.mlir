// RUN: glow-opt %s --split-input-file --depthwise-channels-last | FileCheck %s

// ConvNeXt's block: NHWC stream -> NCHW for the 7x7 depthwise -> NHWC again. The
// convolution runs in NHWC (its filter a reshape to OHWI), both transposes gone.
// CHECK-LABEL:  func.func @convnext_block
// CHECK-NOT:      glow.transpose
// CHECK:          %[[W:.*]] = glow.reshape %w : tensor<8x1x7x7xf32> -> tensor<8x7x7x1xf32>
// CHECK-NEXT:     %[[Y:.*]] = glow.convolution %x, %[[W]], %b {kernels = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, group = 8 : i64, layout = "NHWC"} : (tensor<1x9x9x8xf32>, tensor<8x7x7x1xf32>, tensor<8xf32>) -> tensor<1x9x9x8xf32>
// CHECK-NOT:      glow.transpose
// CHECK-NEXT:     %[[R:.*]] = glow.relu %[[Y]]
// CHECK-NEXT:     func.return %[[R]], %[[Y]]
func.func @convnext_block(%x: tensor<1x9x9x8xf32>, %w: tensor<8x1x7x7xf32>, %b: tensor<8xf32>) -> (tensor<1x9x9x8xf32>, tensor<1x9x9x8xf32>) {
  %t = glow.transpose %x {shuffle = array<i64: 0, 3, 1, 2>} : tensor<1x9x9x8xf32> -> tensor<1x8x9x9xf32>
  %y = glow.convolution %t, %w, %b {kernels = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, group = 8 : i64} : (tensor<1x8x9x9xf32>, tensor<8x1x7x7xf32>, tensor<8xf32>) -> tensor<1x8x9x9xf32>
  %u = glow.transpose %y {shuffle = array<i64: 0, 2, 3, 1>} : tensor<1x8x9x9xf32> -> tensor<1x9x9x8xf32>
  %v = glow.transpose %y {shuffle = array<i64: 0, 2, 3, 1>} : tensor<1x8x9x9xf32> -> tensor<1x9x9x8xf32>
  %r = glow.relu %u : tensor<1x9x9x8xf32>
  func.return %r, %v : tensor<1x9x9x8xf32>, tensor<1x9x9x8xf32>
}

// -----

// The input transpose has another user: it stays, the output one still goes.
// CHECK-LABEL:  func.func @input_shared
// CHECK-NEXT:     %[[T:.*]] = glow.transpose %x {shuffle = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:     %[[W:.*]] = glow.reshape %w
// CHECK-NEXT:     %[[Y:.*]] = glow.convolution %x, %[[W]], %b {{.*}}layout = "NHWC"
// CHECK-NEXT:     func.return %[[Y]], %[[T]]
func.func @input_shared(%x: tensor<1x9x9x8xf32>, %w: tensor<8x1x5x5xf32>, %b: tensor<8xf32>) -> (tensor<1x9x9x8xf32>, tensor<1x8x9x9xf32>) {
  %t = glow.transpose %x {shuffle = array<i64: 0, 3, 1, 2>} : tensor<1x9x9x8xf32> -> tensor<1x8x9x9xf32>
  %y = glow.convolution %t, %w, %b {kernels = array<i64: 5, 5>, pads = array<i64: 2, 2, 2, 2>, group = 8 : i64} : (tensor<1x8x9x9xf32>, tensor<8x1x5x5xf32>, tensor<8xf32>) -> tensor<1x8x9x9xf32>
  %u = glow.transpose %y {shuffle = array<i64: 0, 2, 3, 1>} : tensor<1x8x9x9xf32> -> tensor<1x9x9x8xf32>
  func.return %u, %t : tensor<1x9x9x8xf32>, tensor<1x8x9x9xf32>
}

// -----

// Not rewritten: a user of the result wants NCHW (it would need a transpose of its own).
// CHECK-LABEL:  func.func @nchw_user
// CHECK:          glow.convolution {{.*}} {kernels = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, group = 8 : i64} : (tensor<1x8x9x9xf32>
// CHECK-NOT:      layout = "NHWC"
func.func @nchw_user(%x: tensor<1x9x9x8xf32>, %w: tensor<8x1x7x7xf32>, %b: tensor<8xf32>) -> (tensor<1x9x9x8xf32>, tensor<1x8x9x9xf32>) {
  %t = glow.transpose %x {shuffle = array<i64: 0, 3, 1, 2>} : tensor<1x9x9x8xf32> -> tensor<1x8x9x9xf32>
  %y = glow.convolution %t, %w, %b {kernels = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, group = 8 : i64} : (tensor<1x8x9x9xf32>, tensor<8x1x7x7xf32>, tensor<8xf32>) -> tensor<1x8x9x9xf32>
  %u = glow.transpose %y {shuffle = array<i64: 0, 2, 3, 1>} : tensor<1x8x9x9xf32> -> tensor<1x9x9x8xf32>
  func.return %u, %y : tensor<1x9x9x8xf32>, tensor<1x8x9x9xf32>
}

// -----

// Not rewritten: the input is not a transpose from NHWC (an NCHW producer).
// CHECK-LABEL:  func.func @nchw_input
// CHECK:          glow.convolution %x, %w, %b {kernels = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, group = 8 : i64} : (tensor<1x8x9x9xf32>
// CHECK-NEXT:     glow.transpose
func.func @nchw_input(%x: tensor<1x8x9x9xf32>, %w: tensor<8x1x7x7xf32>, %b: tensor<8xf32>) -> tensor<1x9x9x8xf32> {
  %y = glow.convolution %x, %w, %b {kernels = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, group = 8 : i64} : (tensor<1x8x9x9xf32>, tensor<8x1x7x7xf32>, tensor<8xf32>) -> tensor<1x8x9x9xf32>
  %u = glow.transpose %y {shuffle = array<i64: 0, 2, 3, 1>} : tensor<1x8x9x9xf32> -> tensor<1x9x9x8xf32>
  func.return %u : tensor<1x9x9x8xf32>
}

// -----

// Not rewritten: a grouped (not depthwise) convolution: 2 channels per group, its filter
// [8, 2, 3, 3] is not OHWI's bytes.
// CHECK-LABEL:  func.func @grouped
// CHECK:          glow.transpose
// CHECK-NEXT:     glow.convolution {{.*}} {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, group = 4 : i64} : (tensor<1x8x9x9xf32>
// CHECK-NEXT:     glow.transpose
func.func @grouped(%x: tensor<1x9x9x8xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x9x9x8xf32> {
  %t = glow.transpose %x {shuffle = array<i64: 0, 3, 1, 2>} : tensor<1x9x9x8xf32> -> tensor<1x8x9x9xf32>
  %y = glow.convolution %t, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, group = 4 : i64} : (tensor<1x8x9x9xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>) -> tensor<1x8x9x9xf32>
  %u = glow.transpose %y {shuffle = array<i64: 0, 2, 3, 1>} : tensor<1x8x9x9xf32> -> tensor<1x9x9x8xf32>
  func.return %u : tensor<1x9x9x8xf32>
}

// -----

// Not rewritten: the transpose before is not NHWC -> NCHW (it swaps H and W too).
// CHECK-LABEL:  func.func @other_shuffle
// CHECK:          glow.convolution {{.*}} {kernels = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, group = 8 : i64} : (tensor<1x8x9x9xf32>
func.func @other_shuffle(%x: tensor<1x9x9x8xf32>, %w: tensor<8x1x7x7xf32>, %b: tensor<8xf32>) -> tensor<1x9x9x8xf32> {
  %t = glow.transpose %x {shuffle = array<i64: 0, 3, 2, 1>} : tensor<1x9x9x8xf32> -> tensor<1x8x9x9xf32>
  %y = glow.convolution %t, %w, %b {kernels = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, group = 8 : i64} : (tensor<1x8x9x9xf32>, tensor<8x1x7x7xf32>, tensor<8xf32>) -> tensor<1x8x9x9xf32>
  %u = glow.transpose %y {shuffle = array<i64: 0, 2, 3, 1>} : tensor<1x8x9x9xf32> -> tensor<1x9x9x8xf32>
  func.return %u : tensor<1x9x9x8xf32>
}

// -----

// ConvNeXt's stage after a downsampling: the residual add of an NHWC branch and an NCHW
// value moves to NHWC (the NCHW one transposed once), the convolution reads it there;
// the add's other user gets it back in NCHW.
// CHECK-LABEL:  func.func @residual_add
// CHECK-NEXT:     %[[B:.*]] = glow.transpose %r {shuffle = array<i64: 0, 2, 3, 1>} : tensor<1x8x9x9xf32> -> tensor<1x9x9x8xf32>
// CHECK-NEXT:     %[[S:.*]] = glow.add %m, %[[B]] : tensor<1x9x9x8xf32>
// CHECK-NEXT:     %[[N:.*]] = glow.transpose %[[S]] {shuffle = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:     %[[W:.*]] = glow.reshape %w
// CHECK-NEXT:     %[[Y:.*]] = glow.convolution %[[S]], %[[W]], %b {{.*}}layout = "NHWC"
// CHECK-NEXT:     func.return %[[Y]], %[[N]]
func.func @residual_add(%m: tensor<1x9x9x8xf32>, %r: tensor<1x8x9x9xf32>, %w: tensor<8x1x7x7xf32>, %b: tensor<8xf32>) -> (tensor<1x9x9x8xf32>, tensor<1x8x9x9xf32>) {
  %t = glow.transpose %m {shuffle = array<i64: 0, 3, 1, 2>} : tensor<1x9x9x8xf32> -> tensor<1x8x9x9xf32>
  %s = glow.add %t, %r : tensor<1x8x9x9xf32>
  %y = glow.convolution %s, %w, %b {kernels = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, group = 8 : i64} : (tensor<1x8x9x9xf32>, tensor<8x1x7x7xf32>, tensor<8xf32>) -> tensor<1x8x9x9xf32>
  %u = glow.transpose %y {shuffle = array<i64: 0, 2, 3, 1>} : tensor<1x8x9x9xf32> -> tensor<1x9x9x8xf32>
  func.return %u, %s : tensor<1x9x9x8xf32>, tensor<1x8x9x9xf32>
}

// -----

// Not rewritten: the add's transposed operand has another user, so moving the add would
// transpose %r and remove no copy.
// CHECK-LABEL:  func.func @residual_add_shared
// CHECK-NEXT:     %[[T:.*]] = glow.transpose %m {shuffle = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:     %[[S:.*]] = glow.add %[[T]], %r : tensor<1x8x9x9xf32>
// CHECK-NEXT:     glow.convolution %[[S]], %w, %b {kernels = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, group = 8 : i64} : (tensor<1x8x9x9xf32>
func.func @residual_add_shared(%m: tensor<1x9x9x8xf32>, %r: tensor<1x8x9x9xf32>, %w: tensor<8x1x7x7xf32>, %b: tensor<8xf32>) -> (tensor<1x9x9x8xf32>, tensor<1x8x9x9xf32>) {
  %t = glow.transpose %m {shuffle = array<i64: 0, 3, 1, 2>} : tensor<1x9x9x8xf32> -> tensor<1x8x9x9xf32>
  %s = glow.add %t, %r : tensor<1x8x9x9xf32>
  %y = glow.convolution %s, %w, %b {kernels = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, group = 8 : i64} : (tensor<1x8x9x9xf32>, tensor<8x1x7x7xf32>, tensor<8xf32>) -> tensor<1x8x9x9xf32>
  %u = glow.transpose %y {shuffle = array<i64: 0, 2, 3, 1>} : tensor<1x8x9x9xf32> -> tensor<1x9x9x8xf32>
  func.return %u, %t : tensor<1x9x9x8xf32>, tensor<1x8x9x9xf32>
}
