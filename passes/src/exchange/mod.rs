//! Exchange planning shared by finalist selection and exchange lowering.

pub mod schedule;

pub use schedule::{
    check_schedule, schedule_phase, schedule_phase_at, schedule_phase_cached, PhaseSchedule,
    ScheduleError, ScheduledPiece, TransferAddresses, TransferRequest,
};
