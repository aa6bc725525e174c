// The planning passes print their defaults in one place (--dump-pass-pipeline) and are listed
// with their options.
// RUN: ipu-opt %s --dump-pass-pipeline -p 'builtin.module(ipu-lower-mid, ipu-select-finalist)' -o /dev/null 2>&1 | FileCheck %s
// RUN: ipu-opt --list-passes | FileCheck %s --check-prefix=LIST

// CHECK: builtin.module(
// CHECK-NEXT:   ipu-lower-mid{target=c600 tiles=1472 active-tiles= precision=f16 fp8-scale= calibration= weight-memory=auto beam-width=8 candidates-per-op=24 finalists=4 memory-budget= constraints= constraints-file= dump-plans=},
// CHECK-NEXT:   ipu-select-finalist{finalists=4 candidates-per-op=24 mappings=11}
// CHECK-NEXT: )

// LIST-DAG: ipu-lower-mid
// LIST-DAG: ipu-select-finalist

func.func @empty() {
  return
}
