//! The floor: how fast can bare page mapping with greedy GC go, and how close is the full FTL?
//! Workload: a 16 GiB drive (4 KiB IU, 256-page blocks, 7% spare factor) filled sequentially,
//! then 4 KiB uniform random writes for twice its capacity. No timing model in either.
//!
//! Each iteration is a whole run (seconds), so keep it short:
//! `cargo bench -p flashlab-ftl --bench floor -- --quick`.

use criterion::{criterion_group, criterion_main, Criterion};
use flashlab_ftl::floor::RandomWriteWorkload;
use flashlab_ftl::{Ftl, FtlConfig, GcConfig, GcUnit, SlcConfig, VictimPolicy, WearOut};
use std::hint::black_box;

const USER_BYTES: u64 = 16 << 30;
const SPARE: f64 = 0.07;

fn workload() -> RandomWriteWorkload {
    RandomWriteWorkload::new(USER_BYTES, 4096, SPARE, 256, 2.0)
}

fn ftl_config(w: &RandomWriteWorkload) -> FtlConfig {
    let (dies, planes) = (2, 2);
    FtlConfig {
        dies,
        planes_per_die: planes,
        blocks_per_plane: w.blocks.div_ceil(dies * planes),
        pages_per_block: 256,
        ius_per_page: 1,
        iu_bytes: 4096,
        bits_per_cell: 3,
        user_ius: u64::from(w.user_ius),
        gc: GcConfig {
            policy: VictimPolicy::Greedy,
            unit: GcUnit::Block,
            foreground_free_blocks: 2,
            background_free_blocks: 2,
        },
        slc: SlcConfig::NONE,
        wear_level_threshold: 0,
        parity_stripe_pages: 0,
        bad_blocks: 0,
        wear_out: WearOut::NEVER,
        power_loss_protection: true,
        track_versions: false,
        fdp: None,
    }
}

fn run_ftl(w: &RandomWriteWorkload) -> f64 {
    let mut ftl = Ftl::new(ftl_config(w)).expect("benchmark geometry");
    let mut ops = Vec::with_capacity(1 << 12);
    w.run(|lpn| {
        ftl.write(lpn, 1, false, false, 0, &mut ops);
        ops.clear();
    });
    ftl.counters().write_amplification()
}

fn bench(c: &mut Criterion) {
    let w = workload();
    println!(
        "floor WA {:.3}, full FTL WA {:.3} ({} user IUs, {} blocks)",
        w.run_floor(),
        run_ftl(&w),
        w.user_ius,
        w.blocks
    );
    let mut g = c.benchmark_group("fill_then_2x_random_4k_16GiB_7pct");
    g.sample_size(10);
    g.bench_function("floor", |b| b.iter(|| black_box(w.run_floor())));
    g.bench_function("ftl_write", |b| b.iter(|| black_box(run_ftl(&w))));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
