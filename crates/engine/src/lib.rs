//! The deterministic core of flashlab: simulated time, the event queue, per-component random
//! streams, and the host-facing [`BlockDevice`] trait that every simulated device implements.
//!
//! Nothing here knows about NAND, fio or reports; everything above depends on it.

pub mod compress;
pub mod device;
pub mod input;
pub mod output;
pub mod queue;
pub mod rng;
pub mod run_files;
pub mod state;
pub mod temp;
pub mod time;

pub use device::{
    not_zoned, BlockDevice, Completion, Continued, DeviceError, IoKind, IoRequest, PrefetchStage,
    Targets, ZoneGeometry, ZoneOp, MAX_ZONES,
};
pub use queue::EventQueue;
pub use rng::{RngStream, SeedTree};
pub use state::{State, StateError, StateHeader, StateReader, StateWriter};
pub use time::{SimTime, NS_PER_MS, NS_PER_S, NS_PER_US};
