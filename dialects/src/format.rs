//! Codecs for our parametric attributes. The C API cannot read a dynamic (IRDL) attribute's
//! parameters, so this one module prints them as MLIR text and parses their printed form.
//!
//! * `#ipu.format<"amp_left", [64, 16], [1, 4], [0, 2], "interleaved", 0>`: element order, block
//!   sizes, partitions per axis, padding per axis, memory class, FP8 scale exponent.
//! * `#ipu.plan<"gemm_output_stationary", {grid = [8, 8, 1], tiles = 64}>`: operator plan.
//! * `#ipu.estimate<cycles, exchange_cycles, peak_standard, peak_interleaved, peak_total,
//!   largest_standard_allocation>`.

use std::collections::BTreeMap;
use std::fmt;

/// A codec error, with the offending text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} in '{text}'")]
pub struct CodecError {
    pub message: String,
    pub text: String,
}

/// Element order of a tensor in tile memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Order {
    RowMajor,
    AmpLeft,
    AmpRight,
    AmpOutput,
}

impl Order {
    pub const ALL: [Order; 4] = [
        Order::RowMajor,
        Order::AmpLeft,
        Order::AmpRight,
        Order::AmpOutput,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Order::RowMajor => "row_major",
            Order::AmpLeft => "amp_left",
            Order::AmpRight => "amp_right",
            Order::AmpOutput => "amp_output",
        }
    }

    pub fn from_name(name: &str) -> Option<Order> {
        Order::ALL.into_iter().find(|order| order.name() == name)
    }
}

/// Memory class of a tensor's tile buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Memory {
    Standard,
    Interleaved,
}

impl Memory {
    pub const fn name(self) -> &'static str {
        match self {
            Memory::Standard => "standard",
            Memory::Interleaved => "interleaved",
        }
    }

    pub fn from_name(name: &str) -> Option<Memory> {
        match name {
            "standard" => Some(Memory::Standard),
            "interleaved" => Some(Memory::Interleaved),
            _ => None,
        }
    }
}

/// The `#ipu.format` tensor encoding.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Format {
    pub order: Order,
    /// Block size per axis (elements).
    pub blocks: Vec<i64>,
    /// Number of partitions per axis (how the tensor is spread over tiles).
    pub partitions: Vec<i64>,
    /// Padding per axis (elements added at the end of the axis).
    pub padding: Vec<i64>,
    pub memory: Memory,
    /// Power-of-two scale exponent for FP8 elements (value = q * 2^scale); 0 otherwise.
    pub scale: i64,
}

impl Format {
    /// A row-major, unpartitioned, unpadded standard-memory format of the given rank.
    pub fn row_major(rank: usize) -> Format {
        Format {
            order: Order::RowMajor,
            blocks: vec![0; rank],
            partitions: vec![1; rank],
            padding: vec![0; rank],
            memory: Memory::Standard,
            scale: 0,
        }
    }

    /// Parses the printed form `#ipu.format<...>`.
    pub fn parse(text: &str) -> Result<Format, CodecError> {
        let mut parser = Parser::new(text);
        parser.expect_str("#ipu.format<")?;
        let order_name = parser.string()?;
        let order = Order::from_name(&order_name).ok_or_else(|| {
            parser.error(&format!(
                "unknown element order \"{order_name}\" (expected one of row_major, amp_left, amp_right, amp_output)"
            ))
        })?;
        parser.expect_str(",")?;
        let blocks = parser.int_list()?;
        parser.expect_str(",")?;
        let partitions = parser.int_list()?;
        parser.expect_str(",")?;
        let padding = parser.int_list()?;
        parser.expect_str(",")?;
        let memory_name = parser.string()?;
        let memory = Memory::from_name(&memory_name).ok_or_else(|| {
            parser.error(&format!(
                "unknown memory class \"{memory_name}\" (expected standard or interleaved)"
            ))
        })?;
        parser.expect_str(",")?;
        let scale = parser.int()?;
        parser.expect_str(">")?;
        parser.end()?;
        // Partitions count tiles (1..2^32); block sizes (0: not blocked) and padding count
        // elements (0..2^32); the FP8 scale is a cast's exponent.
        let out_of_range = |what: &str, values: &[i64], low: i64| {
            values
                .iter()
                .find(|&&value| value < low || value > i64::from(u32::MAX))
                .map(|value| {
                    parser.error(&format!(
                        "{what} {value} is outside {low}..2^32 in {}",
                        int_list(values)
                    ))
                })
        };
        if let Some(error) = out_of_range("block size", &blocks, 0)
            .or_else(|| out_of_range("partition count", &partitions, 1))
            .or_else(|| out_of_range("padding", &padding, 0))
        {
            return Err(error);
        }
        if !crate::ipu::CastOp::SCALE_RANGE.contains(&scale) {
            return Err(parser.error(&format!(
                "FP8 scale {scale} is outside {}..={}",
                crate::ipu::CastOp::SCALE_RANGE.start(),
                crate::ipu::CastOp::SCALE_RANGE.end()
            )));
        }
        Ok(Format {
            order,
            blocks,
            partitions,
            padding,
            memory,
            scale,
        })
    }
}

