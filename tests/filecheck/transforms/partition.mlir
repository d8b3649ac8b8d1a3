// RUN: glow-opt %s -p 'partition{num-devices=2 device-memory-kib=300}' | FileCheck %s --check-prefix=SPLIT
// RUN: glow-opt %s --pass-pipeline='builtin.module(partition{num-devices=2 device-memory-kib=300})' | FileCheck %s --check-prefix=SPLIT
// RUN: glow-opt %s -p 'partition{num-devices=4 device-memory-kib=4096 strategy=memory}' | FileCheck %s --check-prefix=FITS
// RUN: glow-opt %s -p 'partition{num-devices=1 device-memory-kib=4096}' | FileCheck %s --check-prefix=ONE
// RUN: glow-opt %s -p 'partition{num-devices=2 device-memory-kib=300 report=true}' 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: not glow-opt %s -p 'partition{num-devices=2 device-memory-kib=100}' 2>&1 | FileCheck %s --check-prefix=TOOBIG
// RUN: not glow-opt %s -p 'partition{num-devices=1 device-memory-kib=300}' 2>&1 | FileCheck %s --check-prefix=FEW
// RUN: not glow-opt %s -p 'partition{num-devices=1 device-memory-kib=300 strategy=load-balance}' 2>&1 | FileCheck %s --check-prefix=FEWLB
// RUN: not glow-opt %s -p 'partition{num-devices=0}' 2>&1 | FileCheck %s --check-prefix=BADCOUNT
// RUN: not glow-opt %s -p 'partition{strategy=fast}' 2>&1 | FileCheck %s --check-prefix=BADSTRATEGY

// Two products with 256 KiB of weights each: a 300 KiB device holds one, so the
// partitioner must split after the relu, each product on its own device.
// SPLIT-LABEL: func.func @chain
// SPLIT-SAME:    glow.part_devices = array<i64: 0, 1>, glow.part_bytes = array<i64: 265216, 264192>
// SPLIT:         %w1 = glow.constant dense<5.000000e-01> : tensor<256x256xf32>{{$}}
// SPLIT-NEXT:    %w2 = glow.constant dense<2.500000e-01> : tensor<256x256xf32>{{$}}
// SPLIT:         %a = glow.mat_mul %x, %w1 {glow.part = 0 : i64, glow.device = 0 : i64}
// SPLIT-NEXT:    %r = glow.relu %a {glow.part = 0 : i64, glow.device = 0 : i64}
// SPLIT-NEXT:    %b = glow.mat_mul %r, %w2 {glow.part = 1 : i64, glow.device = 1 : i64}

// With room for the whole graph, the memory strategy must not split (one part, device 0),
// whatever the number of devices.
// FITS-LABEL: func.func @chain
// FITS-SAME:    glow.part_devices = array<i64: 0>
// FITS:         %a = glow.mat_mul %x, %w1 {glow.part = 0 : i64, glow.device = 0 : i64}
// FITS-NEXT:    %r = glow.relu %a {glow.part = 0 : i64, glow.device = 0 : i64}
// FITS-NEXT:    %b = glow.mat_mul %r, %w2 {glow.part = 0 : i64, glow.device = 0 : i64}

// One device: one part, even load-balanced.
// ONE-LABEL: func.func @chain
// ONE-SAME:    glow.part_devices = array<i64: 0>
// ONE-NOT:     glow.part = 1

// REPORT: partition: @chain 2 part(s) on 2 device(s), 1024 bytes between parts

// TOOBIG: glow-opt: error: %a (glow.mat_mul) alone needs 264,192 bytes (0.3 MiB) (its weights, inputs and results); the largest device has 102,400 bytes free (0.1 MiB)
// FEW: glow-opt: error: the model needs 2 devices (its parts by memory); there are 1, with 307,200 bytes free: add devices or memory
// FEWLB: glow-opt: error: the model does not fit 1 device with 307,200 bytes free: add devices or memory
// BADCOUNT: glow-opt: error: invalid pass pipeline 'partition{num-devices=0}': partition: num-devices must be a whole number >= 1, got 0
// BADSTRATEGY: glow-opt: error: invalid pass pipeline 'partition{strategy=fast}': partition: strategy must be load-balance or memory, got 'fast'
func.func @chain(%x: tensor<1x256xf32>) -> tensor<1x256xf32> {
  %w1 = glow.constant dense<0.5> : tensor<256x256xf32>
  %w2 = glow.constant dense<0.25> : tensor<256x256xf32>
  %a = glow.mat_mul %x, %w1 : (tensor<1x256xf32>, tensor<256x256xf32>) -> tensor<1x256xf32>
  %r = glow.relu %a : tensor<1x256xf32>
  %b = glow.mat_mul %r, %w2 : (tensor<1x256xf32>, tensor<256x256xf32>) -> tensor<1x256xf32>
  func.return %b : tensor<1x256xf32>
}

// A graph with no ops (it returns its input) has no parts.
// SPLIT-LABEL: func.func @no_ops
// SPLIT-SAME:    glow.part_devices = array<i64>, glow.part_bytes = array<i64>
func.func @no_ops(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
