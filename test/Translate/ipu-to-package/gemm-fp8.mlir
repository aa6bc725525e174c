// The seed's GEMM class: FP8 on 64 tiles, compiled with ipu-compile (the translation runs it on
// a module without an ipu_tile program), then lowered to tiles, placed, exchange-lowered and
// written as a package. Both operands come from the host and K = 256, N = 512 are whole
// 16-groups, so the split GEMM lowering takes it on the selected plan's grid [1, 4, 16, 1]:
// row blocks of 63, 63, 62 and 62 rows (no padding) and 16 column blocks of 32. The host
// encodes A and B in FP8 as it streams them into AMP order, so no kernel casts or packs; one
// exchange phase gathers the panels. The selected finalist's refined estimate is exactly the
// placed program's final cost.
// RUN: env RUST_LOG=info ipu-translate --ipu-to-package %s -o %t.ipuexe --tiles=64 --precision=fp8 2>&1 | FileCheck %s
// The same GEMM with K = 200 (not a multiple of 16, see Inputs/gemm_fp8_k200.mlir) is a split
// GEMM with K padded to 208 on the host, and is packaged too: no casts or packs on the device.
// RUN: env RUST_LOG=info ipu-translate --ipu-to-package %S/Inputs/gemm_fp8_k200.mlir -o %t.k200.ipuexe --tiles=64 --precision=fp8 2>&1 | FileCheck %s --check-prefix=OLD

// CHECK: scheduled operator-plan finalist finalist=0 mapped={{true|false}} analytical_cycles={{[0-9]+}} analytical_exchange_cycles={{[0-9]+}} scheduled_exchange_cycles=[[EXCHANGE:[0-9]+]] refined_cycles=[[REFINED:[0-9]+]]
// CHECK: selected physically scheduled operator-plan finalist selected=0
// CHECK: split GEMM grid op=0 grid=[1, 4, 16, 1] panels=1 k_panel=256
// CHECK-NEXT: lowered graph for package construction logical_shards={{[0-9]+}} exchange_phases=1
// CHECK-NOT: cast_f16
// CHECK-NOT: rearrange_
// CHECK: planned kernel specialization kernel=copy_b1008
// CHECK-NEXT: planned kernel specialization kernel=copy_b992
// CHECK-NEXT: planned kernel specialization kernel=copy_b2048
// CHECK-NEXT: planned kernel specialization kernel=gemm_f8_interleaved_k256_c32_r62_r63
// CHECK-NOT: planned kernel specialization
// CHECK: allocated package support memory linked_end=317624 profile_bytes=32 exchange_table_bytes={{[0-9]+}} host_code_bytes=436 generated_code_bytes={{[0-9]+}} code_address={{[0-9]+}} standard_ranges=[({{[0-9]+}}, 524288)]
// CHECK: optimized exchange placement moved_buffers={{[0-9]+}} rescheduled_phases=0 phases=1
// CHECK: costed final placed program final_cycles=[[REFINED]] final_exchange=[[EXCHANGE]]
// CHECK: writing application package tiles=1472
// CHECK: application package written

// K = 200: the plan's 4 row blocks of 63 rows (the last padded from 61) and 16 column blocks of
// 32. Each row block's K is converted in chunks of one 16-column group, one per tile of its
// grid row (cast to FP8 and rearranged to AMP-left once): twelve whole groups and a last one
// of 8 columns padded to 16 (K = 208 for the GEMM). Each B column block is converted in 4
// chunks of K rows, one per tile of its grid column: three of 52 and a last of 44, padded.
// OLD: split GEMM grid op=0 grid=[1, 4, 16, 1] panels=1 k_panel=208
// OLD: lowered graph for package construction logical_shards={{[0-9]+}} exchange_phases=1
// OLD-NOT: kernel=cast_
// OLD-NOT: kernel=rearrange_
// OLD: planned kernel specialization kernel=gemm_f8_interleaved_k208_c32_r62_r63
// OLD: allocated package support memory linked_end=317624 profile_bytes=32 exchange_table_bytes={{[0-9]+}} host_code_bytes=436 generated_code_bytes={{[0-9]+}} code_address={{[0-9]+}} standard_ranges=[({{[0-9]+}}, 524288)]
// OLD: costed final placed program final_cycles={{[0-9]+}} final_exchange={{[0-9]+}}
// OLD: writing application package tiles=1472
// OLD: application package written

func.func @gemm(%x: tensor<250x256xf16>, %w: tensor<256x512xf16>) -> tensor<250x512xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<250x256xf16>, tensor<256x512xf16>) -> tensor<250x512xf16>
  return %y : tensor<250x512xf16>
}
