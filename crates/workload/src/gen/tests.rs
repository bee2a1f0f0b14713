use flashlab_engine::{IoKind, SeedTree};

use super::*;
use crate::job::{BlockSize, JobSpec, RandomDistribution, RwPattern, SizeSpec};

const MIB: u64 = 1 << 20;

fn job(rw: RwPattern) -> JobSpec {
    let mut j = JobSpec::new("t", 1);
    j.io.rw = rw;
    j
}

fn gen(j: &JobSpec, clone: u32, capacity: u64) -> IoGenerator {
    IoGenerator::new(j, clone, capacity, 512, SeedTree::new(42).child("job/0")).unwrap()
}

fn drain(g: &mut IoGenerator) -> Vec<GeneratedIo> {
    std::iter::from_fn(|| g.next_io()).collect()
}

#[test]
fn sequential_covers_the_region_once_per_loop() {
    let mut j = job(RwPattern::Write);
    j.target.size = Some(SizeSpec::Bytes(MIB));
    j.control.loops = 2;
    let mut g = gen(&j, 0, 16 * MIB);
    assert_eq!(g.region(), (0, MIB));
    assert_eq!(g.total_bytes(), Some(2 * MIB));
    let ios = drain(&mut g);
    assert_eq!(ios.len(), 512);
    for (i, io) in ios.iter().enumerate() {
        assert_eq!(io.kind, IoKind::Write);
        assert_eq!(
            io.offset_bytes,
            (i as u64 % 256) * 4096,
            "wraps at the region end"
        );
        assert_eq!(io.len_bytes, 4096);
    }
    assert_eq!(g.next_io(), None);
}

#[test]
fn region_follows_offset_increment_and_percentages() {
    let mut j = job(RwPattern::Read);
    j.target.offset = SizeSpec::Fraction(0.25);
    j.target.size = Some(SizeSpec::Fraction(0.25));
    j.target.offset_increment = SizeSpec::Bytes(MIB);
    let g = gen(&j, 2, 64 * MIB);
    assert_eq!(g.region(), (16 * MIB + 2 * MIB, 16 * MIB));
    // Default size: to the end of the device.
    let mut j = job(RwPattern::Read);
    j.target.offset = SizeSpec::Bytes(MIB);
    assert_eq!(gen(&j, 0, 8 * MIB).region(), (MIB, 7 * MIB));
}

#[test]
fn percentage_offsets_align_to_the_minimum_block_size() {
    // A capacity that is a whole number of 512 B sectors but not of 4 KiB blocks: 25% of it
    // falls between two 4 KiB blocks, and fio aligns the offset down to the block size.
    let capacity = 1_000_004 * 512;
    let mut j = job(RwPattern::RandWrite);
    j.block.bs = [
        BlockSize::Fixed(4096),
        BlockSize::Fixed(4096),
        BlockSize::Fixed(4096),
    ];
    j.target.offset_increment = SizeSpec::Fraction(0.25);
    j.target.size = Some(SizeSpec::Fraction(0.25));
    for clone in 0..4 {
        let (offset, _) = gen(&j, clone, capacity).region();
        assert_eq!(offset % 4096, 0, "clone {clone}: offset {offset}");
        assert!(offset <= u64::from(clone) * capacity / 4, "clone {clone}");
    }
    let mut g = gen(&j, 1, capacity);
    assert!(drain(&mut g).iter().all(|io| io.offset_bytes % 4096 == 0));
}

