//! Any bytes given to a trace reader, in each of the six formats, must give records or a typed
//! error naming the line, never a panic; with `skip_bad_lines` every line is consumed.
//! The first byte picks the format and the reader's options; the rest is the trace.
//! Run with `cargo fuzz run trace_reader` from the repository root (docs/fuzzing.md).
#![no_main]

use libfuzzer_sys::fuzz_target;

use flashlab_workload::trace::{
    BlkparseAction, TimeUnit, TraceFormat, TraceOptions, TraceReader,
};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, trace)) = data.split_first() else {
        return;
    };
    let formats = TraceFormat::ALL;
    let format = formats[usize::from(selector) % formats.len()];
    let mut options = TraceOptions::new(format);
    options.skip_bad_lines = selector & 0x08 != 0;
    options.disksim_time_unit = [TimeUnit::Ns, TimeUnit::Us, TimeUnit::Ms, TimeUnit::S]
        [usize::from(selector >> 4) & 3];
    options.blkparse_action = if selector & 0x40 != 0 {
        BlkparseAction::Queue
    } else {
        BlkparseAction::Dispatch
    };
    if selector & 0x80 != 0 && format.has_volume() {
        options.volume = Some(u64::from(selector & 7));
    }
    let Ok(mut reader) = TraceReader::new(trace, "fuzz.trace", options) else {
        return;
    };
    // Every record is one line of input at least, so this ends with the input.
    while let Ok(Some(record)) = reader.next_record() {
        std::hint::black_box(record);
    }
});
