//! Instruction counts per simulated I/O, for `valgrind --tool=callgrind` (repeatable on a
//! loaded machine, unlike wall time). Each workload runs once; only `measured_*` is meant to be
//! counted (`--collect-atstart=no --toggle-collect='*measured*'`), so drive construction and
//! a read workload's fill are left out.
//!
//! ```sh
//! cargo bench -p flashlab-device --bench ops --no-run   # prints the binary's path
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured*' BINARY write
//! ```
//!
//! - `write`: the write benchmark of `timing.rs` cut to 2 GiB on 8 planes and one random
//!   pass: a sequential 128 KiB fill, then 524,288 uniform random 4 KiB writes at QD32.
//! - `write16k`: the same with 16 KiB pages (4 IUs per page, 64 pages per block: the blocks
//!   and IUs of `write`), as real NAND pages are.
//! - `write-fdp`: `write` with Flexible Data Placement on (and the power-loss protection it
//!   needs, which leaves `write`'s results as they are: same digest); the job writes through
//!   handle 0. Its difference from `write` is what FDP's placement and accounting cost.
//! - `write-fifo`: `write` with read priority off (`scheduler.read_priority = false`): each
//!   die first come, first served, without the queues that place reads among booked work.
//!   Its results differ from `write`'s; its count is what the rest of the drive costs.
//! - `floor`: the floor loop (`flashlab_ftl::floor`) on the same IUs and blocks.
//! - `floor-striped`: the floor with `write`'s layout (an open block per stream on each plane,
//!   its free-block reserve), which copies as much per host write as that drive.
//! - `read`: the default drive at `sim.scale=0.1` filled sequentially (not counted), then
//!   1,000,000 QD32 4 KiB random reads.

use std::hint::black_box;
use std::time::Instant;

use flashlab_device::{load_device_config, Ssd, DEFAULT_DEVICE};
use flashlab_engine::SeedTree;
use flashlab_ftl::floor::{FloorLayout, RandomWriteWorkload};
use flashlab_report::{render_json, RunResult};
use flashlab_runner::{run_jobs, RunOptions};
use flashlab_workload::{parse_str, JobFile};

const PLANES: u32 = 8;
const READS: u64 = 1_000_000;

fn jobs(text: &str) -> JobFile {
    parse_str(text, "ops.fio", &|_| None).expect("benchmark job file")
}

fn drive(sets: &[(&str, &str)]) -> Ssd {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let cfg = load_device_config(DEFAULT_DEVICE, &sets).expect("benchmark drive");
    Ssd::new(&cfg, SeedTree::new(1)).expect("benchmark drive")
}

fn workload() -> RandomWriteWorkload {
    let w = RandomWriteWorkload::new(2 << 30, 4096, 0.07, 256, 1.0);
    RandomWriteWorkload {
        blocks: w.blocks.div_ceil(PLANES) * PLANES,
        ..w
    }
}

/// The write benchmark's drive with pages of `page_kib` KiB (blocks of 1 MiB either way) and
/// the `extra` settings.
fn write_drive(w: &RandomWriteWorkload, page_kib: u32, extra: &[(&str, &str)]) -> Ssd {
    let blocks_per_plane = (w.blocks / PLANES).to_string();
    let user = format!("{}B", u64::from(w.user_ius) * 4096);
    let page = format!("{page_kib}KiB");
    let pages = (1024 / page_kib).to_string();
    let mut sets = vec![
        ("nand.cell", "mlc"),
        ("nand.page_size", &page),
        ("nand.pages_per_block", &pages),
        ("nand.channels", "2"),
        ("nand.dies_per_channel", "1"),
        ("nand.blocks_per_plane", &blocks_per_plane),
        ("capacity.user", &user),
        ("slc_cache.dynamic", "false"),
        ("ftl.wear_level_threshold", "0"),
        ("sim.scale", "1"),
    ];
    sets.extend_from_slice(extra);
    drive(&sets)
}

const WRITE_JOBS: &str = "
[global]
ioengine=libaio
[fill]
rw=write
bs=128k
iodepth=32
size=100%
[random]
stonewall
rw=randwrite
bs=4k
iodepth=32
norandommap=1
";

#[inline(never)]
fn measured_run(ssd: &mut Ssd, file: &JobFile, seed: u64) -> RunResult {
    run_jobs(
        file,
        ssd,
        &RunOptions::new(seed, "bench").with_host(flashlab_runner::host::HostModel::Off),
        &mut |_| {},
    )
    .expect("run")
}