#[test]
fn bad_regions_and_alignment_are_errors_naming_the_job() {
    let seeds = SeedTree::new(1);
    let mut j = job(RwPattern::Read);
    j.target.offset = SizeSpec::Bytes(8 * MIB);
    let e = IoGenerator::new(&j, 0, 8 * MIB, 512, seeds).unwrap_err();
    assert!(
        matches!(e, JobError::RegionPastEnd { .. }) && e.to_string().starts_with("job t:"),
        "{e}"
    );
    j.target.offset = SizeSpec::Bytes(0);
    j.target.size = Some(SizeSpec::Bytes(16 * MIB));
    assert!(matches!(
        IoGenerator::new(&j, 0, 8 * MIB, 512, seeds),
        Err(JobError::RegionPastEnd { .. })
    ));
    j.target.size = Some(SizeSpec::Bytes(2048));
    assert!(matches!(
        IoGenerator::new(&j, 0, 8 * MIB, 512, seeds),
        Err(JobError::RegionTooSmall { .. })
    ));
    let mut j = job(RwPattern::Read);
    j.block.bs[0] = BlockSize::Fixed(1000);
    let e = IoGenerator::new(&j, 0, 8 * MIB, 512, seeds).unwrap_err();
    assert!(e.to_string().contains("bs for reads is 1000 bytes"), "{e}");
    // A size only the write direction uses does not matter to a read job.
    let mut j = job(RwPattern::Read);
    j.block.bs[1] = BlockSize::Fixed(1000);
    assert!(IoGenerator::new(&j, 0, 8 * MIB, 512, seeds).is_ok());
    assert!(matches!(
        IoGenerator::new(&j, 0, 0, 512, seeds),
        Err(JobError::BadDevice { .. })
    ));
}

#[test]
fn random_map_visits_every_block_once_per_pass() {
    let mut j = job(RwPattern::RandWrite);
    j.target.size = Some(SizeSpec::Bytes(1000 * 4096)); // not a power of two
    j.control.loops = 3;
    let mut g = gen(&j, 0, 64 * MIB);
    let ios = drain(&mut g);
    assert_eq!(ios.len(), 3000);
    let mut orders = Vec::new();
    for pass in ios.chunks(1000) {
        let mut seen = vec![false; 1000];
        for io in pass {
            assert_eq!(io.offset_bytes % 4096, 0);
            let b = (io.offset_bytes / 4096) as usize;
            assert!(!seen[b], "block {b} twice in a pass");
            seen[b] = true;
        }
        orders.push(pass.iter().map(|io| io.offset_bytes).collect::<Vec<_>>());
    }
    assert_ne!(orders[0], orders[1], "each pass has a new order");
}

#[test]
fn norandommap_draws_independently() {
    let mut j = job(RwPattern::RandRead);
    j.target.size = Some(SizeSpec::Bytes(1000 * 4096));
    j.io.norandommap = true;
    let ios = drain(&mut gen(&j, 0, 64 * MIB));
    let mut blocks: Vec<u64> = ios.iter().map(|io| io.offset_bytes / 4096).collect();
    blocks.sort_unstable();
    blocks.dedup();
    // 1000 independent draws over 1000 blocks cover about 1 - 1/e of them.
    assert!((550..720).contains(&blocks.len()), "{}", blocks.len());
}

#[test]
fn seeds_make_runs_reproducible_and_clones_different() {
    let mut j = job(RwPattern::RandRw);
    j.target.size = Some(SizeSpec::Bytes(MIB));
    let a = drain(&mut gen(&j, 0, 64 * MIB));
    assert_eq!(a, drain(&mut gen(&j, 0, 64 * MIB)));
    assert_ne!(a, drain(&mut gen(&j, 1, 64 * MIB)));
    j.io.randseed = Some(7);
    let s = drain(&mut gen(&j, 0, 64 * MIB));
    let other_tree = IoGenerator::new(&j, 0, 64 * MIB, 512, SeedTree::new(99)).unwrap();
    assert_eq!(
        s,
        drain(&mut other_tree.clone()),
        "randseed overrides the seed tree"
    );
    assert_ne!(s, a);
}

#[test]
fn rwmix_share_and_budget_count_reads_and_writes() {
    let mut j = job(RwPattern::RandRw);
    j.io.rwmixread = 70;
    j.target.size = Some(SizeSpec::Bytes(64 * MIB));
    let ios = drain(&mut gen(&j, 0, 64 * MIB));
    assert_eq!(ios.len(), 16384);
    let reads = ios.iter().filter(|io| io.kind == IoKind::Read).count() as f64;
    assert!((reads / 16384.0 - 0.7).abs() < 0.015, "{reads}");
}

