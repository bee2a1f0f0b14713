//! The round trip on drives whose parameters the fit does not see: each hidden drive runs
//! the plan (through the path `flashlab run` takes), the fit reads only those outputs, and
//! the fitted drive is compared with the hidden one on workloads the plan does not hold: a
//! 70/30 mix at QD8 and QD32 (IOPS, read p99), steady random writes over three quarters of
//! the capacity, and a sustained write of twice the cache. Throughput within 15%, p99
//! within 30%. The test runs six drives of 512 MiB (sized for CI; about a minute of CPU);
//! the same six at 1 GB are the `--ignored` benchmark (BENCHMARKS.md).

use flashlab_device::DeviceConfig;
use flashlab_fit::measure::{read_from, Source};
use flashlab_fit::simrun::run_plan;
use flashlab_fit::{fit, FitOptions, Plan};

/// A hidden drive: what the test varies, written as a description the fit never reads.
struct Hidden {
    name: &'static str,
    channels: u32,
    dies_per_channel: u32,
    planes: u32,
    t_read_us: u32,
    t_prog_us: u32,
    slc_t_prog_us: u32,
    cache: HiddenCache,
    fold: bool,
    pages_per_block: u32,
    blocks_per_plane: u32,
    buffer_kib: u32,
    read_priority: bool,
}

#[derive(Clone, Copy)]
enum HiddenCache {
    Dynamic(f64),
    StaticMib(u32),
}

/// A size of the round trip: the hidden drives' capacity and blocks, and the comparison
/// workloads' lengths.
#[derive(Clone, Copy)]
struct Scale {
    user_bytes: u64,
    pages_per_block: u32,
    /// I/Os of each mixed job.
    mix_ios: u32,
}

/// Sized for CI: half the benchmark's capacity, its blocks halved (768 KiB), so each plane
/// has as many blocks as at 1 GB.
const CI: Scale = Scale {
    user_bytes: 512 << 20,
    pages_per_block: 48,
    mix_ios: 20_000,
};

/// The benchmark: 1 GB, 1.5 MiB blocks.
const LONG: Scale = Scale {
    user_bytes: 1_000_000_000,
    pages_per_block: 96,
    mix_ios: 40_000,
};

impl Hidden {
    fn toml(&self, user_bytes: u64) -> String {
        let cache = match self.cache {
            HiddenCache::Dynamic(f) => format!("dynamic = true\ndynamic_max_fraction = {f}\n"),
            HiddenCache::StaticMib(m) => format!("dynamic = false\nstatic = \"{m}MiB\"\n"),
        };
        format!(
            r#"name = "{name}"
[capacity]
user = "{user_bytes}B"
[nand]
cell = "tlc"
channels = {ch}
dies_per_channel = {dpc}
planes_per_die = {planes}
page_size = "16KiB"
pages_per_block = {ppb}
blocks_per_plane = {bpp}
channel_rate = "1600MT/s"
t_read = "{tr}us"
t_prog = "{tp}us"
t_erase = "3ms"
slc_t_read = "{str}us"
slc_t_prog = "{stp}us"
[ftl]
iu = "4KiB"
gc_policy = "greedy"
[slc_cache]
{cache}when_full = "{when}"
[buffer]
size = "{buf}KiB"
[link]
kind = "pcie-gen4-x4"
[controller]
command_overhead = "4us"
[scheduler]
read_priority = {rp}
"#,
            name = self.name,
            ch = self.channels,
            dpc = self.dies_per_channel,
            planes = self.planes,
            ppb = self.pages_per_block,
            bpp = self.blocks_per_plane,
            tr = self.t_read_us,
            tp = self.t_prog_us,
            str = self.t_read_us * 3 / 5,
            stp = self.slc_t_prog_us,
            when = if self.fold { "fold" } else { "direct" },
            buf = self.buffer_kib,
            rp = self.read_priority,
        )
    }

    fn config(&self, user_bytes: u64) -> DeviceConfig {
        let text = self.toml(user_bytes);
        flashlab_device::parse_device_config(&format!("{}.toml", self.name), &text, &[])
            .unwrap_or_else(|e| panic!("{}: {e}", self.name))
    }
}

