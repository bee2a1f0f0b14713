//! Speed of the whole drive model (FTL + NAND timing + write buffer + link) driven by the fio
//! runner, against the bare greedy loop of `flashlab_ftl::floor` on the same geometry.
//!
//! - `random_write`: a 16 GiB drive (4 KiB IU, 256-page blocks, 7% spare) filled
//!   sequentially, then 4 KiB uniform random writes for twice its capacity at QD32. Twice: with
//!   16 KiB pages (four IUs per page, as the default drive and current NAND have) against the
//!   floor on 1,024-IU blocks, and with 4 KiB pages (one IU per page: every copied IU is a NAND
//!   read and program of its own, the timing model's worst case) against the floor on 256-IU
//!   blocks. Two floors each: `floor` with one open block per stream, and `floor_striped`
//!   with the drive's open blocks (a host and a GC block on each plane, pages striped over
//!   them) and free-block reserve, which copies as much per host write as the drive does (the
//!   WA of each is printed): the same mapping work, as the comparison asks.
//! - `random_read`: the default 256 GB drive filled sequentially once (not timed), then QD32
//!   4 KiB random reads; throughput is simulated reads per wall-clock second.
//!
//! Each write iteration is a whole run (seconds), so keep it short:
//! `cargo bench -p flashlab-device --bench timing -- --quick`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flashlab_device::{load_device_config, Ssd, DEFAULT_DEVICE};
use flashlab_engine::SeedTree;
use flashlab_ftl::floor::{FloorLayout, RandomWriteWorkload};
use flashlab_runner::{run_jobs, RunOptions};
use flashlab_workload::{parse_str, JobFile};

const USER_BYTES: u64 = 16 << 30;
const SPARE: f64 = 0.07;
/// Planes of the default preset (4 channels × 2 dies × 4 planes), kept for the 16 GiB drive.
const PLANES: u32 = 32;
const READS: u64 = 2_000_000;

fn jobs(text: &str) -> JobFile {
    parse_str(text, "bench.fio", &|_| None).expect("benchmark job file")
}

/// 256-page blocks, as the benchmark is stated.
const PAGES_PER_BLOCK: u32 = 256;

