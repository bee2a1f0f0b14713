//! 3D XPoint as a function of state and time. Cells are written in place: there is no erase,
//! no garbage collection and no write amplification, so a write costs the same on a full
//! device as on an empty one. Addresses interleave across dies in fixed units; each die has
//! a data path (reads and writes share it) and a write engine whose rate bounds sustained
//! writes (cell programming draws current, which limits how many cells switch at once).
//!
//! - read: the array works (`read_ns`, pipelined: many reads may be in the array at once),
//!   then the data moves over the die's data path;
//! - write: the data moves over the data path, then the write engine takes it at its rate;
//!   the write is reported done `write_ns` after the engine takes it.

use flashlab_engine::time::transfer_ns;

/// The figures a 3D XPoint device is described by.
#[derive(Debug, Clone, PartialEq)]
pub struct XpointParams {
    pub capacity_bytes: u64,
    pub dies: u32,
    /// Consecutive addresses of this size go to the same die, the next unit to the next die.
    pub interleave_bytes: u64,
    pub read_ns: u64,
    pub write_ns: u64,
    /// Per-die data path.
    pub die_bytes_per_s: u64,
    /// Per-die sustained write rate.
    pub die_write_bytes_per_s: u64,
}

/// Cumulative activity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct XpointCounters {
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

flashlab_engine::impl_state!(XpointCounters {
    reads,
    writes,
    bytes_read,
    bytes_written
});

/// Timing state: busy-until per die data path and write engine.
#[derive(Debug, Clone)]
pub struct Xpoint {
    p: XpointParams,
    path_free_ns: Vec<u64>,
    engine_free_ns: Vec<u64>,
    counters: XpointCounters,
}

flashlab_engine::impl_state!(Xpoint { path_free_ns, engine_free_ns, counters } skip { p }
    fixed { path_free_ns, engine_free_ns } check Xpoint::check_loaded);

impl Xpoint {
    /// `None` if a figure is zero.
    pub fn new(p: XpointParams) -> Option<Xpoint> {
        let ok = p.capacity_bytes > 0
            && p.dies > 0
            && p.interleave_bytes > 0
            && p.die_bytes_per_s > 0
            && p.die_write_bytes_per_s > 0;
        ok.then(|| Xpoint {
            path_free_ns: vec![0; p.dies as usize],
            engine_free_ns: vec![0; p.dies as usize],
            counters: XpointCounters::default(),
            p,
        })
    }

