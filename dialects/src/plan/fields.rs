//! The generic form of a plan, field by field: the writer `OperatorPlan::to_generic` fills and
//! the reader `OperatorPlan::from_generic` checks every parameter with (unknown ones refused),
//! with the decoders of the kinds that are more than a list of fields.

use super::*;

/// Decoders of the plan kinds with more than a list of fields to read.
impl Reader<'_> {
    /// A GEMM plan (`gemm_output_stationary` or `gemm_k_split`, matching the grid's K split).
    pub(super) fn gemm_plan(&mut self) -> Result<OperatorPlan, PlanError> {
        let grid = self.grid::<4>("grid")?;
        let grid = GemmTileGrid {
            batch: grid[0],
            rows: grid[1],
            cols: grid[2],
            k_split: grid[3],
        };
        let k_split = self.kind == "gemm_k_split";
        if k_split != (grid.k_split > 1) {
            return Err(self.error(format!(
                "grid [.., {}] has {} K split; the kind is gemm_k_split exactly when the K split is above 1",
                grid.k_split,
                if grid.k_split > 1 { "a" } else { "no" }
            )));
        }
        Ok(OperatorPlan::Gemm(GemmPlan {
            grid,
            tiles: self.tiles(grid.tiles())?,
            k_block: self.count("k_block")?,
            c_block: self.count("c_block")?,
            orientation: self.choice(
                "orientation",
                &[Orientation::Normal, Orientation::Swapped],
                |o| o.name(),
            )?,
            weights: self.memory("weights")?,
            left: self.memory("left")?,
            precision: self.precision()?,
            k_steps: self.count("k_steps")?,
            weights_resident: self.flag("weights_resident")?,
            host_order: self.optional_flag("host_order")?,
            scales: self.scales()?,
        }))
    }

    /// A GEMM-in-waves plan: whole row groups per wave, at most one wave per row block.
    pub(super) fn gemm_waves_plan(&mut self) -> Result<OperatorPlan, PlanError> {
        let grid = self.grid::<2>("grid")?;
        let tiles = self.count("tiles")?;
        let blocks = u64::from(grid[0]) * u64::from(grid[1]);
        if grid.contains(&0) || tiles == 0 || !tiles.is_multiple_of(grid[1]) {
            return Err(self.error(format!(
                "tiles = {tiles} is not a positive multiple of the {} column blocks of grid {grid:?}",
                grid[1]
            )));
        }
        if u64::from(tiles) > blocks {
            return Err(self.error(format!(
                "tiles = {tiles} is more than the grid's {blocks} blocks"
            )));
        }
        Ok(OperatorPlan::GemmWaves(GemmWavesPlan {
            grid,
            tiles,
            k_block: self.count("k_block")?,
            weights: self.memory("weights")?,
            left: self.memory("left")?,
            precision: self.precision()?,
            output_shift: self.count("output_shift")?,
            left_replicated: self.optional_flag("left_replicated")?,
            c_block: self.optional_count("c_block")?,
        }))
    }

    /// An activation-stationary GEMM plan: tiles the grid's product, a fan-in of at least 2.
    pub(super) fn gemm_activation_stationary_plan(&mut self) -> Result<OperatorPlan, PlanError> {
        let (grid, tiles) = self.grid_and_tiles::<2>()?;
        let fan_in = self.count("fan_in")?;
        if fan_in < 2 {
            return Err(self.error(format!("fan_in = {fan_in} must be at least 2")));
        }
        Ok(OperatorPlan::GemmActivationStationary(
            GemmActivationStationaryPlan {
                grid,
                tiles,
                c_block: self.count("c_block")?,
                k_block: self.count("k_block")?,
                round: self.count("round")?,
                fan_in,
                weights: self.memory("weights")?,
                precision: self.precision()?,
            },
        ))
    }

    /// A pointwise plan of the op `kind` names: in place, ranged, or on a grid.
    pub(super) fn pointwise_plan(&mut self, kind: &str) -> Result<OperatorPlan, PlanError> {
        let op = PointwiseOp::ALL
            .into_iter()
            .find(|op| op.kind() == kind)
            .ok_or_else(|| unknown_kind(kind))?;
        let in_place = self.optional_flag("in_place")?;
        let ranged = self.optional_flag("ranged")?;
        let placement = match (in_place, ranged) {
            (true, true) => return Err(self.error("in_place and ranged exclude each other".into())),
            (true, false) => PointwisePlacement::InPlace,
            (false, true) => PointwisePlacement::Ranged,
            (false, false) => {
                let (grid, tiles) = self.grid_and_tiles::<3>()?;
                PointwisePlacement::Grid {
                    grid,
                    tiles,
                    order: self.choice("order", &Order::ALL, |o| o.name())?,
                }
            }
        };
        Ok(OperatorPlan::Pointwise(PointwisePlan {
            op,
            placement,
            precision: self.precision()?,
        }))
    }

    /// An attention plan: the schedule from the kind, its grid, tiles and flags.
    pub(super) fn attention_plan(&mut self) -> Result<OperatorPlan, PlanError> {
        let schedule = match self.kind {
            "attention_materialized" => AttentionSchedule::Materialized,
            "attention_blocked" => AttentionSchedule::Blocked,
            "attention_flash_rows" => AttentionSchedule::FlashRows {
                key_block: self.count("key_block")?,
            },
            _ => AttentionSchedule::Flash {
                key_block: self.count("key_block")?,
            },
        };
        // A flash plan's grid has a third axis when its keys are split over tiles.
        let axes = match schedule {
            AttentionSchedule::Materialized => 3,
            AttentionSchedule::Flash { .. } if self.list("grid")?.len() == 3 => 3,
            _ => 2,
        };
        let grid = self.grid_of_length("grid", axes)?;
        let product = grid.iter().map(|&g| u64::from(g)).product();
        Ok(OperatorPlan::Attention(AttentionPlan {
            schedule,
            tiles: self.tiles(product)?,
            grid,
            causal: self.flag("causal")?,
            precision: self.precision()?,
        }))
    }

    /// A repeat plan: a non-negative count and the body's choices as u32.
    pub(super) fn repeat_plan(&mut self) -> Result<OperatorPlan, PlanError> {
        let count = self.int("count")?;
        let count =
            u64::try_from(count).map_err(|_| self.error(format!("count {count} is negative")))?;
        let choices = self.list("body_choices")?;
        let body_choices = choices
            .iter()
            .map(|&choice| u32::try_from(choice).ok())
            .collect::<Option<Vec<u32>>>()
            .ok_or_else(|| {
                self.error(format!(
                    "body_choices {choices:?} holds a value outside 0..2^32"
                ))
            })?;
        Ok(OperatorPlan::Repeat(RepeatPlan {
            count,
            body_choices,
        }))
    }
}