/// Wall time of `f` in seconds (secondary to instruction counts on a shared machine).
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed().as_secs_f64())
}

fn ios(r: &RunResult) -> u64 {
    r.jobs
        .iter()
        .flat_map(|j| (0..3).map(|d| j.total_ios(d)))
        .sum()
}

/// Digests of the drive's counters and the run's fio JSON, to check that a change to the
/// model's speed left its results alone: of the whole text, and (`results`) of the text
/// without the counters' `memory_bytes`, which a change to a structure's size moves alone.
fn digest(ssd: &Ssd, r: &RunResult) -> String {
    let fnv = |text: &str| {
        text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
    };
    let json = render_json(r, true);
    let mut counters = ssd.counters_json();
    let text = format!("{counters}{json}");
    let whole = fnv(&text);
    if let Some(o) = counters.as_object_mut() {
        o.shift_remove("memory_bytes");
    }
    let results = fnv(&format!("{counters}{json}"));
    format!("{whole:016x} (results {results:016x})")
}

#[inline(never)]
fn measured_floor(w: &RandomWriteWorkload, layout: FloorLayout) -> f64 {
    w.run_floor_with(layout)
}

fn main() {
    let what: Vec<String> = std::env::args().skip(1).collect();
    let mut ran = false;
    const PLP: (&str, &str) = ("buffer.plp", "true");
    const FDP: (&str, &str) = ("fdp.enabled", "true");
    // (name, page size in KiB, settings beyond the write drive's)
    type WriteBench<'a> = (&'a str, u32, &'a [(&'a str, &'a str)]);
    const FIFO: (&str, &str) = ("scheduler.read_priority", "false");
    let writes: [WriteBench; 4] = [
        ("write", 4, &[]),
        ("write16k", 16, &[]),
        ("write-fdp", 4, &[PLP, FDP]),
        ("write-fifo", 4, &[FIFO]),
    ];
    for (name, page_kib, extra) in writes {
        if !what.iter().any(|a| a == name) {
            continue;
        }
        let w = workload();
        let mut ssd = write_drive(&w, page_kib, extra);
        let (r, secs) = timed(|| measured_run(&mut ssd, &jobs(WRITE_JOBS), 1));
        println!(
            "{name}: {} I/Os in {secs:.2} s, drive WA {:.4}, digest {}",
            ios(&r),
            ssd.ftl().counters().write_amplification(),
            digest(&ssd, &r)
        );
        ran = true;
    }
    for name in ["floor", "floor-striped"] {
        if !what.iter().any(|a| a == name) {
            continue;
        }
        let w = workload();
        let layout = if name == "floor" {
            FloorLayout::PLAIN
        } else {
            let ftl = write_drive(&w, 4, &[]).ftl().config().clone();
            FloorLayout::striped(
                ftl.dies * ftl.planes_per_die,
                ftl.ius_per_page,
                ftl.gc.foreground_free_blocks,
            )
        };
        let (wa, secs) = timed(|| black_box(measured_floor(&w, layout)));
        println!(
            "{name}: WA {wa:.4} in {secs:.2} s ({} user IUs, {} blocks, {layout:?})",
            w.user_ius, w.blocks
        );
        ran = true;
    }
    if what.iter().any(|a| a == "read") {
        let mut ssd = drive(&[("sim.scale", "0.1")]);
        let fill =
            jobs("[global]\nioengine=libaio\n[fill]\nrw=write\nbs=128k\niodepth=32\nsize=100%\n");
        let r = run_jobs(
            &fill,
            &mut ssd,
            &RunOptions::new(1, "bench").with_host(flashlab_runner::host::HostModel::Off),
            &mut |_| {},
        );
        let start = r
            .expect("fill")
            .jobs
            .iter()
            .map(|j| j.end_ns())
            .max()
            .unwrap_or(0);
        let file = jobs(&format!(
            "[read]\nioengine=libaio\nrw=randread\nbs=4k\niodepth=32\nnumber_ios={READS}\nstartdelay={}ns\n",
            start + 1_000_000
        ));
        let (r, secs) = timed(|| measured_run(&mut ssd, &file, 2));
        println!(
            "read: {} reads in {secs:.2} s ({:.2} M/s), digest {}",
            ios(&r),
            ios(&r) as f64 / secs * 1e-6,
            digest(&ssd, &r)
        );
        ran = true;
    }
    if !ran {
        println!(
            "ops: name one or more of write, write16k, write-fdp, write-fifo, floor, floor-striped, read (nothing run)"
        );
    }
}
