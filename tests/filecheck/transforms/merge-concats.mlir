// RUN: glow-opt %s --split-input-file --merge-concats | FileCheck %s

// A single-use concat on the same dim is flattened into its user.
// CHECK-LABEL: func.func @flatten
// CHECK-NEXT:    %[[C:.*]] = glow.concat %a, %b, %c {dim = 1 : i64} : (tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @flatten(%a: tensor<2x1xf32>, %b: tensor<2x2xf32>, %c: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %i = glow.concat %b, %c {dim = -1 : i64} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  %o = glow.concat %a, %i {dim = 1 : i64} : (tensor<2x1xf32>, tensor<2x5xf32>) -> tensor<2x6xf32>
  func.return %o : tensor<2x6xf32>
}

// -----

// Must not fire: the inner concat has another user, or concatenates along another dim.
// CHECK-LABEL: func.func @no_flatten
// CHECK-NEXT:    %[[I:.*]] = glow.concat %b, %c {dim = 1 : i64}
// CHECK-NEXT:    %[[O:.*]] = glow.concat %a, %[[I]] {dim = 1 : i64}
// CHECK-NEXT:    %[[J:.*]] = glow.concat %a, %a {dim = 0 : i64}
// CHECK-NEXT:    %[[P:.*]] = glow.concat %[[J]], %[[J]] {dim = 1 : i64}
// CHECK-NEXT:    func.return %[[O]], %[[I]], %[[P]]
func.func @no_flatten(%a: tensor<2x1xf32>, %b: tensor<2x2xf32>, %c: tensor<2x3xf32>) -> (tensor<2x6xf32>, tensor<2x5xf32>, tensor<4x2xf32>) {
  %i = glow.concat %b, %c {dim = 1 : i64} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  %o = glow.concat %a, %i {dim = 1 : i64} : (tensor<2x1xf32>, tensor<2x5xf32>) -> tensor<2x6xf32>
  %j = glow.concat %a, %a {dim = 0 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<4x1xf32>
  %p = glow.concat %j, %j {dim = 1 : i64} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  func.return %o, %i, %p : tensor<2x6xf32>, tensor<2x5xf32>, tensor<4x2xf32>
}

// -----

// A slice taking exactly one concat input is that input; a block within one input is a
// slice of it (start shifted by the input's offset, 1 + 2 = 3 along dim 1).
// CHECK-LABEL: func.func @slice_of_concat
// CHECK-NEXT:    %[[C:.*]] = glow.concat %a, %b, %c {dim = 1 : i64}
// CHECK-NEXT:    %[[S:.*]] = glow.slice %c {start = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<1x2xf32>
// CHECK-NEXT:    func.return %b, %[[S]], %[[C]]
func.func @slice_of_concat(%a: tensor<2x1xf32>, %b: tensor<2x2xf32>, %c: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<1x2xf32>, tensor<2x6xf32>) {
  %k = glow.concat %a, %b, %c {dim = 1 : i64} : (tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %s1 = glow.slice %k {start = array<i64: 0, 1>} : tensor<2x6xf32> -> tensor<2x2xf32>
  %s2 = glow.slice %k {start = array<i64: 1, 4>} : tensor<2x6xf32> -> tensor<1x2xf32>
  func.return %s1, %s2, %k : tensor<2x2xf32>, tensor<1x2xf32>, tensor<2x6xf32>
}

// -----

// Must not fire: the slice spans two inputs.
// CHECK-LABEL: func.func @slice_across_inputs
// CHECK-NEXT:    %[[C:.*]] = glow.concat %a, %b
// CHECK-NEXT:    %[[S:.*]] = glow.slice %[[C]] {start = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[S]]
func.func @slice_across_inputs(%a: tensor<2x1xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %k = glow.concat %a, %b {dim = 1 : i64} : (tensor<2x1xf32>, tensor<2x2xf32>) -> tensor<2x3xf32>
  %s = glow.slice %k {start = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  func.return %s : tensor<2x2xf32>
}

// -----

// Adjacent slices covering all of %x are %x; adjacent slices covering part merge into one
// slice and the remaining input stays; the concat of one input disappears.
// CHECK-LABEL: func.func @concat_of_slices
// CHECK-NEXT:    %[[M:.*]] = glow.slice %x {start = array<i64: 0, 1>} : tensor<2x6xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[C:.*]] = glow.concat %[[M]], %y {dim = 1 : i64} : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    func.return %x, %[[C]]
func.func @concat_of_slices(%x: tensor<2x6xf32>, %y: tensor<2x1xf32>) -> (tensor<2x6xf32>, tensor<2x5xf32>) {
  %a = glow.slice %x {start = array<i64: 0, 0>} : tensor<2x6xf32> -> tensor<2x1xf32>
  %b = glow.slice %x {start = array<i64: 0, 1>} : tensor<2x6xf32> -> tensor<2x3xf32>
  %c = glow.slice %x {start = array<i64: 0, 4>} : tensor<2x6xf32> -> tensor<2x2xf32>
  %all = glow.concat %a, %b, %c {dim = 1 : i64} : (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
  %d = glow.slice %x {start = array<i64: 0, 1>} : tensor<2x6xf32> -> tensor<2x1xf32>
  %e = glow.slice %x {start = array<i64: 0, 2>} : tensor<2x6xf32> -> tensor<2x3xf32>
  %part = glow.concat %d, %e, %y {dim = 1 : i64} : (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  func.return %all, %part : tensor<2x6xf32>, tensor<2x5xf32>
}

// -----

// Must not fire: a gap between the slices, the slices out of order, slices adjacent along
// dim 1 but concatenated along dim 0, and slices of different tensors.
// CHECK-LABEL: func.func @slices_not_adjacent
// CHECK-NEXT:    %[[A:.*]] = glow.slice %x {start = array<i64: 0, 0>}
// CHECK-NEXT:    %[[B:.*]] = glow.slice %x {start = array<i64: 0, 3>}
// CHECK-NEXT:    glow.concat %[[A]], %[[B]] {dim = 1 : i64}
// CHECK-NEXT:    %[[C:.*]] = glow.slice %x {start = array<i64: 0, 2>}
// CHECK-NEXT:    %[[D:.*]] = glow.slice %x {start = array<i64: 0, 0>}
// CHECK-NEXT:    glow.concat %[[C]], %[[D]] {dim = 1 : i64}
// CHECK-NEXT:    %[[E:.*]] = glow.slice %x {start = array<i64: 0, 0>}
// CHECK-NEXT:    %[[F:.*]] = glow.slice %x {start = array<i64: 0, 3>}
// CHECK-NEXT:    glow.concat %[[E]], %[[F]] {dim = 0 : i64}
// CHECK-NEXT:    %[[G:.*]] = glow.slice %x {start = array<i64: 0, 0>}
// CHECK-NEXT:    %[[H:.*]] = glow.slice %y {start = array<i64: 0, 2>}
// CHECK-NEXT:    glow.concat %[[G]], %[[H]] {dim = 1 : i64}
// CHECK-NEXT:    func.return
func.func @slices_not_adjacent(%x: tensor<2x6xf32>, %y: tensor<2x6xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x3xf32>, tensor<2x4xf32>) {
  %a = glow.slice %x {start = array<i64: 0, 0>} : tensor<2x6xf32> -> tensor<2x2xf32>
  %b = glow.slice %x {start = array<i64: 0, 3>} : tensor<2x6xf32> -> tensor<2x2xf32>
  %gap = glow.concat %a, %b {dim = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  %c = glow.slice %x {start = array<i64: 0, 2>} : tensor<2x6xf32> -> tensor<2x2xf32>
  %d = glow.slice %x {start = array<i64: 0, 0>} : tensor<2x6xf32> -> tensor<2x2xf32>
  %swapped = glow.concat %c, %d {dim = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  %e = glow.slice %x {start = array<i64: 0, 0>} : tensor<2x6xf32> -> tensor<2x3xf32>
  %f = glow.slice %x {start = array<i64: 0, 3>} : tensor<2x6xf32> -> tensor<2x3xf32>
  %other_dim = glow.concat %e, %f {dim = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %g = glow.slice %x {start = array<i64: 0, 0>} : tensor<2x6xf32> -> tensor<2x2xf32>
  %h = glow.slice %y {start = array<i64: 0, 2>} : tensor<2x6xf32> -> tensor<2x2xf32>
  %two = glow.concat %g, %h {dim = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  func.return %gap, %swapped, %other_dim, %two : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x3xf32>, tensor<2x4xf32>
}

// -----

// Must not fire: adjacent along dim 1 but taking different rows.
// CHECK-LABEL: func.func @different_rows
// CHECK-COUNT-2: glow.slice
// CHECK-NEXT:    glow.concat
func.func @different_rows(%x: tensor<2x6xf32>) -> tensor<1x4xf32> {
  %a = glow.slice %x {start = array<i64: 0, 0>} : tensor<2x6xf32> -> tensor<1x2xf32>
  %b = glow.slice %x {start = array<i64: 1, 2>} : tensor<2x6xf32> -> tensor<1x2xf32>
  %c = glow.concat %a, %b {dim = 1 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x4xf32>
  func.return %c : tensor<1x4xf32>
}

// -----

// A concat of one input is the input.
// CHECK-LABEL: func.func @single
// CHECK-NEXT:    func.return %x
func.func @single(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = glow.concat %x {dim = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}