/// Blocks per plane of `scale`'s blocks on `units` planes for its capacity, `spare_pct`
/// over it and a static cache of `static_mib` SLC MiB (three native bytes each).
fn blocks(scale: Scale, units: u32, spare_pct: u32, static_mib: u32) -> u32 {
    let bytes =
        scale.user_bytes * (100 + spare_pct as u64) / 100 + static_mib as u64 * 3 * (1 << 20);
    (bytes / (units as u64 * scale.pages_per_block as u64 * 16384)) as u32 + 1
}

/// name, channels, dies per channel, planes, tR, tPROG, SLC tPROG (us), cache, fold, spare
/// (% over user), buffer (KiB), read priority. A static cache's size is at 1 GB; the
/// smaller scale's is in proportion.
#[rustfmt::skip]
type Row = (&'static str, u32, u32, u32, u32, u32, u32, HiddenCache, bool, u32, u32, bool);

#[rustfmt::skip]
const DRIVES: [Row; 6] = [
    ("h1", 2, 1, 2, 50, 600, 200, HiddenCache::Dynamic(0.25), false, 10, 2048, false),
    ("h2", 4, 1, 2, 60, 900, 250, HiddenCache::Dynamic(0.15), true, 15, 4096, true),
    ("h3", 2, 2, 1, 45, 500, 150, HiddenCache::StaticMib(64), false, 8, 1024, false),
    ("h4", 4, 2, 2, 55, 1200, 300, HiddenCache::Dynamic(0.3), false, 20, 8192, true),
    ("h5", 2, 1, 4, 40, 700, 180, HiddenCache::StaticMib(128), true, 12, 2048, false),
    ("h6", 4, 1, 4, 70, 800, 220, HiddenCache::Dynamic(0.2), true, 25, 16384, true),
];

fn hidden_drives(scale: Scale) -> Vec<Hidden> {
    DRIVES
        .iter()
        .map(
            |&(name, ch, dpc, planes, tr, tp, stp, cache, fold, spare, buf, rp)| {
                let cache = match cache {
                    HiddenCache::StaticMib(m) => HiddenCache::StaticMib(
                        (u64::from(m) * scale.user_bytes / LONG.user_bytes).max(8) as u32,
                    ),
                    dynamic => dynamic,
                };
                let static_mib = match cache {
                    HiddenCache::StaticMib(m) => m,
                    HiddenCache::Dynamic(_) => 0,
                };
                Hidden {
                    name,
                    channels: ch,
                    dies_per_channel: dpc,
                    planes,
                    t_read_us: tr,
                    t_prog_us: tp,
                    slc_t_prog_us: stp,
                    cache,
                    fold,
                    pages_per_block: scale.pages_per_block,
                    blocks_per_plane: blocks(scale, ch * dpc * planes, spare, static_mib),
                    buffer_kib: buf,
                    read_priority: rp,
                }
            },
        )
        .collect()
}

/// What a workload of the comparison gave.
#[derive(Debug, Clone, Copy)]
struct Figures {
    mix8_iops: f64,
    mix8_p99_ns: f64,
    mix32_iops: f64,
    mix32_p99_ns: f64,
    steady75_iops: f64,
    sustained_bytes_s: f64,
}

fn job(text: &str) -> flashlab_workload::JobFile {
    flashlab_workload::parse_str(text, "compare.fio", &|_| None).unwrap()
}

fn run(config: &DeviceConfig, text: &str) -> serde_json::Value {
    let ssd = flashlab_device::Ssd::new(config, flashlab_engine::SeedTree::new(7).child("device"))
        .unwrap();
    let mut device = flashlab_host::Device::Drive(Box::new(ssd));
    let options = device.run_options(7);
    let out = flashlab_host::run_jobs(&mut device, 0, &job(text), &options, &mut |_| {}).unwrap();
    serde_json::from_str(&flashlab_report::render_json(&out.result, false)).unwrap()
}

fn dir_sum(doc: &serde_json::Value, job: &str, path: &str) -> f64 {
    let j = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == job)
        .unwrap();
    ["read", "write"]
        .iter()
        .map(|d| j[d].pointer(path).and_then(|v| v.as_f64()).unwrap_or(0.0))
        .sum()
}

