//! The deterministic core of flashlab: simulated time, the event queue, per-component random
//! streams, and the host-facing [`BlockDevice`] trait that every simulated device implements.
//!
//! Nothing here knows about NAND, fio or reports; everything above depends on it.
//!
//! Key types:
//! - [`SimTime`]: simulated time, integer nanoseconds (never the wall clock).
//! - [`EventQueue`]: timed events, popped in `(time, order scheduled)` order, so two runs with
//!   the same inputs pop the same events in the same order; bounded, so a runaway model stops
//!   with a reason instead of eating memory.
//! - [`SeedTree`] and [`RngStream`]: one master seed split by name into independent random
//!   streams, so adding a component does not shift another's draws.
//! - [`BlockDevice`], [`IoRequest`] and [`Completion`]: what a host submits and when the
//!   device says it finishes; drives, systems and test devices implement the trait.
//! - [`State`]: a device's saved state (`docs/state.md`).
//!
//! The queue's ordering, and the seed tree's reproducibility:
//!
//! ```rust
//! use flashlab_engine::{EventQueue, SeedTree, NS_PER_US};
//!
//! let mut queue = EventQueue::with_limit(16);
//! queue.schedule(5 * NS_PER_US, "program done").unwrap();
//! queue.schedule(2 * NS_PER_US, "read done").unwrap();
//! // Equal times keep the order they were scheduled in.
//! queue.schedule(5 * NS_PER_US, "erase done").unwrap();
//!
//! let mut popped = Vec::new();
//! while let Some((at_ns, event)) = queue.pop() {
//!     popped.push((at_ns, event));
//! }
//! assert_eq!(
//!     popped,
//!     [(2_000, "read done"), (5_000, "program done"), (5_000, "erase done")]
//! );
//! // The clock is where the last event was; an event before it is refused.
//! assert_eq!(queue.now_ns(), 5_000);
//! assert!(queue.schedule(1_000, "late").is_err());
//!
//! // The same seed and name give the same stream; another name, another stream.
//! let seeds = SeedTree::new(42);
//! let (mut a, mut b) = (seeds.child("die").stream(), seeds.child("die").stream());
//! assert_eq!(a.next_u64(), b.next_u64());
//! let mut other = seeds.child("host").stream();
//! assert_ne!(a.next_u64(), other.next_u64());
//! ```

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
    RefusedIo, Targets, UntimedError, UntimedIo, WriteTotals, WriteWindow, ZoneGeometry, ZoneOp,
    MAX_ZONES,
};
pub use queue::EventQueue;
pub use rng::{RngStream, SeedTree};
pub use state::{State, StateError, StateHeader, StateReader, StateWriter};
pub use time::{SimTime, NS_PER_MS, NS_PER_S, NS_PER_US};