#[test]
fn io_size_and_number_ios_cap_the_budget() {
    let mut j = job(RwPattern::Read);
    j.target.size = Some(SizeSpec::Bytes(MIB));
    j.target.io_size = Some(SizeSpec::Bytes(3 * MIB));
    let mut g = gen(&j, 0, 8 * MIB);
    assert_eq!(g.total_bytes(), Some(3 * MIB));
    assert_eq!(drain(&mut g).len(), 768);
    j.target.number_ios = Some(10);
    let mut g = gen(&j, 0, 8 * MIB);
    assert_eq!(g.total_bytes(), Some(40960));
    assert_eq!(drain(&mut g).len(), 10);
}

/// fio 3.33 on a 64 MiB file: `size=50%` with `io_size=25%` transfers 8 MiB, a quarter of
/// the region, not of the file.
#[test]
fn an_io_size_percentage_is_of_the_region() {
    let mut j = job(RwPattern::RandWrite);
    j.target.size = Some(SizeSpec::Fraction(0.5));
    j.target.io_size = Some(SizeSpec::Fraction(0.25));
    let mut g = gen(&j, 0, 64 * MIB);
    assert_eq!(g.region(), (0, 32 * MIB));
    assert_eq!(g.total_bytes(), Some(8 * MIB), "12.5% of the device");
    let ios = drain(&mut g);
    assert_eq!(ios.len(), 2048);
    assert!(ios
        .iter()
        .all(|io| io.offset_bytes + io.len_bytes <= 32 * MIB));
    // Each clone's own region, and per loop.
    j.target.offset_increment = SizeSpec::Fraction(0.5);
    j.control.loops = 2;
    let g = gen(&j, 1, 64 * MIB);
    assert_eq!(g.region(), (32 * MIB, 32 * MIB));
    assert_eq!(g.total_bytes(), Some(16 * MIB));
    // Without size the region runs to the end of the device: offset=16m leaves 48 MiB.
    let mut j = job(RwPattern::Read);
    j.target.offset = SizeSpec::Bytes(16 * MIB);
    j.target.io_size = Some(SizeSpec::Fraction(0.5));
    assert_eq!(gen(&j, 0, 64 * MIB).total_bytes(), Some(24 * MIB));
    // Rounded down: 33% of 1 MiB + 4 KiB is 347,381.76 bytes, a budget of whole 512 B blocks.
    j.target.size = Some(SizeSpec::Bytes(MIB + 4096));
    j.target.io_size = Some(SizeSpec::Fraction(0.33));
    assert_eq!(
        gen(&j, 0, 64 * MIB).total_bytes(),
        Some(347_381 / 512 * 512)
    );
}

#[test]
fn time_based_never_ends() {
    let mut j = job(RwPattern::Read);
    j.target.size = Some(SizeSpec::Bytes(64 * 1024));
    j.time.time_based = true;
    let mut g = gen(&j, 0, 8 * MIB);
    assert_eq!(g.total_bytes(), None);
    for i in 0..1000u64 {
        assert_eq!(g.next_io().unwrap().offset_bytes, (i % 16) * 4096);
    }
}

#[test]
fn sequential_skip_and_random_runs() {
    let mut j = job(RwPattern::Write);
    j.target.size = Some(SizeSpec::Bytes(MIB));
    j.io.rw_seq_skip_bytes = 4096;
    let ios: Vec<u64> = drain(&mut gen(&j, 0, 8 * MIB))
        .iter()
        .take(4)
        .map(|io| io.offset_bytes)
        .collect();
    assert_eq!(ios, vec![0, 8192, 16384, 24576]);

    let mut j = job(RwPattern::RandRead);
    j.target.size = Some(SizeSpec::Bytes(MIB));
    j.io.rw_sequence_count = 4;
    let ios = drain(&mut gen(&j, 0, 8 * MIB));
    for run in ios.chunks(4) {
        for w in run.windows(2) {
            let next = if w[0].offset_bytes + 4096 >= MIB {
                0
            } else {
                w[0].offset_bytes + 4096
            };
            assert_eq!(w[1].offset_bytes, next);
        }
    }
    j.io.rw_sequencer = crate::job::RwSequencer::Identical;
    let ios = drain(&mut gen(&j, 0, 8 * MIB));
    assert!(ios
        .chunks(4)
        .all(|run| run.iter().all(|io| io.offset_bytes == run[0].offset_bytes)));
}

