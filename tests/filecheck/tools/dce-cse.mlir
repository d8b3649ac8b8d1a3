// xDSL's own `dce` and `cse` work on glow ops (every glow op is Pure): they fire on dead
// and duplicate ops, and do not fire on used results, on ops that differ in an attribute,
// an operand or a result type, or on a multi-result op with one result used.
//
// RUN: glow-opt %s --split-input-file --dce | FileCheck %s --check-prefix=DCE
// RUN: glow-opt %s --split-input-file --cse | FileCheck %s --check-prefix=CSE

// DCE-LABEL: func.func @dead_chain
// DCE-NEXT:    %used = glow.relu %x : tensor<8xf32>
// DCE-NEXT:    func.return %used : tensor<8xf32>
func.func @dead_chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = glow.constant dense<2.0> : tensor<8xf32>
  %s = glow.splat {value = 1.0 : f32} : tensor<8xf32>
  %m = glow.mul %c, %s : tensor<8xf32>
  %v, %i = glow.top_k %m {k = 2 : i64} : (tensor<8xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  %used = glow.relu %x : tensor<8xf32>
  func.return %used : tensor<8xf32>
}

// -----

// One result of glow.top_k is used: the op stays.
// DCE-LABEL: func.func @one_result_used
// DCE-NEXT:    %v, %i = glow.top_k %x {k = 2 : i64}
// DCE-NEXT:    func.return %i
func.func @one_result_used(%x: tensor<8xf32>) -> tensor<2xi64> {
  %v, %i = glow.top_k %x {k = 2 : i64} : (tensor<8xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  func.return %i : tensor<2xi64>
}

// -----

// Duplicates merge: same op, operands, attributes and types (constants too).
// CSE-LABEL: func.func @duplicates
// CSE-NEXT:    %c = glow.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CSE-NEXT:    %a = glow.add %x, %c : tensor<2xf32>
// CSE-NEXT:    %p = glow.pad %a {pads = array<i64: 1, 1>} : tensor<2xf32> -> tensor<4xf32>
// CSE-NEXT:    %v, %i = glow.top_k %p {k = 2 : i64}
// CSE-NEXT:    %s = glow.add %p, %p : tensor<4xf32>
// CSE-NEXT:    %t = glow.add %v, %v : tensor<2xf32>
// CSE-NEXT:    func.return %s, %t, %i, %i
func.func @duplicates(%x: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>, tensor<2xi64>, tensor<2xi64>) {
  %c = glow.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c2 = glow.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %a = glow.add %x, %c : tensor<2xf32>
  %a2 = glow.add %x, %c2 : tensor<2xf32>
  %p = glow.pad %a {pads = array<i64: 1, 1>} : tensor<2xf32> -> tensor<4xf32>
  %p2 = glow.pad %a2 {pads = array<i64: 1, 1>} : tensor<2xf32> -> tensor<4xf32>
  %v, %i = glow.top_k %p {k = 2 : i64} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  %v2, %i2 = glow.top_k %p2 {k = 2 : i64} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  %s = glow.add %p, %p2 : tensor<4xf32>
  %t = glow.add %v, %v2 : tensor<2xf32>
  func.return %s, %t, %i, %i2 : tensor<4xf32>, tensor<2xf32>, tensor<2xi64>, tensor<2xi64>
}

// -----

// Near-duplicates stay: another attribute value, operand order, constant or result type.
// CSE-LABEL: func.func @distinct
// CSE-NEXT:    %p1 = glow.pad %x {pads = array<i64: 1, 1>}
// CSE-NEXT:    %p2 = glow.pad %x {pads = array<i64: 2, 0>}
// CSE-NEXT:    %p3 = glow.pad %x {pads = array<i64: 1, 1>, mode = "edge"}
// CSE-NEXT:    %s1 = glow.sub %x, %y
// CSE-NEXT:    %s2 = glow.sub %y, %x
// CSE-NEXT:    %c1 = glow.constant dense<1.000000e+00> : tensor<2xf32>
// CSE-NEXT:    %c2 = glow.constant dense<2.000000e+00> : tensor<2xf32>
// CSE-NEXT:    %k1 = glow.convert_to %x : tensor<2xf32> -> tensor<2xf16>
// CSE-NEXT:    %k2 = glow.convert_to %x : tensor<2xf32> -> tensor<2xi32>
// CSE-NEXT:    func.return
func.func @distinct(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf16>, tensor<2xi32>) {
  %p1 = glow.pad %x {pads = array<i64: 1, 1>} : tensor<2xf32> -> tensor<4xf32>
  %p2 = glow.pad %x {pads = array<i64: 2, 0>} : tensor<2xf32> -> tensor<4xf32>
  %p3 = glow.pad %x {pads = array<i64: 1, 1>, mode = "edge"} : tensor<2xf32> -> tensor<4xf32>
  %s1 = glow.sub %x, %y : tensor<2xf32>
  %s2 = glow.sub %y, %x : tensor<2xf32>
  %c1 = glow.constant dense<1.0> : tensor<2xf32>
  %c2 = glow.constant dense<2.0> : tensor<2xf32>
  %k1 = glow.convert_to %x : tensor<2xf32> -> tensor<2xf16>
  %k2 = glow.convert_to %x : tensor<2xf32> -> tensor<2xi32>
  func.return %p1, %p2, %p3, %s1, %s2, %c1, %c2, %k1, %k2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf16>, tensor<2xi32>
}
