// RUN: glow-opt %s --convert-loops-to-llvm | filecheck %s

// An scf.while (glow_ir.loop's code) becomes blocks and branches through the whole
// convert-loops-to-llvm pipeline (convert-scf-while-to-cf first: xDSL's
// convert-scf-to-cf has none for it).
// CHECK-LABEL: llvm.func @sum(%limit: i32) -> i32 {
// CHECK:         llvm.br ^[[BEFORE:.*]](%z, %z : i32, i32)
// CHECK-NEXT:  ^[[BEFORE]](%i: i32, %s: i32):
// CHECK-NEXT:    %lt = llvm.icmp "slt" %i, %limit : i32
// CHECK-NEXT:    llvm.cond_br %lt, ^[[AFTER:.*]](%i, %s : i32, i32), ^[[END:.*]](%i, %s : i32, i32)
// CHECK-NEXT:  ^[[AFTER]](%j: i32, %t: i32):
// CHECK:         llvm.br ^[[BEFORE]](%j2, %t2 : i32, i32)
// CHECK-NEXT:  ^[[END]](%r: i32, %r_1: i32):
// CHECK-NEXT:    llvm.return %r_1 : i32
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