impl fmt::Display for Format {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(
            formatter,
            "#ipu.format<\"{}\", {}, {}, {}, \"{}\", {}>",
            self.order.name(),
            int_list(&self.blocks),
            int_list(&self.partitions),
            int_list(&self.padding),
            self.memory.name(),
            self.scale
        )
    }
}

/// A value in an operator plan's parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PlanValue {
    Int(i64),
    Ints(Vec<i64>),
    Str(String),
    Bool(bool),
}

impl fmt::Display for PlanValue {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        match self {
            PlanValue::Int(value) => write!(formatter, "{value} : i64"),
            PlanValue::Ints(values) => formatter.write_str(&int_list(values)),
            PlanValue::Str(value) => write!(formatter, "\"{}\"", escape(value)),
            PlanValue::Bool(value) => write!(formatter, "{value}"),
        }
    }
}

/// The `#ipu.plan` operator-plan attribute.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Plan {
    pub kind: String,
    pub params: BTreeMap<String, PlanValue>,
}

impl Plan {
    /// Parses the printed form `#ipu.plan<"kind", {key = value, ...}>`.
    pub fn parse(text: &str) -> Result<Plan, CodecError> {
        let mut parser = Parser::new(text);
        parser.expect_str("#ipu.plan<")?;
        let kind = parser.string()?;
        parser.expect_str(",")?;
        parser.expect_str("{")?;
        let mut params = BTreeMap::new();
        if !parser.eat("}") {
            loop {
                let key = parser.identifier()?;
                let value = if parser.eat("=") {
                    parser.plan_value()?
                } else {
                    PlanValue::Bool(true)
                };
                params.insert(key, value);
                if parser.eat("}") {
                    break;
                }
                parser.expect_str(",")?;
            }
        }
        parser.expect_str(">")?;
        parser.end()?;
        Ok(Plan { kind, params })
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(formatter, "#ipu.plan<\"{}\", {{", escape(&self.kind))?;
        for (index, (key, value)) in self.params.iter().enumerate() {
            if index > 0 {
                formatter.write_str(", ")?;
            }
            write!(formatter, "{key} = {value}")?;
        }
        formatter.write_str("}>")
    }
}

/// The `#ipu.estimate` attribute: the planner's estimates for one op (or a whole program).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Estimate {
    pub cycles: i64,
    pub exchange_cycles: i64,
    pub peak_standard_bytes: i64,
    pub peak_interleaved_bytes: i64,
    pub peak_total_bytes: i64,
    pub maximum_standard_allocation_bytes: i64,
}

impl Estimate {
    pub fn parse(text: &str) -> Result<Estimate, CodecError> {
        let mut parser = Parser::new(text);
        parser.expect_str("#ipu.estimate<")?;
        let mut values = [0i64; 6];
        for (index, value) in values.iter_mut().enumerate() {
            if index > 0 {
                parser.expect_str(",")?;
            }
            *value = parser.int()?;
        }
        parser.expect_str(">")?;
        parser.end()?;
        let [cycles, exchange_cycles, peak_standard_bytes, peak_interleaved_bytes, peak_total_bytes, maximum_standard_allocation_bytes] =
            values;
        Ok(Estimate {
            cycles,
            exchange_cycles,
            peak_standard_bytes,
            peak_interleaved_bytes,
            peak_total_bytes,
            maximum_standard_allocation_bytes,
        })
    }
}

impl fmt::Display for Estimate {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(
            formatter,
            "#ipu.estimate<{}, {}, {}, {}, {}, {}>",
            self.cycles,
            self.exchange_cycles,
            self.peak_standard_bytes,
            self.peak_interleaved_bytes,
            self.peak_total_bytes,
            self.maximum_standard_allocation_bytes
        )
    }
}

fn int_list(values: &[i64]) -> String {
    let items: Vec<String> = values.iter().map(|value| value.to_string()).collect();
    format!("[{}]", items.join(", "))
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A small recursive-descent reader over MLIR attribute text.
struct Parser<'t> {
    text: &'t str,
    position: usize,
}

impl<'t> Parser<'t> {
    fn new(text: &'t str) -> Self {
        Parser {
            text: text.trim(),
            position: 0,
        }
    }

    fn error(&self, message: &str) -> CodecError {
        CodecError {
            message: format!("{message} at offset {}", self.position),
            text: self.text.to_string(),
        }
    }