#[test]
fn trimwrite_trims_then_writes_the_same_block() {
    let mut j = job(RwPattern::TrimWrite);
    j.target.size = Some(SizeSpec::Bytes(64 * 1024));
    let ios = drain(&mut gen(&j, 0, 8 * MIB));
    assert_eq!(ios.len(), 32, "the budget counts the writes");
    for (i, pair) in ios.chunks(2).enumerate() {
        assert_eq!(pair[0].kind, IoKind::Trim);
        assert_eq!(pair[1].kind, IoKind::Write);
        assert_eq!(pair[0].offset_bytes, i as u64 * 4096);
        assert_eq!(
            (pair[0].offset_bytes, pair[0].len_bytes),
            (pair[1].offset_bytes, pair[1].len_bytes)
        );
    }
    let mut j = job(RwPattern::RandTrim);
    j.target.size = Some(SizeSpec::Bytes(64 * 1024));
    let ios = drain(&mut gen(&j, 0, 8 * MIB));
    assert_eq!(ios.len(), 16);
    assert!(ios.iter().all(|io| io.kind == IoKind::Trim));
}

#[test]
fn mixed_block_sizes_are_aligned_and_weighted() {
    let mut j = job(RwPattern::RandRead);
    j.target.size = Some(SizeSpec::Bytes(64 * MIB));
    j.block.bs[0] = BlockSize::Split(vec![(4096, 50), (16384, 30), (65536, 20)]);
    j.io.norandommap = true;
    j.target.number_ios = Some(20_000);
    let ios = drain(&mut gen(&j, 0, 64 * MIB));
    let share = |s| ios.iter().filter(|io| io.len_bytes == s).count() as f64 / ios.len() as f64;
    assert!((share(4096) - 0.5).abs() < 0.02 && (share(65536) - 0.2).abs() < 0.02);
    for io in &ios {
        assert_eq!(io.offset_bytes % 4096, 0);
        assert!(io.offset_bytes + io.len_bytes <= 64 * MIB);
    }
    let mut j = job(RwPattern::RandWrite);
    j.block.bs[1] = BlockSize::Range {
        min: 4096,
        max: 16384,
    };
    j.block.block_align_bytes[1] = Some(8192);
    j.target.number_ios = Some(2000);
    let ios = drain(&mut gen(&j, 0, 64 * MIB));
    let mut lens: Vec<u64> = ios.iter().map(|io| io.len_bytes).collect();
    lens.sort_unstable();
    lens.dedup();
    assert_eq!(lens, vec![4096, 8192, 12288, 16384]);
    assert!(ios.iter().all(|io| io.offset_bytes % 8192 == 0));
}

fn block_counts(j: &JobSpec, blocks: u64, draws: u64) -> Vec<u64> {
    let mut j = j.clone();
    j.target.size = Some(SizeSpec::Bytes(blocks * 4096));
    j.target.number_ios = Some(draws);
    j.time.time_based = true;
    let mut counts = vec![0u64; blocks as usize];
    for io in drain(&mut gen(&j, 0, blocks * 4096)) {
        counts[(io.offset_bytes / 4096) as usize] += 1;
    }
    counts
}

#[test]
fn zipf_top_decile_share() {
    let mut j = job(RwPattern::RandRead);
    j.io.random_distribution = RandomDistribution::Zipf(1.2);
    let mut counts = block_counts(&j, 10_000, 200_000);
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let top: u64 = counts[..1000].iter().sum();
    let w: Vec<f64> = (1..=10_000).map(|k| (k as f64).powf(-1.2)).collect();
    let expected = w[..1000].iter().sum::<f64>() / w.iter().sum::<f64>();
    let got = top as f64 / 200_000.0;
    assert!((got - expected).abs() < 0.02, "{got} vs {expected}");
    // The hot blocks are scattered, not the first blocks of the region.
    let hottest = block_counts(&j, 10_000, 200_000)
        .iter()
        .enumerate()
        .max_by_key(|(_, c)| **c)
        .unwrap()
        .0;
    assert_ne!(hottest, 0);
}

