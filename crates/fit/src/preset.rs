//! The fitted drive as a preset: its description, then a `[provenance]` table giving every
//! key it sets where its value came from, in the form every preset uses:
//! `"nand.t_read" = { kind = "fitted", figure = "..." }`.

use flashlab_device::provenance::provenance_toml;
use flashlab_device::{Provenance, ProvenanceMap};

use crate::fit::Fitted;
use crate::measure::Figures;
use crate::params::{class, Cache, Params};

fn us(ns: f64) -> String {
    format!("{:.1} us", ns / 1e3)
}
fn mbs(bytes_s: f64) -> String {
    format!("{:.1} MB/s", bytes_s / 1e6)
}

fn fitted(figure: String) -> Provenance {
    Provenance::Fitted { figure }
}

fn default(reason: &str) -> Provenance {
    Provenance::Default {
        reason: format!("{}; {reason}", class::SOURCE),
    }
}

/// The plan jobs a key of [`Params::keys`] is fitted from (any one of the depth scan's).
pub fn source_jobs(key: &str) -> &'static [&'static str] {
    match key {
        "nand.t_read" => &["randread-qd1", "qd1-write"],
        "nand.channels" | "nand.dies_per_channel" => &["randread-qd1", "randread-qd256"],
        "nand.planes_per_die" => &["mixed-qd4", "mixed-qd16"],
        "nand.blocks_per_plane" => &["steady-full"],
        "nand.pages_per_block" => &["gc-onset", "chunk-write"],
        "nand.t_prog"
        | "nand.slc_t_prog"
        | "slc_cache.dynamic_max_fraction"
        | "slc_cache.static" => &["seq-fill"],
        "buffer.size" => &["write-buffer"],
        "controller.command_overhead" => &["qd1-write"],
        "scheduler.read_priority" => &["read-under-write"],
        _ => &[],
    }
}

/// The keys a partial measurement set leaves at class defaults: those fitted from a job
/// it lacks.
pub fn unmeasured_keys(p: &Params, m: &Figures) -> Vec<String> {
    p.keys()
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| {
            source_jobs(k)
                .iter()
                .any(|j| m.absent.iter().any(|a| a == j))
        })
        .collect()
}

/// The provenance of a key of [`Params::keys`]: a key fitted from a job the measurement
/// set lacks is a class default.
pub fn provenance_of(key: &str, p: &Params, m: &Figures) -> Provenance {
    let missing: Vec<&str> = source_jobs(key)
        .iter()
        .copied()
        .filter(|j| m.absent.iter().any(|a| a == j))
        .collect();
    if !missing.is_empty() {
        return default(&format!(
            "the measurement set has no {} output, which would identify it",
            missing.join(" or ")
        ));
    }
    measured_provenance(key, p, m)
}