fn read_p99(doc: &serde_json::Value, job: &str) -> f64 {
    let j = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == job)
        .unwrap();
    j["read"]["clat_ns"]["percentile"]["99.000000"]
        .as_f64()
        .unwrap()
}

/// The comparison workloads on a drive built fresh from `config`; `cache_bytes` is the
/// hidden drive's cache as its plan measured it.
fn compare(config: &DeviceConfig, cache_bytes: f64, scale: Scale) -> Figures {
    let fill = "[fill]\nrw=write\nbs=128k\niodepth=32\nioengine=libaio\ndirect=1\n";
    let mix = |qd: u32| {
        format!("[mix{qd}]\nstonewall\nrw=randrw\nrwmixread=70\nbs=4k\niodepth={qd}\nioengine=libaio\ndirect=1\nnumber_ios={}\n", scale.mix_ios)
    };
    let doc = run(config, &format!("{fill}{}{}", mix(8), mix(32)));
    // Three times the span to settle, then 40% of the capacity measured.
    let (settle, measured) = (scale.user_bytes * 9 / 4, scale.user_bytes * 2 / 5);
    let steady = format!("[settle]\nrw=randwrite\nbs=4k\niodepth=32\nsize=75%\nio_size={settle}\nioengine=libaio\ndirect=1\n[steady]\nstonewall\nrw=randwrite\nbs=4k\niodepth=32\nsize=75%\nio_size={measured}\nioengine=libaio\ndirect=1\n");
    let steady_doc = run(config, &format!("{fill}{steady}"));
    let sustained_bytes =
        ((2.0 * cache_bytes) as u64).clamp(64 << 20, scale.user_bytes) & !((1 << 20) - 1);
    let sustained = format!("[sustained]\nrw=write\nbs=128k\niodepth=32\nioengine=libaio\ndirect=1\nsize={sustained_bytes}\n");
    let sus_doc = run(config, &sustained);
    Figures {
        mix8_iops: dir_sum(&doc, "mix8", "/iops"),
        mix8_p99_ns: read_p99(&doc, "mix8"),
        mix32_iops: dir_sum(&doc, "mix32", "/iops"),
        mix32_p99_ns: read_p99(&doc, "mix32"),
        steady75_iops: dir_sum(&steady_doc, "steady", "/iops"),
        sustained_bytes_s: dir_sum(&sus_doc, "sustained", "/bw_bytes"),
    }
}