    /// A loaded XPoint's dies are free by times a run reaches (before 2^62 ns); a table per
    /// die is the configuration's length (`fixed`).
    fn check_loaded(&self) -> Result<(), String> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        for (name, times) in [
            ("path_free_ns", &self.path_free_ns),
            ("engine_free_ns", &self.engine_free_ns),
        ] {
            if let Some((die, t)) = times.iter().enumerate().find(|(_, &t)| t > limit) {
                return Err(format!(
                    "the XPoint media's {name} of die {die} is {t} ns (valid: at most 2^62 ns, the time a run reaches)"
                ));
            }
        }
        Ok(())
    }

    pub fn params(&self) -> &XpointParams {
        &self.p
    }
    pub fn counters(&self) -> XpointCounters {
        self.counters
    }

    /// Units of `[offset, offset+len)`: (die, bytes).
    #[cfg(test)]
    fn units(&self, offset: u64, len: u64) -> impl Iterator<Item = (usize, u64)> + '_ {
        let u = self.p.interleave_bytes;
        let dies = self.p.dies as u64;
        let end = offset + len;
        let first = offset / u;
        let last = (end - 1) / u;
        (first..=last).map(move |i| {
            let s = (i * u).max(offset);
            let e = ((i + 1) * u).min(end);
            ((i % dies) as usize, e - s)
        })
    }

    /// A read issued at `t_ns`; returns when all its data has left the dies.
    pub fn read(&mut self, t_ns: u64, offset: u64, len: u64) -> u64 {
        self.counters.reads += 1;
        self.counters.bytes_read += len;
        let mut done = t_ns;
        let first = offset / self.p.interleave_bytes;
        let n = self.unit_count(offset, len) as u64;
        let dies = self.p.dies as u64;
        let u = self.p.interleave_bytes;
        let end = offset + len;
        for k in 0..n {
            let i = first + k;
            let die = (i % dies) as usize;
            let bytes = ((i + 1) * u).min(end) - (i * u).max(offset);
            let s = (t_ns + self.p.read_ns).max(self.path_free_ns[die]);
            let e = s + transfer_ns(bytes, self.p.die_bytes_per_s);
            self.path_free_ns[die] = e;
            done = done.max(e);
        }
        done
    }

    fn unit_count(&self, offset: u64, len: u64) -> usize {
        if len == 0 {
            return 0;
        }
        let u = self.p.interleave_bytes;
        ((offset + len - 1) / u - offset / u + 1) as usize
    }

    /// A write whose data reaches the device at `t_ns`; returns when it is reported done.
    pub fn write(&mut self, t_ns: u64, offset: u64, len: u64) -> u64 {
        self.counters.writes += 1;
        self.counters.bytes_written += len;
        let mut done = t_ns;
        let first = offset / self.p.interleave_bytes;
        let n = self.unit_count(offset, len);
        let dies = self.p.dies as u64;
        let u = self.p.interleave_bytes;
        let end = offset + len;
        for k in 0..n as u64 {
            let i = first + k;
            let die = (i % dies) as usize;
            let bytes = ((i + 1) * u).min(end) - (i * u).max(offset);
            let s = t_ns.max(self.path_free_ns[die]);
            let in_ns = s + transfer_ns(bytes, self.p.die_bytes_per_s);
            self.path_free_ns[die] = in_ns;
            let w = in_ns.max(self.engine_free_ns[die]);
            self.engine_free_ns[die] = w + transfer_ns(bytes, self.p.die_write_bytes_per_s);
            done = done.max(w + self.p.write_ns);
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p16() -> XpointParams {
        XpointParams {
            capacity_bytes: 16_000_000_000,
            dies: 1,
            interleave_bytes: 4096,
            read_ns: 1_500,
            write_ns: 12_000,
            die_bytes_per_s: 900_000_000,
            die_write_bytes_per_s: 145_000_000,
        }
    }

    #[test]
    fn reads_pipeline_and_writes_are_bounded_by_the_engine() {
        let mut x = Xpoint::new(p16()).unwrap();
        // QD1 4 KiB read: array + 4.55 us transfer.
        assert_eq!(x.read(0, 0, 4096), 1_500 + 4_552);
        // Many reads at once: the data path is the limit (~900 MB/s).
        let mut last = 0;
        for i in 0..1000 {
            last = x.read(1_000_000, i * 4096, 4096);
        }
        let rate = 1000.0 * 4096.0 / ((last - 1_000_000) as f64 * 1e-9);
        assert!((rate / 900e6 - 1.0).abs() < 0.01, "{rate}");
        let mut x = Xpoint::new(p16()).unwrap();
        let first = x.write(0, 0, 4096);
        assert_eq!(first, 4_552 + 12_000);
        let mut last = 0;
        for i in 0..1000 {
            last = x.write(0, i * 4096, 4096);
        }
        let rate = 1000.0 * 4096.0 / (last as f64 * 1e-9);
        assert!((rate / 145e6 - 1.0).abs() < 0.02, "{rate}");
    }

    #[test]
    fn a_full_device_writes_as_fast_as_an_empty_one() {
        let mut x = Xpoint::new(p16()).unwrap();
        let t0 = x.write(0, 0, 4096);
        // Overwrite the same unit many times: in place, no erase, same cost.
        let mut t = t0;
        for _ in 0..100 {
            let s = t + 1_000_000;
            t = x.write(s, 0, 4096);
            assert_eq!(t - s, t0);
        }
    }

    #[test]
    fn units_interleave_across_dies() {
        let x = Xpoint::new(XpointParams { dies: 2, ..p16() }).unwrap();
        let u: Vec<_> = x.units(2048, 8192).collect();
        assert_eq!(u, vec![(0, 2048), (1, 4096), (0, 2048)]);
        assert!(Xpoint::new(XpointParams { dies: 0, ..p16() }).is_none());
    }

    /// A forged XPoint state is refused at load naming the field: a die free past 2^62 ns,
    /// a table of another number of dies. A real state loads and runs.
    #[test]
    fn forged_xpoint_media_is_refused_at_load() {
        use flashlab_engine::state::reload_into;
        let fresh = || Xpoint::new(XpointParams { dies: 2, ..p16() }).unwrap();
        let mut x = fresh();
        for i in 0..10 {
            x.write(i * 1000, i * 4096, 8192);
        }
        let mut ok = fresh();
        reload_into(&x, &mut ok).unwrap();
        assert_eq!(ok.write(50_000, 0, 4096), x.clone().write(50_000, 0, 4096));
        type Forge<'a> = (&'a str, &'a dyn Fn(&mut Xpoint));
        let cases: [Forge; 3] = [
            ("engine_free_ns of die 1", &|f| {
                f.engine_free_ns[1] = u64::MAX
            }),
            ("path_free_ns of die 0", &|f| {
                f.path_free_ns[0] = (1 << 62) + 1
            }),
            (
                "path_free_ns holds 1 entries where this configuration has 2",
                &|f| {
                    f.path_free_ns.pop();
                },
            ),
        ];
        for (want, forge) in cases {
            let mut forged = x.clone();
            forge(&mut forged);
            let e = reload_into(&forged, &mut fresh()).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }
}
