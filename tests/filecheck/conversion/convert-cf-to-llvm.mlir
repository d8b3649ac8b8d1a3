// RUN: glow-opt %s --split-input-file --convert-cf-to-llvm | filecheck %s
// RUN: glow-opt %s --split-input-file --convert-cf-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts | filecheck %s --check-prefix=ALL

// The loop convert-scf-to-cf makes: branches become llvm branches, the index block
// arguments i64; casts connect them to the arith ops not converted yet, and vanish once
// everything is converted (ALL).
// CHECK-LABEL: func.func @loop(%n: index) -> index {
// CHECK:         llvm.br ^head(%{{.*}}, %{{.*}} : i64, i64)
// CHECK-NEXT:  ^head(%i: i64, %acc: i64):
// CHECK-NEXT:    %i_1 = builtin.unrealized_conversion_cast %i : i64 to index
// CHECK-NEXT:    %acc_1 = builtin.unrealized_conversion_cast %acc : i64 to index
// CHECK-NEXT:    %c = arith.cmpi slt, %i_1, %n : index
// CHECK:         llvm.cond_br %c, ^body, ^exit(%{{.*}} : i64)
// CHECK:         llvm.br ^head(%{{.*}}, %{{.*}} : i64, i64)
// CHECK-NEXT:  ^exit(%r: i64):
// CHECK-NOT:   cf.

// ALL-LABEL: llvm.func @loop(%n: i64) -> i64 {
// ALL-NEXT:    %z = llvm.mlir.constant(0) : i64
// ALL-NEXT:    llvm.br ^head(%z, %z : i64, i64)
// ALL-NEXT:  ^head(%i: i64, %acc: i64):
// ALL-NEXT:    %c = llvm.icmp "slt" %i, %n : i64
// ALL-NEXT:    llvm.cond_br %c, ^body, ^exit(%acc : i64)
// ALL-NEXT:  ^body:
// ALL-NEXT:    %one = llvm.mlir.constant(1) : i64
// ALL-NEXT:    %next = llvm.add %i, %one : i64
// ALL-NEXT:    %a = llvm.add %acc, %i : i64
// ALL-NEXT:    llvm.br ^head(%next, %a : i64, i64)
// ALL-NEXT:  ^exit(%r: i64):
// ALL-NEXT:    llvm.return %r : i64
// ALL-NOT:   unrealized_conversion_cast
func.func @loop(%n: index) -> index {
  %z = arith.constant 0 : index
  cf.br ^head(%z, %z : index, index)
^head(%i: index, %acc: index):
  %c = arith.cmpi slt, %i, %n : index
  cf.cond_br %c, ^body, ^exit(%acc : index)
^body:
  %one = arith.constant 1 : index
  %next = arith.addi %i, %one : index
  %a = arith.addi %acc, %i : index
  cf.br ^head(%next, %a : index, index)
^exit(%r: index):
  func.return %r : index
}

// -----

// Blocks of other types keep them; a function without branches is untouched.
// CHECK-LABEL: func.func @straight(%x: f32) -> f32 {
// CHECK-NEXT:    func.return %x : f32
// ALL-LABEL: llvm.func @straight(%x: f32) -> f32 {
func.func @straight(%x: f32) -> f32 {
  func.return %x : f32
}
