// The seed's GEMM class: FP8 on 64 tiles, compiled with ipu-compile (the translation runs it on
// a module without an ipu_tile program): the selected plan's grid [1, 4, 16, 1] gives 4 row
// blocks of 63 rows (the last padded from 61) and 16 column blocks of 32. Each row block's
// K = 256 is converted in 16 chunks of one 16-column group, one per tile of its grid row
// (cast to FP8 and rearranged to AMP-left once), each B column block in 4 chunks of 64 K rows,
// one per tile of its grid column; then
// lowered to tiles, placed, exchange-lowered and written as a package.
// RUN: env RUST_LOG=info ipu-translate --ipu-to-package %s -o %t.ipuexe --tiles=64 --precision=fp8 2>&1 | FileCheck %s

// CHECK: lowered graph for package construction logical_shards={{[0-9]+}} exchange_phases=1
// CHECK-DAG: planned kernel specialization kernel=gemm_f8_interleaved_k256_c32_r63
// CHECK-DAG: planned kernel specialization kernel=rearrange_amp_left_f8_o0_r61_p63_c16_p16
// CHECK-DAG: planned kernel specialization kernel=cast_f16_f8_n976
// CHECK-DAG: planned kernel specialization kernel=rearrange_amp_right_f8_o0_r64_p64_c32_p32
// CHECK: allocated package support memory linked_end=317624 profile_bytes=32 exchange_table_bytes={{[0-9]+}} host_code_bytes=436 generated_code_bytes={{[0-9]+}} code_address={{[0-9]+}} standard_ranges=[({{[0-9]+}}, 524288)]
// CHECK: costed final placed program final_cycles={{[0-9]+}} final_exchange={{[0-9]+}}
// CHECK: writing application package tiles=1472
// CHECK: application package written

func.func @gemm(%x: tensor<250x256xf16>, %w: tensor<256x512xf16>) -> tensor<250x512xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<250x256xf16>, tensor<256x512xf16>) -> tensor<250x512xf16>
  return %y : tensor<250x512xf16>
}