    fn rest(&self) -> &'t str {
        &self.text[self.position..]
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.position += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.rest().starts_with(token) {
            self.position += token.len();
            true
        } else {
            false
        }
    }

    fn expect_str(&mut self, token: &str) -> Result<(), CodecError> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(&format!("expected '{token}'")))
        }
    }

    fn end(&mut self) -> Result<(), CodecError> {
        self.skip_space();
        if self.rest().is_empty() {
            Ok(())
        } else {
            Err(self.error("unexpected trailing text"))
        }
    }

    fn string(&mut self) -> Result<String, CodecError> {
        self.expect_str("\"")?;
        let mut value = String::new();
        let mut chars = self.rest().char_indices();
        while let Some((offset, character)) = chars.next() {
            match character {
                '"' => {
                    self.position += offset + 1;
                    return Ok(value);
                }
                '\\' => match chars.next() {
                    Some((_, escaped)) => value.push(escaped),
                    None => break,
                },
                other => value.push(other),
            }
        }
        Err(self.error("unterminated string"))
    }

    fn identifier(&mut self) -> Result<String, CodecError> {
        self.skip_space();
        let rest = self.rest();
        let length = rest
            .find(|character: char| {
                !(character.is_ascii_alphanumeric() || character == '_' || character == '.')
            })
            .unwrap_or(rest.len());
        if length == 0 {
            return Err(self.error("expected an identifier"));
        }
        self.position += length;
        Ok(rest[..length].to_string())
    }

    /// An integer with an optional `: iN` type suffix.
    fn int(&mut self) -> Result<i64, CodecError> {
        self.skip_space();
        let rest = self.rest();
        let length = rest
            .char_indices()
            .take_while(|(index, character)| {
                character.is_ascii_digit() || (*index == 0 && *character == '-')
            })
            .count();
        let value: i64 = rest[..length]
            .parse()
            .map_err(|_| self.error("expected an integer"))?;
        self.position += length;
        let checkpoint = self.position;
        if self.eat(":") {
            self.skip_space();
            if self.rest().starts_with('i') {
                let _ = self.identifier()?;
            } else {
                self.position = checkpoint;
            }
        }
        Ok(value)
    }

    fn int_list(&mut self) -> Result<Vec<i64>, CodecError> {
        self.expect_str("[")?;
        let mut values = Vec::new();
        if self.eat("]") {
            return Ok(values);
        }
        loop {
            values.push(self.int()?);
            if self.eat("]") {
                return Ok(values);
            }
            self.expect_str(",")?;
        }
    }

    fn plan_value(&mut self) -> Result<PlanValue, CodecError> {
        self.skip_space();
        let rest = self.rest();
        if rest.starts_with('"') {
            Ok(PlanValue::Str(self.string()?))
        } else if rest.starts_with('[') {
            Ok(PlanValue::Ints(self.int_list()?))
        } else if self.eat("true") {
            Ok(PlanValue::Bool(true))
        } else if self.eat("false") {
            Ok(PlanValue::Bool(false))
        } else {
            Ok(PlanValue::Int(self.int()?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_round_trips_through_mlir_printed_form() {
        let printed =
            r#"#ipu.format<"amp_left", [64, 16], [1, 4], [0, 2], "interleaved", -3 : i64>"#;
        let format = Format::parse(printed).expect("parses");
        assert_eq!(format.order, Order::AmpLeft);
        assert_eq!(format.blocks, vec![64, 16]);
        assert_eq!(format.padding, vec![0, 2]);
        assert_eq!(format.memory, Memory::Interleaved);
        assert_eq!(format.scale, -3);
        assert_eq!(
            Format::parse(&format.to_string()).expect("reparses"),
            format
        );
    }

    #[test]
    fn format_errors_name_the_problem() {
        let error =
            Format::parse(r#"#ipu.format<"diagonal", [1], [1], [0], "standard", 0>"#).unwrap_err();
        assert!(
            error.message.contains("unknown element order \"diagonal\""),
            "{error}"
        );
        let error =
            Format::parse(r#"#ipu.format<"row_major", [1], [1], [0], "fast", 0>"#).unwrap_err();
        assert!(
            error.message.contains("unknown memory class \"fast\""),
            "{error}"
        );
        assert!(Format::parse(r#"#ipu.format<"row_major", [1], [1]"#).is_err());
    }

    #[test]
    fn plan_round_trips_with_every_value_kind() {
        let plan = Plan {
            kind: "gemm_output_stationary".into(),
            params: BTreeMap::from([
                ("grid".to_string(), PlanValue::Ints(vec![8, 8, 1])),
                ("tiles".to_string(), PlanValue::Int(64)),
                ("weights".to_string(), PlanValue::Str("interleaved".into())),
                ("k_split".to_string(), PlanValue::Bool(false)),
            ]),
        };
        let text = plan.to_string();
        assert_eq!(Plan::parse(&text).expect("reparses"), plan);
        // MLIR prints dictionaries sorted, integers with their type.
        let printed = r#"#ipu.plan<"gemm", {grid = [1, 1, 1], tiles = 64 : i64, unit}>"#;
        let parsed = Plan::parse(printed).expect("parses");
        assert_eq!(parsed.params.get("tiles"), Some(&PlanValue::Int(64)));
        assert_eq!(parsed.params.get("unit"), Some(&PlanValue::Bool(true)));
    }

    #[test]
    fn estimate_round_trips() {
        let printed = "#ipu.estimate<72994 : i64, 29520 : i64, 21732 : i64, 43008 : i64, 62564 : i64, 16384 : i64>";
        let estimate = Estimate::parse(printed).expect("parses");
        assert_eq!(estimate.cycles, 72994);
        assert_eq!(estimate.maximum_standard_allocation_bytes, 16384);
        assert_eq!(
            Estimate::parse(&estimate.to_string()).expect("reparses"),
            estimate
        );
    }
}
