//! The FDP block of the normal output: a drive with NVMe Flexible Data Placement reports its
//! FDP logs (`"fdp"` in the `"flashlab"` object's `device_counters`) in the words of
//! nvme-cli's `nvme fdp stats`, `nvme fdp status`, `nvme fdp usage` and `nvme fdp events`.

use crate::RunResult;

/// The block, or None when the run's device has no FDP.
pub fn render_fdp(run: &RunResult) -> Option<String> {
    let f = run.flashlab.get("device_counters")?.get("fdp")?;
    let n = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
    // The counters are the simulated drive's, as every device counter: on a slice, the
    // slice's bytes (DLWA, a ratio, stands for the drive's).
    let factor = run
        .flashlab
        .get("device_counters")
        .and_then(|c| c.get("scale"))
        .and_then(|s| s.get("capacity_factor"))
        .and_then(|x| x.as_f64())
        .unwrap_or(1.0);
    let mut out = if factor > 1.0 {
        format!(
            "\nFDP statistics (nvme fdp stats; bytes of the simulated 1/{} slice of the drive):\n",
            trim_factor(factor)
        )
    } else {
        String::from("\nFDP statistics (nvme fdp stats):\n")
    };
    out.push_str(&format!(
        "  Host Bytes with Metadata Written (HBMW): {}\n",
        n(f, "hbmw")
    ));
    out.push_str(&format!(
        "  Media Bytes with Metadata Written (MBMW): {}\n",
        n(f, "mbmw")
    ));
    out.push_str(&format!("  Media Bytes Erased (MBE): {}\n", n(f, "mbe")));
    let dlwa = f.get("dlwa").and_then(|x| x.as_f64()).unwrap_or(0.0);
    out.push_str(&format!("  DLWA (MBMW / HBMW): {dlwa:.3}\n"));
    let handle_type = f
        .get("handle_type")
        .and_then(|x| x.as_str())
        .unwrap_or("")
        .replace('_', " ");
    out.push_str(&format!(
        "FDP reclaim unit handles (nvme fdp status, usage): {} handles, {handle_type}, reclaim unit {} bytes\n",
        n(f, "handles"),
        n(f, "ru_bytes")
    ));
    for h in f
        .get("ruh")
        .and_then(|x| x.as_array())
        .into_iter()
        .flatten()
    {
        let attr = match h.get("attributes").and_then(|x| x.as_str()) {
            Some("host_specified") => "0x1 (Host Specified)",
            _ => "0 (Unused)",
        };
        out.push_str(&format!(
            "  Placement Identifier {}; Reclaim Unit Handle Identifier {}: Attributes: {attr}\n",
            n(h, "placement_id"),
            n(h, "ruh_id")
        ));
        out.push_str(&format!(
            "    Reclaim Unit Available Media Writes (RUAMW): {}\n",
            n(h, "ruamw_blocks")
        ));
        out.push_str(&format!(
            "    host bytes written: {}, moved out by GC: {}, moved in by GC: {}, reclaim units used: {}, erased bytes: {}\n",
            n(h, "host_bytes_written"),
            n(h, "gc_moved_out_bytes"),
            n(h, "gc_moved_in_bytes"),
            n(h, "reclaim_units_used"),
            n(h, "erased_bytes")
        ));
    }
    if let Some(e) = f.get("events") {
        out.push_str(&format!(
            "FDP events (nvme fdp events): RU not fully written: {}, media reallocated: {}\n",
            n(e, "ru_not_fully_written"),
            n(e, "media_reallocated")
        ));
    }
    Some(out)
}

/// A slice's factor as the scale note spells it (`5.52`, `16`).
fn trim_factor(f: f64) -> String {
    let t = format!("{f:.2}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}