#[test]
fn zoned_shares_within_tolerance() {
    let mut j = job(RwPattern::RandRead);
    j.io.random_distribution =
        RandomDistribution::Zoned(vec![(60.0, 10.0), (30.0, 20.0), (8.0, 30.0), (2.0, 40.0)]);
    let counts = block_counts(&j, 1000, 100_000);
    let zone = |a: usize, b: usize| counts[a..b].iter().sum::<u64>() as f64 / 100_000.0;
    for (got, want) in [
        (zone(0, 100), 0.6),
        (zone(100, 300), 0.3),
        (zone(300, 600), 0.08),
        (zone(600, 1000), 0.02),
    ] {
        assert!((got - want).abs() < 0.01, "{got} vs {want}");
    }
    let mut j = job(RwPattern::RandRead);
    j.io.random_distribution =
        RandomDistribution::ZonedAbs(vec![(90.0, 400 * 1024), (10.0, 3600 * 1024)]);
    let counts = block_counts(&j, 1000, 100_000);
    let hot = counts[..100].iter().sum::<u64>() as f64 / 100_000.0;
    assert!((hot - 0.9).abs() < 0.01, "{hot}");
    j.io.random_distribution = RandomDistribution::ZonedAbs(vec![(100.0, 8 * MIB)]);
    assert!(matches!(
        IoGenerator::new(&j, 0, MIB, 512, SeedTree::new(1)),
        Err(JobError::ZonesPastRegion { .. })
    ));
}

