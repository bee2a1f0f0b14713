//! Small synthetic traces in every supported format, generated from a seed. The files in
//! `testdata/traces/` are this generator's output (a test checks they still match), so the
//! samples can be regenerated rather than edited by hand.

use flashlab_engine::SeedTree;

use super::TraceFormat;

/// One synthetic request, in units every format can express exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleRequest {
    /// µs since the first request.
    pub time_us: u64,
    pub read: bool,
    /// 512-byte sectors.
    pub sector: u64,
    pub sectors: u64,
    pub volume: u64,
}

/// Address range of the samples: 2 GiB, larger than the 1 GB test drive so that remapping
/// is exercised.
pub const SAMPLE_SPAN_SECTORS: u64 = 4 << 20;
/// Volumes (devices, disks) the samples spread over.
pub const SAMPLE_VOLUMES: u64 = 3;

/// `n` requests: 70% reads, 4–64 KiB in 4 KiB steps, 4 KiB-aligned offsets, arrivals 0–400 µs
/// apart, volumes 0–2.
pub fn sample_requests(n: usize, seed: u64) -> Vec<SampleRequest> {
    let mut rng = SeedTree::new(seed).child("trace-sample").stream();
    let mut time_us = 0;
    (0..n)
        .map(|i| {
            if i > 0 {
                time_us += rng.below(401);
            }
            SampleRequest {
                time_us,
                read: rng.below(10) < 7,
                sector: rng.below(SAMPLE_SPAN_SECTORS / 8) * 8,
                sectors: (1 + rng.below(16)) * 8,
                volume: rng.below(SAMPLE_VOLUMES),
            }
        })
        .collect()
}

/// The requests written in `format`.
pub fn render(format: TraceFormat, requests: &[SampleRequest]) -> String {
    let mut out = String::new();
    let write = match format {
        TraceFormat::Disksim => disksim,
        TraceFormat::Msr => msr,
        TraceFormat::Blkparse => blkparse,
        TraceFormat::FioIolog => fio_iolog,
        TraceFormat::Alibaba => alibaba,
        TraceFormat::Tencent => tencent,
    };
    write(&mut out, requests);
    out
}

/// One line of a trace.
fn push(out: &mut String, line: String) {
    out.push_str(&line);
    out.push('\n');
}

/// The requests in DiskSim (MQSim's convention) form.
fn disksim(out: &mut String, requests: &[SampleRequest]) {
    for r in requests {
        // MQSim's convention: time in ns, 1 = read.
        push(
            out,
            format!(
                "{} {} {} {} {}",
                r.time_us * 1_000,
                r.volume,
                r.sector,
                r.sectors,
                u8::from(r.read)
            ),
        );
    }
}

/// The requests in MSR Cambridge form.
fn msr(out: &mut String, requests: &[SampleRequest]) {
    // A FILETIME in February 2007, when the MSR Cambridge traces were taken.
    const BASE_TICKS: u64 = 128_166_372_000_000_000;
    for r in requests {
        push(
            out,
            format!(
                "{},sample,{},{},{},{},{}",
                BASE_TICKS + r.time_us * 10,
                r.volume,
                if r.read { "Read" } else { "Write" },
                r.sector * 512,
                r.sectors * 512,
                1_500 + r.sectors * 10
            ),
        );
    }
}

/// The requests in blkparse's text form.
fn blkparse(out: &mut String, requests: &[SampleRequest]) {
    // A queue, a dispatch 5 µs later and a completion for each request, then the
    // summary blkparse prints at the end.
    let mut seq = 0;
    for r in requests {
        let rwbs = if r.read { "R" } else { "W" };
        for (action, delay_us) in [("Q", 0), ("D", 5), ("C", 80)] {
            seq += 1;
            let t = r.time_us + delay_us;
            let tail = if action == "C" { "[0]" } else { "[sample]" };
            push(
                out,
                format!(
                    "  8,0    0 {seq:>8} {:>5}.{:09} {:>5}  {action} {rwbs:>3} {} + {} {tail}",
                    t / 1_000_000,
                    (t % 1_000_000) * 1_000,
                    4242,
                    r.sector,
                    r.sectors
                ),
            );
        }
    }
    push(out, "CPU0 (8,0):".to_string());
    push(
        out,
        format!(
            " Reads Queued:  {:>6}",
            requests.iter().filter(|r| r.read).count()
        ),
    );
}

/// The requests in fio's iolog version 3 form.
fn fio_iolog(out: &mut String, requests: &[SampleRequest]) {
    push(out, "fio version 3 iolog".to_string());
    push(out, "0 sample.dat add".to_string());
    push(out, "0 sample.dat open".to_string());
    let mut last = 0;
    for r in requests {
        last = r.time_us + 1;
        push(
            out,
            format!(
                "{} sample.dat {} {} {}",
                last,
                if r.read { "read" } else { "write" },
                r.sector * 512,
                r.sectors * 512
            ),
        );
    }
    push(out, format!("{} sample.dat close", last + 1));
}

/// The requests in the Alibaba block traces' form.
fn alibaba(out: &mut String, requests: &[SampleRequest]) {
    // µs since the epoch, January 2020 as in the published traces.
    const BASE_US: u64 = 1_577_808_000_000_000;
    for r in requests {
        push(
            out,
            format!(
                "{},{},{},{},{}",
                r.volume,
                if r.read { "R" } else { "W" },
                r.sector * 512,
                r.sectors * 512,
                BASE_US + r.time_us
            ),
        );
    }
}

/// The requests in the Tencent block traces' form.
fn tencent(out: &mut String, requests: &[SampleRequest]) {
    // Whole seconds (the format's resolution), October 2018 as in the published traces.
    const BASE_S: u64 = 1_538_323_200;
    for r in requests {
        push(
            out,
            format!(
                "{},{},{},{},{}",
                BASE_S + r.time_us / 1_000_000,
                r.sector,
                r.sectors,
                u8::from(!r.read),
                r.volume
            ),
        );
    }
}

/// File name of the committed sample of `format` under `testdata/traces/`.
pub fn sample_file_name(format: TraceFormat) -> String {
    let ext = match format {
        TraceFormat::Disksim => "trace",
        TraceFormat::Msr | TraceFormat::Alibaba | TraceFormat::Tencent => "csv",
        TraceFormat::Blkparse => "txt",
        TraceFormat::FioIolog => "log",
    };
    format!("sample-{}.{ext}", format.name())
}

/// Requests and seed of the committed samples.
pub const SAMPLE_REQUESTS: usize = 300;
pub const SAMPLE_SEED: u64 = 7;
