// Bad calibration files are diagnosed at the module, naming the file and the problem.
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.missing.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: echo '{"arg0": 1.0,' > %t.syntax.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.syntax.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: echo '[1.0, 2.0]' > %t.array.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.array.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=ARRAY
// RUN: echo '{"arg0": "%S/Inputs/calibration/bad-f64.npy"}' > %t.dtype.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.dtype.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: echo '{"arg0": "no-such-samples.npy"}' > %t.nonpy.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.nonpy.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONPY
// RUN: echo '{"arg0": {"npy": "%S/Inputs/calibration/empty.npy"}}' > %t.empty.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.empty.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: echo '{"arg2": 1.0}' > %t.unknown.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.unknown.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: echo '{"@gemm": {"%%arg1": 1.0}}' > %t.unknown-in.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.unknown-in.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN-IN
// RUN: echo '{"@other": {"arg0": 1.0}}' > %t.function.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.function.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FUNCTION
// RUN: echo '{"input": 1.0}' > %t.key.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.key.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=KEY
// RUN: echo '{"arg0": 1.0, "0": 2.0}' > %t.twice.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.twice.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: echo '{"arg0": -2.5}' > %t.negative.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.negative.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// JSON has no infinity: "inf" / "NaN" strings stand for it; 1e999 does not parse.
// RUN: echo '{"arg0": {"max_abs": "inf"}}' > %t.infinite.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.infinite.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=INFINITE
// RUN: echo '{"arg0": 1e999}' > %t.overflow.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.overflow.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// RUN: echo '{"arg0": "%S/Inputs/calibration/bad-inf.npy"}' > %t.infinite-sample.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.infinite-sample.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=INFINITE-SAMPLE
// RUN: echo '{"arg0": [1, 2]}' > %t.form.json
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%t.form.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORM

// MISSING: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.missing.json': cannot be read: No such file or directory
// SYNTAX: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.syntax.json': is not valid JSON: EOF while parsing a value at line 2
// ARRAY: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.array.json': expected a JSON object of arguments
// DTYPE: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.dtype.json': 'arg0': samples {{.*}}bad-f64.npy: dtype '<f8' is not supported (little-endian '<f4' or '<f2')
// NONPY: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.nonpy.json': 'arg0': samples reading {{.*}}no-such-samples.npy: No such file or directory
// EMPTY: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.empty.json': 'arg0': samples {{.*}}empty.npy: holds no samples
// UNKNOWN: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.unknown.json': 'arg2' names argument 2, but no planned function has more than 2 arguments
// UNKNOWN-IN: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.unknown-in.json': '@gemm': '%arg1' names argument 1, but @gemm has 1 argument
// FUNCTION: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.function.json': '@other': no planned function is named @other
// KEY: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.key.json': 'input' does not name an argument (use 'argN', '%argN' or the position 'N')
// TWICE: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.twice.json': argument 0 is given twice ('0' and 'arg0')
// NEGATIVE: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.negative.json': 'arg0': max_abs -2.5 is negative
// INFINITE: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.infinite.json': 'arg0': max_abs inf is not finite
// OVERFLOW: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.overflow.json': is not valid JSON: number out of range
// INFINITE-SAMPLE: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.infinite-sample.json': 'arg0': samples {{.*}}bad-inf.npy: holds a non-finite sample (inf)
// FORM: error: 'builtin.module' op ipu-lower-mid: calibration file '{{.*}}.form.json': 'arg0': expected a max_abs number, a .npy path, {"max_abs": number} or {"npy": path}, found [1,2]

func.func @gemm(%x: tensor<64x128xf16>) -> tensor<64x256xf16> {
  %w = arith.constant dense<0.5> : tensor<128x256xf16>
  %h = "ipu.matmul"(%x, %w) : (tensor<64x128xf16>, tensor<128x256xf16>) -> tensor<64x256xf16>
  return %h : tensor<64x256xf16>
}

func.func @two(%x: tensor<64x128xf16>, %w: tensor<128x64xf16>) -> tensor<64x64xf16> {
  %h = "ipu.matmul"(%x, %w) : (tensor<64x128xf16>, tensor<128x64xf16>) -> tensor<64x64xf16>
  return %h : tensor<64x64xf16>
}