pub(super) fn unknown_kind(kind: &str) -> PlanError {
    PlanError::UnknownKind {
        kind: kind.to_string(),
        known: PLAN_KINDS.join(", "),
    }
}

#[derive(Default)]
pub(super) struct Writer {
    pub(super) params: BTreeMap<String, PlanValue>,
}

impl Writer {
    pub(super) fn int(&mut self, key: &str, value: i64) {
        self.params.insert(key.into(), PlanValue::Int(value));
    }

    pub(super) fn count(&mut self, key: &str, value: u32) {
        self.int(key, i64::from(value));
    }

    pub(super) fn grid(&mut self, key: &str, values: &[u32]) {
        self.params.insert(
            key.into(),
            PlanValue::Ints(values.iter().map(|&v| i64::from(v)).collect()),
        );
    }

    pub(super) fn name(&mut self, key: &str, value: &str) {
        self.params.insert(key.into(), PlanValue::Str(value.into()));
    }

    pub(super) fn flag(&mut self, key: &str, value: bool) {
        self.params.insert(key.into(), PlanValue::Bool(value));
    }

    pub(super) fn scales(&mut self, scales: Option<OperandScales>) {
        if let Some(scales) = scales {
            self.int("lhs_scale", i64::from(scales.lhs));
            self.int("rhs_scale", i64::from(scales.rhs));
        }
    }
}

/// Reads a generic plan's parameters, remembering which were read so that unknown ones are
/// refused.
pub(super) struct Reader<'a> {
    pub(super) kind: &'a str,
    pub(super) params: &'a BTreeMap<String, PlanValue>,
    pub(super) read: Vec<&'static str>,
}

