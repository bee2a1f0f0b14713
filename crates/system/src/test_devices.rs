//! Stand-ins the crate's unit tests build systems on.

use crate::Component;
use flashlab_engine::{
    BlockDevice, Completion, DeviceError, IoRequest, PrefetchStage, SimTime, StateError,
    StateReader, StateWriter,
};

/// A forgery: what the refusal must say, and the edit.
pub(crate) type Forge<'a, T> = (&'a str, &'a dyn Fn(&mut T));

/// A device of the given capacity that completes every request 1 µs after it arrives and
/// keeps no state.
pub(crate) struct Null(pub(crate) u64);

impl BlockDevice for Null {
    fn capacity_bytes(&self) -> u64 {
        self.0
    }
    fn prefetch(&self, _req: &IoRequest, _stage: PrefetchStage) {}
    fn submit(&mut self, now_ns: SimTime, _: &IoRequest) -> Result<Completion, DeviceError> {
        Ok(Completion {
            accepted_ns: now_ns,
            done_ns: now_ns + 1_000,
        })
    }
}

impl flashlab_engine::State for Null {
    fn save(&self, _: &mut StateWriter<'_>) {}
    fn load(&mut self, _: &mut StateReader<'_>) -> Result<(), StateError> {
        Ok(())
    }
}

impl Component for Null {
    fn counters_json(&self) -> serde_json::Value {
        serde_json::json!({})
    }
}