#[test]
fn pareto_and_normal_shapes() {
    let mut j = job(RwPattern::RandRead);
    j.io.random_distribution = RandomDistribution::Pareto(0.2);
    let mut counts = block_counts(&j, 10_000, 100_000);
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let hot = counts[..2000].iter().sum::<u64>() as f64 / 100_000.0;
    assert!(hot > 0.79, "{hot}");
    j.io.random_distribution = RandomDistribution::Normal(5.0);
    let counts = block_counts(&j, 10_000, 100_000);
    let within = counts[4500..5500].iter().sum::<u64>() as f64 / 100_000.0;
    assert!((within - 0.683).abs() < 0.02, "one sigma: {within}");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn distribution() -> impl Strategy<Value = RandomDistribution> {
        prop_oneof![
            Just(RandomDistribution::Random),
            (0.1f64..3.0)
                .prop_filter("θ ≠ 1", |t| (t - 1.0).abs() > 1e-3)
                .prop_map(RandomDistribution::Zipf),
            (0.01f64..0.99).prop_map(RandomDistribution::Pareto),
            (0.1f64..100.0).prop_map(RandomDistribution::Normal),
            Just(RandomDistribution::Zoned(vec![(50.0, 1.0), (50.0, 99.0)])),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Whatever the job, every I/O is inside the region, aligned to the logical block
        /// and of a size the job asked for; generation ends unless time_based.
        #[test]
        fn ios_stay_inside_the_region(
            pattern in prop::sample::select(RwPattern::NAMES.iter().map(|p| p.1).collect::<Vec<_>>()),
            blocks in 1u64..300,
            bs_blocks in 1u64..9,
            dist in distribution(),
            norandommap in any::<bool>(),
            seq in 1u32..5,
            skip in 0u64..3,
            offset_blocks in 0u64..50,
            seed in any::<u64>(),
        ) {
            let mut j = job(pattern);
            let bs = bs_blocks * 512;
            j.block.bs = [BlockSize::Fixed(bs), BlockSize::Range { min: 512, max: bs }, BlockSize::Split(vec![(512, 50), (bs, 50)])];
            j.target.size = Some(SizeSpec::Bytes(blocks * 4096));
            j.target.offset = SizeSpec::Bytes(offset_blocks * 512);
            j.io.random_distribution = dist;
            j.io.norandommap = norandommap;
            j.io.rw_sequence_count = seq;
            j.io.rw_seq_skip_bytes = skip * 512;
            let capacity = (blocks * 4096 + offset_blocks * 512).max(bs);
            let g = IoGenerator::new(&j, 0, capacity, 512, SeedTree::new(seed));
            prop_assert!(g.is_ok(), "{:?}", g.as_ref().err());
            let mut g = g.unwrap();
            let (start, len) = g.region();
            let mut n = 0u64;
            while let Some(io) = g.next_io() {
                prop_assert!(io.offset_bytes >= start && io.offset_bytes + io.len_bytes <= start + len, "{io:?} outside {start}+{len}");
                prop_assert_eq!(io.offset_bytes % 512, 0);
                prop_assert!(io.len_bytes > 0 && io.len_bytes % 512 == 0);
                n += 1;
                prop_assert!(n <= 4 * blocks * 8 + 2, "does not end");
            }
        }
    }
}

/// Jobs on the plain path (one direction, one block size, the random map) draw exactly the
/// I/Os the general path draws: across passes (re-keyed maps), with a byte budget that cuts
/// the last block, within an offset region, and with a count of I/Os.
#[test]
fn the_plain_path_draws_what_the_general_path_draws() {
    let mut jobs = Vec::new();
    let mut j = job(RwPattern::RandRead);
    j.target.size = Some(SizeSpec::Bytes(MIB));
    j.control.loops = 3;
    jobs.push(j);
    let mut j = job(RwPattern::RandWrite);
    j.block.bs = [
        BlockSize::Fixed(4096),
        BlockSize::Fixed(12_288),
        BlockSize::Fixed(4096),
    ];
    j.target.offset = SizeSpec::Bytes(3 * MIB);
    j.target.size = Some(SizeSpec::Bytes(MIB + 4096));
    j.target.io_size = Some(SizeSpec::Bytes(5 * MIB + 1024));
    jobs.push(j);
    let mut j = job(RwPattern::RandRead);
    j.target.number_ios = Some(700);
    jobs.push(j);
    for (k, j) in jobs.iter().enumerate() {
        let mut plain = gen(j, 1, 16 * MIB);
        assert!(plain.plain_map.is_some(), "job {k} is on the plain path");
        let mut general = gen(j, 1, 16 * MIB);
        general.plain_map = None;
        let (a, b) = (drain(&mut plain), drain(&mut general));
        assert!(a.len() > 200, "job {k}: {} I/Os", a.len());
        assert_eq!(a, b, "job {k}");
    }
    // Mixed directions, size ranges and trimwrite pairs stay on the general path.
    for rw in [RwPattern::RandRw, RwPattern::RandTrimWrite, RwPattern::Read] {
        assert!(gen(&job(rw), 0, 16 * MIB).plain_map.is_none(), "{rw:?}");
    }
}

#[test]
fn percentage_random_mixes_sequential_runs_into_a_random_job() {
    let followers = |ios: &[GeneratedIo]| {
        ios.windows(2)
            .filter(|w| w[1].offset_bytes == w[0].offset_bytes + w[0].len_bytes)
            .count()
    };
    let mut j = job(RwPattern::RandRead);
    j.target.size = Some(SizeSpec::Bytes(64 * MIB));
    let all_random = drain(&mut gen(&j, 0, 64 * MIB));
    // 100 (fio's default) changes nothing, not even the random draws.
    j.io.percentage_random = [100; 3];
    assert_eq!(drain(&mut gen(&j, 0, 64 * MIB)), all_random);
    assert!(followers(&all_random) < 10);
    // 0: every I/O follows the one before.
    j.io.percentage_random = [0; 3];
    let seq = drain(&mut gen(&j, 0, 64 * MIB));
    assert_eq!(followers(&seq), seq.len() - 1);
    assert_eq!(seq[0].offset_bytes, 0);
    // 80 (Iometer's workstation pattern): about a fifth follow the previous I/O, and a
    // sequential I/O continues from wherever the last random one went.
    j.io.percentage_random = [80; 3];
    let mixed = drain(&mut gen(&j, 0, 64 * MIB));
    let share = followers(&mixed) as f64 / (mixed.len() - 1) as f64;
    assert!((0.17..0.23).contains(&share), "{share}");
    // Per direction: reads random, writes sequential.
    let mut j = job(RwPattern::RandRw);
    j.target.size = Some(SizeSpec::Bytes(64 * MIB));
    j.io.percentage_random = [100, 0, 0];
    let ios = drain(&mut gen(&j, 0, 64 * MIB));
    let writes: Vec<GeneratedIo> = ios
        .into_iter()
        .filter(|io| io.kind == IoKind::Write)
        .collect();
    assert_eq!(followers(&writes), writes.len() - 1);
}

#[test]
fn fill_device_runs_from_the_offset_to_the_end() {
    let mut j = JobSpec::new("fill", 1);
    j.io.rw = RwPattern::Write;
    j.target.size = Some(SizeSpec::Bytes(1 << 20));
    j.target.offset = SizeSpec::Bytes(1 << 30);
    j.target.fill_device = true;
    let g = IoGenerator::new(&j, 0, 4 << 30, 4096, SeedTree::new(1)).unwrap();
    assert_eq!(g.region(), (1 << 30, 3 << 30));
}

#[test]
fn offset_align_aligns_a_percentage_offset_up() {
    let mut j = JobSpec::new("a", 1);
    j.io.rw = RwPattern::Read;
    j.target.offset = SizeSpec::Fraction(0.1);
    let cap = 10_000 * 4096;
    let g = IoGenerator::new(&j, 0, cap, 4096, SeedTree::new(1)).unwrap();
    assert_eq!(g.region().0, 1_000 * 4096);
    j.target.offset_align_bytes = 1 << 20;
    let g = IoGenerator::new(&j, 0, cap, 4096, SeedTree::new(1)).unwrap();
    assert_eq!(g.region().0, 4 << 20);
    // An alignment that cannot be met is refused, not wrapped.
    j.target.offset_align_bytes = u64::MAX - 1;
    assert!(IoGenerator::new(&j, 0, cap, 4096, SeedTree::new(1)).is_err());
}

/// A strided job: `rw`, 4 KiB blocks, fio's `zonesize`, `zonerange` and `zoneskip`, from
/// `offset` for `io_size` bytes.
fn strided(rw: RwPattern, zone: [u64; 3], offset: u64, io_size: u64) -> JobSpec {
    let mut j = job(rw);
    j.block.bs = std::array::from_fn(|_| BlockSize::Fixed(4096));
    j.target.offset = SizeSpec::Bytes(offset);
    j.target.io_size = Some(SizeSpec::Bytes(io_size));
    for (name, v) in [("zonemode", "strided".to_string())].into_iter().chain(
        ["zonesize", "zonerange", "zoneskip"]
            .into_iter()
            .zip(zone.map(|b| b.to_string())),
    ) {
        j.zoned.set(name, &v, 1024).unwrap();
    }
    j
}

fn offsets_k(j: &JobSpec, capacity: u64) -> Vec<u64> {
    drain(&mut gen(j, 0, capacity))
        .iter()
        .map(|io| io.offset_bytes / 1024)
        .collect()
}

#[test]
fn strided_zones_issue_the_offsets_fio_issues() {
    const K: u64 = 1024;
    // What fio's setup_strided_zone_mode and get_next_seq_offset give: zonesize bytes in a
    // zone, then zonerange + zoneskip on.
    let j = strided(RwPattern::Write, [8 * K, 16 * K, 16 * K], 0, 64 * K);
    assert_eq!(
        offsets_k(&j, MIB),
        [0, 4, 32, 36, 64, 68, 96, 100, 128, 132, 160, 164, 192, 196, 224, 228]
    );
    // zonesize above zonerange: the zone is gone through again (fio's "maintain zone").
    let j = strided(RwPattern::Write, [16 * K, 8 * K, 0], 0, 32 * K);
    assert_eq!(offsets_k(&j, MIB), [0, 4, 0, 4, 8, 12, 8, 12]);
    // A zone that would start past the device's end starts again at the job's offset.
    let j = strided(RwPattern::Write, [8 * K, 8 * K, 8 * K], 32 * K, 48 * K);
    assert_eq!(
        offsets_k(&j, 64 * K),
        [32, 36, 48, 52, 32, 36, 48, 52, 32, 36, 48, 52]
    );
    // zonerange defaults to zonesize.
    let mut j = strided(RwPattern::Write, [8 * K, 0, 24 * K], 0, 32 * K);
    j.zoned.zone_range = 0;
    assert_eq!(offsets_k(&j, MIB), [0, 4, 32, 36, 64, 68, 96, 100]);
    // Random I/O is drawn in the zone, the random map visiting each of its blocks once.
    let j = strided(RwPattern::RandWrite, [16 * K, 16 * K, 16 * K], 0, 192 * K);
    let got = offsets_k(&j, MIB);
    for (z, chunk) in got.chunks(4).enumerate() {
        let mut c = chunk.to_vec();
        c.sort_unstable();
        let base = 32 * z as u64 % 1024;
        assert_eq!(c, [base, base + 4, base + 8, base + 12], "{got:?}");
    }
    // The same walk from a job file, fio's option names.
    let text = "[j]\nrw=write\nbs=4k\nzonemode=strided\nzonesize=8k\nzonerange=16k\nzoneskip=16k\nio_size=64k\n";
    let parsed = crate::parse_str(text, "t.fio", &|_| None).unwrap();
    assert_eq!(
        offsets_k(&parsed.jobs[0], MIB),
        [0, 4, 32, 36, 64, 68, 96, 100, 128, 132, 160, 164, 192, 196, 224, 228]
    );
    // Without a zonemode (fio's default none) zoneskip and zonerange change nothing.
    let mut plain = job(RwPattern::Write);
    plain.block.bs = std::array::from_fn(|_| BlockSize::Fixed(4096));
    plain.target.io_size = Some(SizeSpec::Bytes(16 * K));
    plain.zoned.set("zoneskip", "8192", 1024).unwrap();
    plain.zoned.set("zonerange", "8192", 1024).unwrap();
    assert_eq!(offsets_k(&plain, MIB), [0, 4, 8, 12]);
}

#[test]
fn strided_zones_fio_refuses_are_errors_naming_the_option() {
    let mut j = job(RwPattern::Write);
    j.zoned.set("zonemode", "strided", 1024).unwrap();
    let e = IoGenerator::new(&j, 0, MIB, 512, SeedTree::new(1)).unwrap_err();
    assert!(e.to_string().contains("needs zonesize="), "{e}");
    j.zoned.set("zonesize", "2m", 1024).unwrap();
    let e = IoGenerator::new(&j, 0, MIB, 512, SeedTree::new(1)).unwrap_err();
    assert!(e.to_string().contains("zonerange (or zonesize)"), "{e}");
    // fio 3.33 refuses a zonesize with zonemode=none, its default ("--zonemode=none and
    // --zonesize are not compatible"), whatever its manual says of the mode ignoring it.
    let mut z = job(RwPattern::Write);
    z.zoned.set("zonesize", "8k", 1024).unwrap();
    let e = IoGenerator::new(&z, 0, MIB, 512, SeedTree::new(1)).unwrap_err();
    assert!(
        e.to_string()
            .contains("--zonemode=none and --zonesize are not compatible"),
        "{e}"
    );
}

#[test]
fn a_sequential_zbd_job_skips_zoneskip_after_each_zone() {
    const K: u64 = 1024;
    // fio's setup_zbd_zone_mode: a zone of 16 KiB done, then 16 + 32 KiB on; past the
    // device.s end the job is done. A random job ignores zoneskip.
    let mut j = job(RwPattern::Write);
    j.block.bs = std::array::from_fn(|_| BlockSize::Fixed(8 * K));
    j.target.io_size = Some(SizeSpec::Bytes(64 * K));
    let mut g = IoGenerator::new(&j, 0, 256 * K, 512, SeedTree::new(1)).unwrap();
    g.zbd_zone_skip(16 * K, 32 * K, 256 * K, false);
    let got: Vec<u64> = std::iter::from_fn(|| g.next_io())
        .map(|io| io.offset_bytes / K)
        .collect();
    assert_eq!(got, [0, 8, 48, 56, 96, 104, 144, 152]);
    let mut r = job(RwPattern::RandWrite);
    r.block.bs = std::array::from_fn(|_| BlockSize::Fixed(8 * K));
    r.target.io_size = Some(SizeSpec::Bytes(64 * K));
    let mut g = IoGenerator::new(&r, 0, 64 * K, 512, SeedTree::new(1)).unwrap();
    g.zbd_zone_skip(16 * K, 32 * K, 64 * K, false);
    let mut got: Vec<u64> = std::iter::from_fn(|| g.next_io())
        .map(|io| io.offset_bytes / K)
        .collect();
    got.sort_unstable();
    assert_eq!(got, [0, 8, 16, 24, 32, 40, 48, 56]);
}
