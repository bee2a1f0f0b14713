//! Any bytes given to the job parser must give a job file or a typed error, never a panic.
//! Run with `cargo fuzz run job_parser` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // `include` lines resolve against a directory that does not exist, so the fuzzer never
    // reads real files.
    let _ = flashlab_workload::parse_str(&text, "/nonexistent/fuzz.fio", &|_| None);
});