/// The default preset reshaped to the floor's geometry: pages of `page_kib` KiB, 256 pages per
/// block, enough blocks for 7% spare, no SLC cache (the floor has none). MLC, because a TLC
/// block must hold a multiple of 3 pages.
fn write_drive(w: &RandomWriteWorkload, page_kib: u32) -> Ssd {
    let blocks_per_plane = w.blocks.div_ceil(PLANES).to_string();
    let user = format!("{}B", u64::from(w.user_ius) * 4096);
    let page = format!("{page_kib}KiB");
    let pages = PAGES_PER_BLOCK.to_string();
    let sets: Vec<(String, String)> = [
        ("nand.cell", "mlc"),
        ("nand.page_size", page.as_str()),
        ("nand.pages_per_block", pages.as_str()),
        ("nand.blocks_per_plane", blocks_per_plane.as_str()),
        ("capacity.user", user.as_str()),
        ("slc_cache.dynamic", "false"),
        ("ftl.wear_level_threshold", "0"),
        ("sim.scale", "1"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let cfg = load_device_config(DEFAULT_DEVICE, &sets).expect("benchmark drive");
    Ssd::new(&cfg, SeedTree::new(1)).expect("benchmark drive")
}

const WRITE_JOBS: &str = "
[global]
direct=1
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
loops=2
";

/// Runs the write workload; returns the drive's write amplification.
fn run_writes(w: &RandomWriteWorkload, page_kib: u32, file: &JobFile) -> f64 {
    let mut ssd = write_drive(w, page_kib);
    run_jobs(
        file,
        &mut ssd,
        &RunOptions::new(1, "bench").with_host(flashlab_runner::host::HostModel::Off),
        &mut |_| {},
    )
    .expect("write run");
    ssd.ftl().counters().write_amplification()
}

fn random_write(c: &mut Criterion) {
    let file = jobs(WRITE_JOBS);
    // (page size in KiB, benchmark group): a group per page size, each with its own floor.
    for (page_kib, group) in [
        (16, "fill_then_2x_random_4k_16GiB_7pct_qd32_16k_pages"),
        (4, "fill_then_2x_random_4k_16GiB_7pct_qd32"),
    ] {
        let ius_per_block = PAGES_PER_BLOCK * page_kib / 4;
        let w = RandomWriteWorkload::new(USER_BYTES, 4096, SPARE, ius_per_block, 2.0);
        let w = RandomWriteWorkload {
            blocks: w.blocks.div_ceil(PLANES) * PLANES,
            ..w
        };
        let mut g = c.benchmark_group(group);
        g.sample_size(10);
        let mut said = false;
        g.bench_function("floor", |b| {
            if !std::mem::replace(&mut said, true) {
                println!(
                    "floor WA {:.3} ({} user IUs, {} blocks of {} IUs)",
                    w.run_floor(),
                    w.user_ius,
                    w.blocks,
                    w.ius_per_block
                );
            }
            b.iter(|| black_box(w.run_floor()))
        });
        // The drive's own layout: its planes, IUs per page and GC reserve.
        let ftl = write_drive(&w, page_kib).ftl().config().clone();
        let striped = FloorLayout::striped(
            ftl.dies * ftl.planes_per_die,
            ftl.ius_per_page,
            ftl.gc.foreground_free_blocks,
        );
        let mut said = false;
        g.bench_function("floor_striped", |b| {
            if !std::mem::replace(&mut said, true) {
                println!(
                    "striped floor WA {:.3} ({striped:?})",
                    w.run_floor_with(striped)
                );
            }
            b.iter(|| black_box(w.run_floor_with(striped)))
        });
        let mut said = false;
        g.bench_function("ssd_runner", |b| {
            if !std::mem::replace(&mut said, true) {
                println!("drive WA {:.3}", run_writes(&w, page_kib, &file));
            }
            b.iter(|| black_box(run_writes(&w, page_kib, &file)))
        });
        g.finish();
    }
}

/// The default drive after a sequential fill, and when its next run may start.
fn filled_default_drive() -> (Ssd, u64) {
    let cfg = load_device_config(DEFAULT_DEVICE, &[]).expect("default drive");
    let mut ssd = Ssd::new(&cfg, SeedTree::new(1)).expect("default drive");
    let fill =
        jobs("[global]\nioengine=libaio\n[fill]\nrw=write\nbs=128k\niodepth=32\nsize=100%\n");
    let r = run_jobs(
        &fill,
        &mut ssd,
        &RunOptions::new(1, "bench").with_host(flashlab_runner::host::HostModel::Off),
        &mut |_| {},
    )
    .expect("fill");
    let end = r.jobs.iter().map(|j| j.end_ns()).max().unwrap_or(0);
    (ssd, end + 1_000_000)
}

fn random_read(c: &mut Criterion) {
    let mut g = c.benchmark_group("randread_4k_qd32_256GB");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(READS));
    // Filled on first use only, so that filtering this benchmark out skips the fill.
    let mut drive: Option<(Ssd, u64)> = None;
    g.bench_function("ssd_runner", |b| {
        let (ssd, start_ns) = drive.get_or_insert_with(filled_default_drive);
        b.iter(|| {
            // Each run starts after the previous one: the device only moves forward in time.
            let file = jobs(&format!(
                "[read]\nioengine=libaio\nrw=randread\nbs=4k\niodepth=32\nnumber_ios={READS}\nstartdelay={start_ns}ns\n"
            ));
            let r = run_jobs(&file, ssd, &RunOptions::new(2, "bench").with_host(flashlab_runner::host::HostModel::Off), &mut |_| {})
                .expect("read run");
            *start_ns = r.jobs.iter().map(|j| j.end_ns()).max().unwrap_or(*start_ns) + 1_000_000;
            black_box(r.jobs.len())
        })
    });
    g.finish();
}

criterion_group!(benches, random_write, random_read);
criterion_main!(benches);