/// Runs the plan on `h`, fits, compares: the table's lines and the checks that failed.
fn round_trip(h: &Hidden, plan: &Plan, scale: Scale) -> (String, Vec<String>) {
    let hidden = h.config(scale.user_bytes);
    let outputs = run_plan(&hidden, plan, 1).unwrap();
    let measured = read_from(&Source::Memory(&outputs), plan).unwrap();
    let fitted = fit(plan, &measured, &FitOptions::default()).unwrap();
    let model = fitted.params.config().unwrap();
    let truth = compare(&hidden, measured.fill.cliff_bytes, scale);
    let guess = compare(&model, measured.fill.cliff_bytes, scale);
    let checks = [
        ("mix70 QD8 IOPS", truth.mix8_iops, guess.mix8_iops, 0.15),
        (
            "mix70 QD8 read p99",
            truth.mix8_p99_ns,
            guess.mix8_p99_ns,
            0.30,
        ),
        ("mix70 QD32 IOPS", truth.mix32_iops, guess.mix32_iops, 0.15),
        (
            "mix70 QD32 read p99",
            truth.mix32_p99_ns,
            guess.mix32_p99_ns,
            0.30,
        ),
        (
            "steady 75% span IOPS",
            truth.steady75_iops,
            guess.steady75_iops,
            0.15,
        ),
        (
            "sustained 2x cache B/s",
            truth.sustained_bytes_s,
            guess.sustained_bytes_s,
            0.15,
        ),
    ];
    let mut table = String::new();
    let mut failures = Vec::new();
    for (what, t, g, tol) in checks {
        let e = (g - t) / t;
        table.push_str(&format!(
            "{} {what:<24} hidden {t:>12.0} fitted {g:>12.0} error {:+6.1}%\n",
            h.name,
            e * 100.0
        ));
        if e.is_nan() || e.abs() > tol {
            failures.push(format!(
                "{} {what}: {:+.1}% (limit {:.0}%)",
                h.name,
                e * 100.0,
                tol * 100.0
            ));
        }
    }
    table.push_str(&format!(
        "{} fit: fitted {:.1}%, held-out {:.1}%; {:?}\n",
        h.name,
        fitted.mean_error(true) * 100.0,
        fitted.mean_error(false) * 100.0,
        fitted.params
    ));
    for c in &fitted.compared {
        table.push_str(&format!(
            "{}   {} {}: measured {:.4e} fitted {:.4e} ({:+.1}%)\n",
            h.name,
            c.job,
            c.figure,
            c.measured,
            c.fitted,
            c.error() * 100.0
        ));
    }
    for (label, e) in &fitted.candidates {
        table.push_str(&format!("{}   candidate {label}: {:.4}\n", h.name, e));
    }
    (table, failures)
}

/// The plan, the fit and the comparisons on the hidden drives named `names` at `scale`: the
/// table, and a failure for each comparison outside its limit.
fn round_trips(scale: Scale, names: &[&str]) {
    let plan = Plan::new(scale.user_bytes).unwrap();
    let mut table = String::new();
    let mut failures = Vec::new();
    let drives = hidden_drives(scale);
    for name in names {
        let h = drives
            .iter()
            .find(|h| h.name == *name)
            .expect("a hidden drive");
        let (t, f) = round_trip(h, &plan, scale);
        // Each drive's lines as it finishes: the whole run takes minutes.
        eprint!("{t}");
        table.push_str(&t);
        failures.extend(f);
    }
    println!("{table}");
    assert!(failures.is_empty(), "{table}\n{}", failures.join("\n"));
}

/// One test per hidden drive at the CI size, so the harness runs them side by side; long
/// (ARCHITECTURE.md, "Tests, and the time CI takes"): `cargo test` leaves them out.
macro_rules! round_trip_tests {
    ($($test:ident: $name:literal),* $(,)?) => {
        mod long {
            $(
                #[test]
                #[ignore = "long: .ci/run runs it (cargo test --workspace -- --ignored long::)"]
                fn $test() {
                    super::round_trips(super::CI, &[$name]);
                }
            )*
        }

        /// Every hidden drive has its test.
        #[test]
        fn every_hidden_drive_has_a_round_trip_test() {
            let tested = [$($name),*];
            for h in hidden_drives(CI) {
                assert!(tested.contains(&h.name), "{} has no round-trip test", h.name);
            }
        }
    };
}

round_trip_tests! {
    fitted_h1_predicts_workloads_the_plan_does_not_hold: "h1",
    fitted_h2_predicts_workloads_the_plan_does_not_hold: "h2",
    fitted_h3_predicts_workloads_the_plan_does_not_hold: "h3",
    fitted_h4_predicts_workloads_the_plan_does_not_hold: "h4",
    fitted_h5_predicts_workloads_the_plan_does_not_hold: "h5",
    fitted_h6_predicts_workloads_the_plan_does_not_hold: "h6",
}

#[test]
#[ignore = "the benchmark at 1 GB, about 2.5 min of CPU, targets not met yet (30 of 36 comparisons pass): BENCHMARKS.md"]
fn fitted_1gb_drives_predict_workloads_the_plan_does_not_hold() {
    let names: Vec<&str> = hidden_drives(LONG).iter().map(|h| h.name).collect();
    round_trips(LONG, &names);
}
