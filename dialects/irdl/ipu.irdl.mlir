// The `ipu` graph dialect, declared in IRDL so that stock `mlir-opt-22 --irdl-file=` reads and
// verifies our IR too. IRDL checks operand/result kinds and required attributes; everything it
// cannot express (shapes, broadcasting, transpose flags, FP8 scale ranges, repeat carried types,
// optional attributes) is verified in Rust (dialects/src/ipu/verify.rs).
irdl.dialect @ipu {
  // Tensor format encoding: element order, block sizes, partitions per axis, padding per axis,
  // memory class and FP8 scale exponent.
  //   tensor<64x64xf16, #ipu.format<"amp_left", [64, 16], [1, 4], [0, 0], "interleaved", 0>>
  irdl.attribute @format {
    %order = irdl.base "#builtin.string"
    %blocks = irdl.base "#builtin.array"
    %partitions = irdl.base "#builtin.array"
    %padding = irdl.base "#builtin.array"
    %memory = irdl.base "#builtin.string"
    %scale = irdl.base "#builtin.integer"
    irdl.parameters(order: %order, blocks: %blocks, partitions: %partitions, padding: %padding, memory: %memory, scale: %scale)
  }

  // Operator plan chosen by planning: a kind and its parameters.
  //   #ipu.plan<"gemm_output_stationary", {grid = [8, 8, 1], tiles = 64}>
  irdl.attribute @plan {
    %kind = irdl.base "#builtin.string"
    %params = irdl.base "#builtin.dictionary"
    irdl.parameters(kind: %kind, params: %params)
  }

  // Planner estimates for an op: cycles, exchange cycles, peak standard / interleaved / total
  // bytes per tile and the largest standard allocation.
  irdl.attribute @estimate {
    %cycles = irdl.base "#builtin.integer"
    %exchange = irdl.base "#builtin.integer"
    %standard = irdl.base "#builtin.integer"
    %interleaved = irdl.base "#builtin.integer"
    %total = irdl.base "#builtin.integer"
    %largest = irdl.base "#builtin.integer"
    irdl.parameters(cycles: %cycles, exchange_cycles: %exchange, peak_standard_bytes: %standard, peak_interleaved_bytes: %interleaved, peak_total_bytes: %total, maximum_standard_allocation_bytes: %largest)
  }

  // result = op(lhs) @ op(rhs), op = transpose of the last two axes when `transpose_lhs` /
  // `transpose_rhs` (optional unit-or-bool attributes) are set; leading axes broadcast.
  irdl.operation @matmul {
    %lhs = irdl.base "!builtin.tensor"
    %rhs = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %lhs, rhs: %rhs)
    irdl.results(result: %result)
  }

  // Elementwise sum with NumPy broadcasting.
  irdl.operation @add {
    %lhs = irdl.base "!builtin.tensor"
    %rhs = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %lhs, rhs: %rhs)
    irdl.results(result: %result)
  }

  // GeLU; optional `approximate = "tanh"` (default "erf", the exact form).
  irdl.operation @gelu {
    %input = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(input: %input)
    irdl.results(result: %result)
  }

  // Softmax over the last axis.
  irdl.operation @softmax {
    %input = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(input: %input)
    irdl.results(result: %result)
  }

  // Layer norm over the last axis with gamma and beta of the last axis' size; `epsilon`.
  irdl.operation @layer_norm {
    %input = irdl.base "!builtin.tensor"
    %gamma = irdl.base "!builtin.tensor"
    %beta = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    %epsilon = irdl.base "#builtin.float"
    irdl.operands(input: %input, gamma: %gamma, beta: %beta)
    irdl.results(result: %result)
    irdl.attributes {"epsilon" = %epsilon}
  }

  // softmax(q k^T * scale [+ causal mask]) v; optional `causal` and `scale`.
  irdl.operation @attention {
    %q = irdl.base "!builtin.tensor"
    %k = irdl.base "!builtin.tensor"
    %v = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(query: %q, key: %k, value: %v)
    irdl.results(result: %result)
  }

  // Precision conversion; optional `scale` (power-of-two exponent for the FP8 side).
  irdl.operation @cast {
    %input = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(input: %input)
    irdl.results(result: %result)
  }

  // Layout conversion between formats; optional `permutation` of the axes.
  irdl.operation @rearrange {
    %input = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(input: %input)
    irdl.results(result: %result)
  }

  // The same elements in another shape (row-major order kept): any reshape that preserves the
  // element count and type, e.g. splitting [S, H * D] into heads [S, H, D] or merging them back.
  irdl.operation @reshape {
    %input = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(input: %input)
    irdl.results(result: %result)
  }

  // A strided window of the input: result[i] = input[offsets + i * strides] on every axis,
  // the window's sizes being the result's shape (`tensor.extract_slice` with static operands).
  // `offsets` and `strides` are array<i64: ...> with one entry per axis, strides >= 1.
  irdl.operation @slice {
    %input = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    %offsets = irdl.base "#builtin.dense_array"
    %strides = irdl.base "#builtin.dense_array"
    irdl.operands(input: %input)
    irdl.results(result: %result)
    irdl.attributes {"offsets" = %offsets, "strides" = %strides}
  }

  // `lhs` followed by `rhs` along `axis` (the other axes equal, one element type). Two
  // operands, not a variadic: IRDL unifies a variadic's types, and the parts of a concatenation
  // differ in shape; more parts are a chain.
  irdl.operation @concat {
    %lhs = irdl.base "!builtin.tensor"
    %rhs = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    %axis = irdl.base "#builtin.integer"
    irdl.operands(lhs: %lhs, rhs: %rhs)
    irdl.results(result: %result)
    irdl.attributes {"axis" = %axis}
  }

  // Elementwise: result[i] = @body(inputs at i), the body a private function of scalar
  // arith/math ops taking one float per input (then, optionally, one `index` per result axis:
  // the element's position) and returning a float, computed in f32. The inputs all have the
  // result's shape (and one type: IRDL unifies a variadic's types, so broadcasting is the
  // explicit `broadcast` op). As for `repeat`, the body is a function: IRDL ops cannot be
  // region terminators.
  irdl.operation @map {
    %input = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    %body = irdl.base "#builtin.symbol_ref"
    irdl.operands(inputs: variadic %input)
    irdl.results(result: %result)
    irdl.attributes {"body" = %body}
  }

  // NumPy broadcasting of the input to the result's shape (same element type).
  irdl.operation @broadcast {
    %input = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(input: %input)
    irdl.results(result: %result)
  }

  // Reduction over the last axis with `combiner` "add", "mul", "max" or "min": the result
  // has the input's shape with its last axis 1 (kept, as TOSA's reductions keep it), so it
  // broadcasts back over the rows it reduced.
  irdl.operation @reduce {
    %input = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    %combiner = irdl.base "#builtin.string"
    irdl.operands(input: %input)
    irdl.results(result: %result)
    irdl.attributes {"combiner" = %combiner}
  }

  // A per-iteration stack for `scan`: the tensor, viewed as slices along its leading axis.
  // Every stack has the one type `!ipu.stacked` (IRDL unifies a variadic's types: a scan's
  // stacks of different shapes could not be its operands as tensors).
  irdl.type @stacked {
    irdl.parameters()
  }
  irdl.operation @stack {
    %tensor = irdl.base "!builtin.tensor"
    %stacked = irdl.base @ipu::@stacked
    irdl.operands(tensor: %tensor)
    irdl.results(stack: %stacked)
  }

  // A structured loop over per-iteration stacks, not unrolled: calls the body function
  // `body` `count` times, threading the one carried value `init` and giving iteration i
  // slice i of each stack (a real encoder's per-layer weights); the body takes the carried
  // value, then the slices, and returns the carried value.
  irdl.operation @scan {
    %init = irdl.base "!builtin.tensor"
    %stacked = irdl.base @ipu::@stacked
    %result = irdl.base "!builtin.tensor"
    %body = irdl.base "#builtin.symbol_ref"
    %count = irdl.base "#builtin.integer"
    irdl.operands(init: %init, stacks: variadic %stacked)
    irdl.results(result: %result)
    irdl.attributes {"body" = %body, "count" = %count}
  }

  // A structured loop, not unrolled: calls the body function `body` `count` times, threading
  // the carried values through it. The body's `func.return` is the loop's yield (IRDL ops
  // cannot be region terminators, so the body is a function, not a region).
  irdl.operation @repeat {
    %init = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    %body = irdl.base "#builtin.symbol_ref"
    %count = irdl.base "#builtin.integer"
    irdl.operands(init: variadic %init)
    irdl.results(results: variadic %result)
    irdl.attributes {"body" = %body, "count" = %count}
  }
}