impl Reader<'_> {
    pub(super) fn error(&self, message: String) -> PlanError {
        PlanError::Parameter {
            kind: self.kind.to_string(),
            message,
        }
    }

    pub(super) fn get(&mut self, key: &'static str) -> Option<&PlanValue> {
        self.read.push(key);
        self.params.get(key)
    }

    pub(super) fn required(&mut self, key: &'static str) -> Result<PlanValue, PlanError> {
        match self.get(key) {
            Some(value) => Ok(value.clone()),
            None => Err(self.error(format!("missing parameter '{key}'"))),
        }
    }

    pub(super) fn wrong(&self, key: &str, expected: &str, value: &PlanValue) -> PlanError {
        self.error(format!("parameter '{key}' must be {expected}, not {value}"))
    }

    pub(super) fn int(&mut self, key: &'static str) -> Result<i64, PlanError> {
        match self.required(key)? {
            PlanValue::Int(value) => Ok(value),
            other => Err(self.wrong(key, "an integer", &other)),
        }
    }

    pub(super) fn positive(&self, key: &str, value: i64) -> Result<u32, PlanError> {
        u32::try_from(value)
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| self.error(format!("parameter '{key}' = {value} is outside 1..2^32")))
    }

    pub(super) fn count(&mut self, key: &'static str) -> Result<u32, PlanError> {
        let value = self.int(key)?;
        self.positive(key, value)
    }

    pub(super) fn optional_count(&mut self, key: &'static str) -> Result<Option<u32>, PlanError> {
        match self.get(key).cloned() {
            None => Ok(None),
            Some(PlanValue::Int(value)) => self.positive(key, value).map(Some),
            Some(other) => Err(self.wrong(key, "an integer", &other)),
        }
    }

    pub(super) fn list(&mut self, key: &'static str) -> Result<Vec<i64>, PlanError> {
        match self.required(key)? {
            PlanValue::Ints(values) => Ok(values),
            other => Err(self.wrong(key, "a list of integers", &other)),
        }
    }

    pub(super) fn grid_of_length(
        &mut self,
        key: &'static str,
        axes: usize,
    ) -> Result<Vec<u32>, PlanError> {
        let values = self.list(key)?;
        if values.len() != axes {
            return Err(self.error(format!(
                "parameter '{key}' {values:?} must have {axes} entries, not {}",
                values.len()
            )));
        }
        values
            .iter()
            .map(|&value| self.positive(key, value))
            .collect()
    }

    pub(super) fn grid<const N: usize>(
        &mut self,
        key: &'static str,
    ) -> Result<[u32; N], PlanError> {
        let values = self.grid_of_length(key, N)?;
        let mut grid = [0; N];
        grid.copy_from_slice(&values);
        Ok(grid)
    }

    /// A `grid` of `N` axes and `tiles`, its product.
    pub(super) fn grid_and_tiles<const N: usize>(&mut self) -> Result<([u32; N], u32), PlanError> {
        let grid = self.grid::<N>("grid")?;
        let tiles = self.tiles(grid.iter().map(|&g| u64::from(g)).product())?;
        Ok((grid, tiles))
    }

    /// `tiles`, which must be the grid's product.
    pub(super) fn tiles(&mut self, grid_tiles: u64) -> Result<u32, PlanError> {
        let tiles = self.count("tiles")?;
        if u64::from(tiles) != grid_tiles {
            return Err(self.error(format!(
                "tiles = {tiles} is not the grid's product {grid_tiles}"
            )));
        }
        Ok(tiles)
    }

    pub(super) fn flag(&mut self, key: &'static str) -> Result<bool, PlanError> {
        match self.required(key)? {
            PlanValue::Bool(value) => Ok(value),
            other => Err(self.wrong(key, "true or false", &other)),
        }
    }

    /// A flag printed only when set (absent means false).
    pub(super) fn optional_flag(&mut self, key: &'static str) -> Result<bool, PlanError> {
        match self.get(key).cloned() {
            None => Ok(false),
            Some(PlanValue::Bool(true)) => Ok(true),
            Some(other) => Err(self.wrong(key, "true (or absent)", &other)),
        }
    }

    pub(super) fn name(&mut self, key: &'static str) -> Result<String, PlanError> {
        match self.required(key)? {
            PlanValue::Str(value) => Ok(value),
            other => Err(self.wrong(key, "a string", &other)),
        }
    }

    pub(super) fn choice<T: Copy>(
        &mut self,
        key: &'static str,
        choices: &[T],
        name: impl Fn(T) -> &'static str,
    ) -> Result<T, PlanError> {
        let value = self.name(key)?;
        choices
            .iter()
            .copied()
            .find(|&choice| name(choice) == value)
            .ok_or_else(|| {
                let known: Vec<&str> = choices.iter().map(|&c| name(c)).collect();
                self.error(format!(
                    "parameter '{key}' = \"{value}\" is not one of {}",
                    known.join(", ")
                ))
            })
    }

    pub(super) fn memory(&mut self, key: &'static str) -> Result<Memory, PlanError> {
        self.choice(key, &[Memory::Standard, Memory::Interleaved], |m| m.name())
    }

    pub(super) fn precision(&mut self) -> Result<ElementType, PlanError> {
        let value = self.name("precision")?;
        precision_from_name(&value).ok_or_else(|| {
            self.error(format!(
                "parameter 'precision' = \"{value}\" is not one of f32, f16, f8, f8e5"
            ))
        })
    }

    pub(super) fn scale(&mut self, key: &'static str) -> Result<Option<i32>, PlanError> {
        match self.get(key).cloned() {
            None => Ok(None),
            // The range `ipu.cast` accepts for an FP8 scale.
            Some(PlanValue::Int(value)) => match i32::try_from(value) {
                Ok(scale) if CastOp::SCALE_RANGE.contains(&value) => Ok(Some(scale)),
                _ => Err(self.error(format!(
                    "parameter '{key}' = {value} is outside {}..={}",
                    CastOp::SCALE_RANGE.start(),
                    CastOp::SCALE_RANGE.end()
                ))),
            },
            Some(other) => Err(self.wrong(key, "an integer", &other)),
        }
    }

    pub(super) fn scales(&mut self) -> Result<Option<OperandScales>, PlanError> {
        match (self.scale("lhs_scale")?, self.scale("rhs_scale")?) {
            (Some(lhs), Some(rhs)) => Ok(Some(OperandScales { lhs, rhs })),
            (None, None) => Ok(None),
            _ => Err(self.error("lhs_scale and rhs_scale come together".into())),
        }
    }

    /// Refuses parameters the kind does not have.
    pub(super) fn finish(&self) -> Result<(), PlanError> {
        match self
            .params
            .keys()
            .find(|key| !self.read.contains(&key.as_str()))
        {
            Some(key) => Err(self.error(format!("unknown parameter '{key}'"))),
            None => Ok(()),
        }
    }
}
