//! NAND media as plain functions of state and time.
//!
//! [`CellType`] and [`CellTimings`] describe what one die can do; [`NandGeometry`] how the dies
//! are arranged; [`NandTiming`] answers "if this operation is issued now, when is it done?" by
//! keeping a busy-until time per die (or per plane with multi-plane on) and the reserved
//! intervals of each channel. The
//! controller decides what to issue; wear (erase counts) lives in the FTL, and what wear does
//! to power-off data retention in [`Retention`].

pub mod cell;
mod channel;
pub mod fastdiv;
pub mod geometry;
pub mod hdd;
pub mod power;
pub mod retention;
pub mod sched;
pub mod thermal;
pub mod timing;
pub mod variation;
pub mod xpoint;

pub use cell::{CellTimings, CellType};
pub use channel::{Channel, ChannelMerge};
pub use fastdiv::FastDiv;
pub use geometry::NandGeometry;
pub use power::{EnergyTotals, MediaEnergy};
pub use retention::Retention;
pub use sched::SchedulerConfig;
pub use thermal::{ThermalModel, ThermalState};
pub use timing::{MediaCounters, MediaOp, MediaOpKind, NandTiming};
pub use variation::OpVariation;