fn measured_provenance(key: &str, p: &Params, m: &Figures) -> Provenance {
    let max_iops = m.read_iops.iter().map(|x| x.1).fold(0.0, f64::max);
    match key {
        "capacity.user" => Provenance::Measured {
            job: "seq-fill".into(),
            figure: format!("size {} bytes", p.capacity_bytes),
        },
        "nand.t_read" => fitted(format!(
            "randread-qd1 clat mean {} (less qd1-write clat mean {})",
            us(m.read_lat_qd1_ns),
            us(m.write_lat_qd1_ns)
        )),
        "nand.channels" | "nand.dies_per_channel" => fitted(format!(
            "randread-qd* saturated IOPS {max_iops:.0} x tR = dies x planes {}; dies paired on a channel from four dies on",
            p.dies * p.planes
        )),
        "nand.planes_per_die" => fitted(format!(
            "the split of dies x planes {} (1, 2 or 4 planes per die, each refined with every structure) whose simulated plan is closest to the measured one: a program holds its whole die, so the mixed jobs' IOPS and read p99 differ between splits, most at QD4 before GC",
            p.dies * p.planes
        )),
        "nand.pages_per_block" if p.pages_per_block.is_some() => fitted(format!(
            "chunk-write: {:.1} MB/s of random writes of whole {} MiB chunks at the fitted spare (GC copies less the fewer chunks a superblock holds), and gc-onset: {:.0} MB of 4 KiB random writes on the filled drive before the rate falls",
            m.chunk_bytes_s / 1e6,
            crate::plan::chunk_bytes(p.capacity_bytes) >> 20,
            m.gc_onset_bytes / 1e6
        )),
        "nand.pages_per_block" => default(
            "not identified without chunk-write's chunked writes and gc-onset's onset of GC: the largest block of whole word lines, at most the class's 768 pages, that leaves 64 blocks per plane, its whole blocks within 0.5% of the raw capacity",
        ),
        "nand.page_size" | "nand.channel_rate" | "nand.t_erase" | "nand.pe_cycles" | "nand.cell" => default(
            "not identified by the plan: a block-size scan at QD1 (page size), a long write with erase latency visible (t_erase), an endurance test (pe_cycles) or the data sheet would identify it",
        ),
        "nand.blocks_per_plane" => fitted(format!(
            "steady-full steady IOPS {:.0} (effective spare by greedy GC's write amplification: {:.1}% over user)",
            m.steady_full_iops,
            p.spare * 100.0
        )),
        "nand.t_prog" => fitted(format!("seq-fill post-cache rate {}", mbs(m.fill.post_cache_bytes_s))),
        "nand.slc_t_prog" => fitted(format!("seq-fill in-cache rate {}", mbs(m.fill.in_cache_bytes_s))),
        "nand.slc_t_read" => Provenance::Inferred {
            relation: format!("t_read x {} (the class's SLC to native read ratio)", class::SLC_READ_RATIO),
            from: vec!["nand.t_read".into()],
        },
        "slc_cache.dynamic" | "slc_cache.when_full" => fitted(
            "the structure (dynamic or static cache, direct or fold) whose simulated plan is closest to the measured one".into(),
        ),
        "slc_cache.dynamic_max_fraction" | "slc_cache.static" => fitted(format!(
            "seq-fill cache size {:.0} MB (the rate falls there)",
            m.fill.cliff_bytes / 1e6
        )),
        "buffer.size" => fitted(format!(
            "write-buffer {:.0} KiB written at buffer speed after idle",
            m.buffered_bytes / 1024.0
        )),
        "buffer.plp" => default("not identified by the plan: power-loss protection shows in flush latency (fio fsync=1) or the data sheet"),
        "link.kind" => default(&format!(
            "not identified by the plan (seq-read measured {}, under the link's rate)",
            mbs(m.seq_read_bytes_s)
        )),
        "controller.command_overhead" => fitted(format!("qd1-write clat mean {}", us(m.write_lat_qd1_ns))),
        "controller.max_iops" => default("no controller cap is identified: the read IOPS saturate at the dies"),
        "scheduler.read_priority" => fitted(format!(
            "read-under-write read p99 {} (the structure whose simulated p99 is closest)",
            us(m.beside_read_p99_ns)
        )),
        _ => default("not identified by the plan"),
    }
}

/// The preset text: description and provenance.
pub fn preset_toml(fitted: &Fitted, name: &str) -> String {
    let p = &fitted.params;
    let cache = match p.cache {
        Cache::Dynamic { .. } => "dynamic SLC cache",
        Cache::Static { .. } => "static SLC cache",
    };
    let description = format!(
        "Fitted by flashlab fit: {:.1} GB, {} dies x {} planes, {cache}; held-out error {:.1}%",
        p.capacity_bytes as f64 / 1e9,
        p.dies,
        p.planes,
        fitted.mean_error(false) * 100.0
    );
    let mut text = format!(
        "# A drive fitted by `flashlab fit` to the outputs of its measurement plan. Every key's\n# source is in [provenance]; see docs/fit.md.\n{}",
        p.toml(name, &description)
    );
    let map: ProvenanceMap = p
        .keys()
        .into_iter()
        .map(|(key, _)| {
            let prov = provenance_of(&key, p, &fitted.measured);
            (key, prov)
        })
        .collect();
    text.push('\n');
    text.push_str(&provenance_toml(&map));
    text
}
