// RUN: glow-opt %s --split-input-file --convert-scf-while-to-cf | FileCheck %s

// An scf.while: the block before branches to the before region's block with the initial
// values, which branches to the body or past the loop with what scf.condition passes on;
// the body branches back with what it yields; the results are the last block's arguments.
// CHECK-LABEL: func.func @sum(%limit: i32) -> i32 {
// CHECK:         cf.br ^[[BEFORE:.*]](%z, %z : i32, i32)
// CHECK-NEXT:  ^[[BEFORE]](%i: i32, %s: i32):
// CHECK-NEXT:    %lt = arith.cmpi slt, %i, %limit : i32
// CHECK-NEXT:    cf.cond_br %lt, ^[[AFTER:.*]](%i, %s : i32, i32), ^[[END:.*]](%i, %s : i32, i32)
// CHECK-NEXT:  ^[[AFTER]](%j: i32, %t: i32):
// CHECK-NEXT:    %t2 = arith.addi %t, %j : i32
// CHECK-NEXT:    %j2 = arith.addi %j, %one : i32
// CHECK-NEXT:    cf.br ^[[BEFORE]](%j2, %t2 : i32, i32)
// CHECK-NEXT:  ^[[END]](%r: i32, %r_1: i32):
// CHECK-NEXT:    func.return %r_1 : i32
func.func @sum(%limit: i32) -> i32 {
  %z = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %r:2 = scf.while (%i = %z, %s = %z) : (i32, i32) -> (i32, i32) {
    %lt = arith.cmpi slt, %i, %limit : i32
    scf.condition(%lt) %i, %s : i32, i32
  } do {
  ^bb0(%j: i32, %t: i32):
    %t2 = arith.addi %t, %j : i32
    %j2 = arith.addi %j, %one : i32
    scf.yield %j2, %t2 : i32, i32
  }
  func.return %r#1 : i32
}

// -----

// Must not fire: scf.for and scf.if are convert-scf-to-cf's; they stay.
// CHECK-LABEL: func.func @for_and_if
// CHECK:         scf.for
// CHECK:           scf.if
func.func @for_and_if(%c: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.if %c {
    }
  }
  func.return
}
