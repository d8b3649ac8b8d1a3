func.func @f(%x: tensor<4xi32>) {
  // expected-error @next {{operand}}
  %0 = glow.sigmoid %x : tensor<4xi32>
  func.return
}
