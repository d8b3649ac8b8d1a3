// RUN: glow-opt %s --split-input-file --fold-arithmetic-chains | FileCheck %s

// (x + 1) + 2 -> x + 3 ; (x * 2) * 4 -> x * 8 ; (x - 1) + c with the constant on the left.
// CHECK-LABEL: func.func @chains
// CHECK:         %[[C3:.*]] = glow.constant dense<3.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[A:.*]] = glow.add %x, %[[C3]]
// CHECK-NEXT:    %[[C8:.*]] = glow.constant dense<8.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[M:.*]] = glow.mul %[[A]], %[[C8]]
// CHECK:         func.return %[[M]]
func.func @chains(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = glow.constant dense<1.0> : tensor<4xf32>
  %two = glow.constant dense<2.0> : tensor<4xf32>
  %four = glow.constant dense<4.0> : tensor<4xf32>
  %0 = glow.add %x, %one : tensor<4xf32>
  %1 = glow.add %two, %0 : tensor<4xf32>
  %2 = glow.mul %1, %two : tensor<4xf32>
  %3 = glow.mul %2, %four : tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// x - 1 - 2 -> x + (-3); (x / 2) / 4 -> x / 8.
// CHECK-LABEL: func.func @sub_div
// CHECK:         glow.constant dense<-3.000000e+00>
// CHECK-NEXT:    glow.add %x, %{{.*}} : tensor<2xf32>
// CHECK-NOT:     glow.sub
// CHECK:         glow.constant dense<8.000000e+00>
// CHECK-NEXT:    glow.div %{{.*}}, %{{.*}} : tensor<2xf32>
// CHECK-NOT:     glow.div
func.func @sub_div(%x: tensor<2xf32>) -> tensor<2xf32> {
  %one = glow.constant dense<1.0> : tensor<2xf32>
  %two = glow.constant dense<2.0> : tensor<2xf32>
  %four = glow.constant dense<4.0> : tensor<2xf32>
  %0 = glow.sub %x, %one : tensor<2xf32>
  %1 = glow.sub %0, %two : tensor<2xf32>
  %2 = glow.div %1, %two : tensor<2xf32>
  %3 = glow.div %2, %four : tensor<2xf32>
  func.return %3 : tensor<2xf32>
}

// -----

// Must not fire: the inner result has a second use; mixed families; c - x.
// CHECK-LABEL: func.func @no_fold
// CHECK:         %[[A:.*]] = glow.add %x, %one
// CHECK:         %[[B:.*]] = glow.add %[[A]], %two
// CHECK:         %[[M:.*]] = glow.mul %[[B]], %two
// CHECK:         %[[S:.*]] = glow.sub %two, %x
// CHECK:         %[[T:.*]] = glow.sub %[[S]], %one
func.func @no_fold(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %one = glow.constant dense<1.0> : tensor<2xf32>
  %two = glow.constant dense<2.0> : tensor<2xf32>
  %a = glow.add %x, %one : tensor<2xf32>
  %b = glow.add %a, %two : tensor<2xf32>
  %m = glow.mul %b, %two : tensor<2xf32>
  %s = glow.sub %two, %x : tensor<2xf32>
  %t = glow.sub %s, %one : tensor<2xf32>
  func.return %a, %m, %t, %b : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
