//! The one table that documents every key of a drive description (`presets/README.md` is
//! generated from it), and the look-ups that name valid keys in errors.

/// One documented key.
#[derive(Debug, Clone, Copy)]
pub struct KeyDoc {
    /// Section name, "" for top-level keys.
    pub section: &'static str,
    pub key: &'static str,
    pub meaning: &'static str,
    pub unit: &'static str,
    pub default: &'static str,
}

const fn k(
    section: &'static str,
    key: &'static str,
    meaning: &'static str,
    unit: &'static str,
    default: &'static str,
) -> KeyDoc {
    KeyDoc {
        section,
        key,
        meaning,
        unit,
        default,
    }
}

/// Every key a device description may hold. It drives unknown-key errors, `--set` and the
/// table in `presets/README.md`.
pub const KEYS: &[KeyDoc] = &[
    k(
        "",
        "name",
        "Drive name (shown in results)",
        "text",
        "required",
    ),
    k("", "description", "One-line summary", "text", "\"\""),
    k(
        "",
        "namespaces",
        "Namespace sizes, e.g. [\"2TB\", \"2TB\"] (fio filename `ns1`, `ns2`, …); capacity not allocated is spare area",
        "list of sizes",
        "one namespace of all user capacity",
    ),
    k(
        "capacity",
        "user",
        "Host-visible capacity; less than raw leaves more spare area",
        "size",
        "raw × (1 − spare_factor)",
    ),
    k(
        "capacity",
        "spare_factor",
        "(raw − user) / raw, used when `user` is absent",
        "fraction",
        "0.07",
    ),
    k(
        "capacity",
        "logical_block",
        "Logical block size the host addresses",
        "size (512B or 4KiB)",
        "512B",
    ),
    k(
        "nand",
        "cell",
        "Cell type of native blocks",
        "slc, mlc, tlc, qlc",
        "required",
    ),
    k(
        "nand",
        "channels",
        "Flash channels",
        "count 1-64",
        "required",
    ),
    k(
        "nand",
        "dies_per_channel",
        "Dies on each channel",
        "count 1-64",
        "required",
    ),
    k(
        "nand",
        "planes_per_die",
        "Planes per die",
        "count 1-16",
        "2",
    ),
    k(
        "nand",
        "blocks_per_plane",
        "Erase blocks per plane",
        "count ≥ 8",
        "required",
    ),
    k(
        "nand",
        "pages_per_block",
        "Pages per block in native mode (a multiple of bits per cell)",
        "count",
        "required",
    ),
    k(
        "nand",
        "page_size",
        "Data bytes per page",
        "size",
        "required",
    ),
    k(
        "nand",
        "channel_rate",
        "Channel transfer rate (ONFI/Toggle)",
        "MT/s or GT/s",
        "1.2GT/s",
    ),
    k(
        "nand",
        "bus_width_bits",
        "Channel bus width",
        "bits (8 or 16)",
        "8",
    ),
    k(
        "nand",
        "multi_plane",
        "Planes of a die run concurrently",
        "bool",
        "true",
    ),
    k(
        "nand",
        "independent_plane_reads",
        "With multi_plane, each plane reads on its own; false: a read holds its whole die for tR, and reads of one page address on the die's planes issued together pair as one multi-plane read (parts whose multi-plane read needs one page address on every plane); under a reordering `[scheduler]` the die keeps one queue (needs `independent_plane_programs` false)",
        "bool",
        "true",
    ),
    k(
        "nand",
        "independent_plane_programs",
        "With multi_plane, each plane programs on its own; false: a program holds its whole die for tPROG, and programs of the die's other planes whose data is in before it starts join it as one multi-plane program (parts that program a die's planes only together: ONFI multi-plane program)",
        "bool",
        "false",
    ),
    k(
        "nand",
        "t_read",
        "tR per page, native mode, the average over a word line's page types (a list per page type is averaged); each operation's time follows its page type and varies around it by the cell type's factors (`crates/media/src/variation.rs`)",
        "time or list",
        "by cell type",
    ),
    k(
        "nand",
        "t_prog",
        "tPROG per page, native mode, the average over a word line's page types (a list per page type is averaged); each operation's time follows its page type and varies around it by the cell type's factors (`crates/media/src/variation.rs`)",
        "time or list",
        "by cell type",
    ),
    k("nand", "t_erase", "tBERS per block", "time", "by cell type"),
    k(
        "nand",
        "slc_t_read",
        "tR of a block in SLC mode",
        "time",
        "by cell type",
    ),
    k(
        "nand",
        "slc_t_prog",
        "tPROG of a block in SLC mode",
        "time",
        "by cell type",
    ),
    k(
        "nand",
        "pe_cycles",
        "Rated program/erase cycles",
        "count",
        "by cell type",
    ),
    k(
        "nand",
        "bad_block_reserve",
        "Share of the native blocks set aside for bad blocks: those bad from the factory and the reserve that replaces blocks failing in use (NVMe's available spare). No data is written to them, so garbage collection's spare area is what the other blocks leave",
        "fraction 0-0.2",
        "0",
    ),
    k(
        "nand",
        "grown_bad_at_rated",
        "Share of the native blocks whose erase has failed by the rated P/E cycles (a Weibull life in erase cycles: a failed block is retired and a block of the bad-block reserve replaces it; once the reserve is used up the spare area shrinks, and the drive turns read-only when too little is left for garbage collection). 0: blocks never fail",
        "fraction 0-0.5",
        "0.01",
    ),
    k(
        "nand",
        "grown_bad_shape",
        "Weibull shape of those failures over erase cycles: 1 a constant rate per erase, above 1 failures gather towards wear-out",
        "0.5-10",
        "3",
    ),
    k(
        "nand",
        "retention_class",
        "JESD218 class of the endurance rating: client (data must survive 1 year unpowered at 30 °C once the rated P/E cycles are used) or enterprise (3 months at 40 °C). Sets the defaults of the next keys; the health log reports power-off retention at the drive's wear",
        "client or enterprise",
        "client",
    ),
    k(
        "nand",
        "retention_at_rated_days",
        "Days data survive unpowered at the class's temperature (30 °C client, 40 °C enterprise) in blocks at their rated P/E cycles (retention falls as a power law of wear, on past the rating)",
        "days (0.01-100000)",
        "the class's: 365 client, 91 enterprise",
    ),
    k(
        "nand",
        "retention_at_tenth_rated_days",
        "The same at a tenth of the rated P/E cycles and below (data sheets quote 10 years at low wear)",
        "days, at least retention_at_rated_days",
        "3652.5",
    ),
    k(
        "nand",
        "retention_temperature_c",
        "Power-off storage temperature the health log and describe report retention at, from the class's figures by Arrhenius's law at 1.1 eV (JESD218: about half the time per 5 °C warmer)",
        "°C (-40 to 125)",
        "the class's: 30 client, 40 enterprise",
    ),
    k(
        "ftl",
        "iu",
        "Indirection unit (mapping granularity)",
        "size (4KiB-64KiB, ≤ page)",
        "4KiB",
    ),
    k(
        "ftl",
        "gc_policy",
        "Garbage-collection victim choice",
        "greedy, cost-benefit",
        "greedy",
    ),
    k(
        "ftl",
        "gc_unit",
        "What GC empties at once: one plane's block, or the superblock its stream opened over every unit",
        "block, superblock",
        "block",
    ),
    k(
        "ftl",
        "gc_foreground_free_blocks",
        "Foreground GC runs at or below this many free blocks",
        "blocks",
        "2 per plane",
    ),
    k(
        "ftl",
        "gc_background_free_blocks",
        "Idle GC works until this many blocks are free",
        "blocks",
        "4 per plane",
    ),
    k(
        "ftl",
        "background_after_idle",
        "Host idle time before background work (idle GC, SLC folding) starts",
        "time",
        "10ms",
    ),
    k(
        "ftl",
        "gc_background_busy_share",
        "Share of time background GC may take beside host reads while below gc_background_free_blocks (0: only when idle)",
        "fraction 0-1",
        "0",
    ),
    k(
        "ftl",
        "host_allocation",
        "Unit of the next host page: every (die, plane) in turn, or the one of the next 8 whose die is free soonest",
        "striped, least_busy",
        "striped",
    ),
    k(
        "ftl",
        "parity_stripe_pages",
        "Die-level parity (RAIN, XOR): one page in every N of a block holds parity, programmed after the stripe's data; costs 1/N of the raw capacity and a program per stripe",
        "0 (none) or 2 to pages_per_block",
        "0",
    ),
    k(
        "ftl",
        "wear_level_threshold",
        "Static wear levelling when max − min erase count exceeds this (0 off)",
        "erase cycles",
        "500",
    ),
    k(
        "slc_cache",
        "static",
        "SLC-mode capacity kept permanently, outside user capacity",
        "size",
        "0B",
    ),
    k(
        "slc_cache",
        "dynamic",
        "Use free native blocks in SLC mode",
        "bool",
        "false",
    ),
    k(
        "slc_cache",
        "dynamic_max_fraction",
        "Share of free native capacity that may run in SLC mode (the cache holds 1/bits per cell of it), never more than the user capacity not yet written: a fill folds it back",
        "fraction 0-1",
        "0.25",
    ),
    k(
        "slc_cache",
        "when_full",
        "Host writes past a full cache: direct (straight to native blocks, the cache folds in idle time) or fold (the cache folds while the host writes and keeps taking its writes in SLC mode)",
        "direct, fold",
        "direct",
    ),
    k("buffer", "size", "DRAM write buffer", "size", "16MiB"),
    k(
        "buffer",
        "plp",
        "Power-loss protection: buffered writes are durable",
        "bool",
        "false",
    ),
    k(
        "link",
        "kind",
        "Host link",
        "sata-1.5g, sata-3g, sata-6g, pcie-gen{3,4,5}-x{1,2,4,8}",
        "pcie-gen4-x4",
    ),
    k(
        "link",
        "protocol_efficiency",
        "Fraction of encoded bandwidth left after protocol overhead",
        "fraction",
        "0.93 SATA, 0.86 PCIe",
    ),
    k(
        "controller",
        "command_overhead",
        "Controller time per command (firmware, DMA setup)",
        "time",
        "5us",
    ),
    k(
        "controller",
        "max_iops",
        "Command processing ceiling",
        "commands/s",
        "1000000",
    ),
    k(
        "controller",
        "queue_depth",
        "Commands the device holds at once",
        "count",
        "32 SATA, 1024 PCIe",
    ),
    k(
        "controller",
        "read_bandwidth",
        "Data path from flash to host (ECC decode, DMA); host reads stream through it and the link together",
        "bytes/s (GB/s, MB/s)",
        "unlimited",
    ),
    k(
        "controller",
        "write_bandwidth",
        "Data path from host to flash (DMA, ECC encode); host writes stream through it and the link together",
        "bytes/s (GB/s, MB/s)",
        "unlimited",
    ),
    k(
        "controller",
        "native_decode_bandwidth",
        "ECC (LDPC) decoding of pages read from cells in their native multi-bit mode, whose higher raw bit error rate takes more decoder iterations than SLC-mode data; each such page passes the decoders at this rate after its array read",
        "bytes/s (GB/s, MB/s)",
        "unlimited",
    ),
    k(
        "controller",
        "read_cpu",
        "Firmware time of one read command on one core (map lookup)",
        "time",
        "0ns",
    ),
    k(
        "controller",
        "write_cpu",
        "Firmware time of one write command on one core (map update, buffer management)",
        "time",
        "0ns",
    ),
    k(
        "controller",
        "relocation_cpu",
        "Firmware time per IU moved by GC, folding or wear levelling, charged as each copy goes to the dies; commands wait for one IU of it at most, writes complete once it is within one block of IUs of done",
        "time",
        "0ns",
    ),
    k(
        "controller",
        "cores",
        "Embedded cores sharing the firmware work (per command, per relocated IU)",
        "count 1-64",
        "1",
    ),
    k(
        "controller",
        "read_buffer",
        "DRAM for data read from NAND, oldest out first: a read whose codewords are all in it costs no NAND read; writes, trims, power loss and format drop them (0B off)",
        "size, 0B or 2×4×read_ahead to 64GiB",
        "2MiB",
    ),
    k(
        "controller",
        "read_ahead",
        "A third read in a row that starts where the previous read of a stream (4 streams) ended makes the drive read up to this much further ahead into the read buffer, in batches of at least half of it (0B off)",
        "size",
        "256KiB",
    ),
    k(
        "controller",
        "map_cache",
        "DRAM for the logical-to-physical map (4 bytes per IU). Smaller than the map, it caches translation pages (one IU of entries each, kept in flash as hidden IUs): a miss reads one from NAND before a read (a write loads it too), evicting a changed one writes it back; scaled with the capacity in a slice",
        "size, at least 16 IUs",
        "the whole map",
    ),
    k(
        "controller",
        "compression_granule",
        "The controller compresses every IU written (as SandForce's DuraWrite) and stores it in as many granules of this size as its compressed data fills, at least one; the rest of the IU takes no flash. A write's compressibility comes from its job (fio's buffer_compress_percentage, zero_buffers); write_bandwidth then limits the compressed bytes. Needs power-loss protection when the drive has an SLC cache, and no map_cache or namespaces",
        "size, a power of two from 512B to half the IU",
        "no compression",
    ),
    k(
        "scheduler",
        "read_priority",
        "Reads go before programs and erases queued (not started) on their die",
        "bool",
        "false",
    ),
    k(
        "scheduler",
        "program_suspend",
        "A read arriving during a program suspends it (the program resumes after the read)",
        "bool",
        "false",
    ),
    k(
        "scheduler",
        "erase_suspend",
        "A read arriving during an erase suspends it",
        "bool",
        "false",
    ),
    k(
        "scheduler",
        "suspend_latency",
        "From the suspend command until the die can read (the operation progresses meanwhile)",
        "time",
        "20us",
    ),
    k(
        "scheduler",
        "resume_overhead",
        "Extra array time of a resumed program or erase",
        "time",
        "10us",
    ),
    k(
        "scheduler",
        "max_suspends_per_op",
        "Suspensions of one program or erase at most; later reads wait for it",
        "count 1-255",
        "4",
    ),
    k(
        "scheduler",
        "program_suspend_step",
        "A program stops for a suspension only at the end of a step (an ISPP pulse and its verify), every this much from its start: a read waits for the step running",
        "time, 0ns to 10ms",
        "0ns (anywhere)",
    ),
    k(
        "scheduler",
        "erase_suspend_step",
        "An erase stops for a suspension only at the end of a step (an erase pulse and its verify), every this much from its start",
        "time, 0ns to 10ms",
        "0ns (anywhere)",
    ),
    k(
        "scheduler",
        "suspend_budget",
        "A program or erase is suspended only while its suspensions (each a read and the resume overhead) fit the idle time its die had before it started: a die programming back to back lets its reads wait for the operation",
        "bool",
        "false",
    ),
    k(
        "spec",
        "seq_read",
        "Condition of the published sequential-read figure: the drive's state and the depth and jobs it was measured at; four-corners runs the corner so and reports show the figure with it",
        "\"<state> QD<depth>x<jobs>\", the state fresh, full or steady",
        "not recorded",
    ),
    k(
        "spec",
        "seq_write",
        "Condition of the published sequential-write figure",
        "as spec.seq_read",
        "not recorded",
    ),
    k(
        "spec",
        "rand_read",
        "Condition of the published 4 KiB random-read figure",
        "as spec.seq_read",
        "not recorded",
    ),
    k(
        "spec",
        "rand_write",
        "Condition of the published 4 KiB random-write figure",
        "as spec.seq_read",
        "not recorded",
    ),
    k(
        "power",
        "read_energy",
        "Energy of one page read (array), native mode",
        "energy",
        "50mW × tR",
    ),
    k(
        "power",
        "program_energy",
        "Energy of one page program (array), native mode",
        "energy",
        "50mW × tPROG",
    ),
    k(
        "power",
        "erase_energy",
        "Energy of one block erase",
        "energy",
        "50mW × tBERS",
    ),
    k(
        "power",
        "slc_read_energy",
        "Energy of one page read in SLC mode",
        "energy",
        "50mW × SLC tR",
    ),
    k(
        "power",
        "slc_program_energy",
        "Energy of one page program in SLC mode",
        "energy",
        "50mW × SLC tPROG",
    ),
    k(
        "power",
        "channel_energy",
        "Energy per byte moved over a flash channel",
        "energy",
        "80pJ",
    ),
    k(
        "power",
        "host_energy",
        "Energy per byte over the host link, with the controller's data path",
        "energy",
        "150pJ",
    ),
    k(
        "power",
        "active_power",
        "Controller power beyond idle while commands are outstanding",
        "power",
        "1W",
    ),
    k(
        "power",
        "idle_power",
        "Power of the drive with nothing to do",
        "power",
        "2W",
    ),
    k(
        "power",
        "states",
        "Power states: a cap each (\"13W\") or \"none\"; media work is delayed so every 10 ms stays under the cap",
        "list",
        "[\"none\"]",
    ),
    k(
        "power",
        "state",
        "Power state the drive runs in (index into `states`)",
        "index",
        "0",
    ),
    k(
        "power",
        "thermal_resistance_c_per_w",
        "Temperature rise over ambient per watt the drive dissipates, at steady state (with its heatsink and airflow, if any); absent: no thermal model, the drive never throttles",
        "°C/W (0.1-100)",
        "absent",
    ),
    k(
        "power",
        "thermal_time_constant",
        "How fast the drive heats and cools: after this long it has gone 63% of the way to its new steady temperature",
        "time (1s-1h)",
        "60s",
    ),
    k(
        "power",
        "ambient_c",
        "Temperature of the air around the drive",
        "°C (-20 to 80)",
        "30",
    ),
    k(
        "power",
        "throttle_c",
        "Temperature at which the drive throttles (its thermal management temperature)",
        "°C, above ambient_c",
        "80",
    ),
    k(
        "power",
        "resume_c",
        "Temperature to which a throttled drive must cool before it runs at full power again",
        "°C, below throttle_c",
        "throttle_c - 5",
    ),
    k(
        "power",
        "throttle_power",
        "Power the drive holds itself to while throttling (the media get what the controller's idle and active power leave)",
        "power, above power.idle_power + power.active_power",
        "required with thermal_resistance_c_per_w",
    ),
    k(
        "fdp",
        "enabled",
        "NVMe Flexible Data Placement: writes carry a placement identifier and each reclaim unit handle writes into reclaim units of its own (docs/placement.md); needs buffer.plp and no SLC cache",
        "bool",
        "false",
    ),
    k(
        "fdp",
        "handles",
        "Reclaim unit handles, i.e. placement identifiers 0 to handles − 1 (fio's `fdp_pli`/`plids` index them)",
        "count (1-128)",
        "8",
    ),
    k(
        "fdp",
        "reclaim_groups",
        "Reclaim groups (the model has one: every handle's reclaim units span every die)",
        "1",
        "1",
    ),
    k(
        "fdp",
        "ru_bytes",
        "Reclaim unit size, a whole number of erase blocks (the unit of `nvme fdp status`'s available media writes and of the RU counts)",
        "size",
        "one erase block per die and plane",
    ),
    k(
        "fdp",
        "handle_type",
        "Where garbage collection writes a handle's valid data: `initially_isolated` (a relocation stream all handles share) or `persistently_isolated` (one per handle)",
        "initially_isolated, persistently_isolated",
        "initially_isolated",
    ),
    k(
        "sim",
        "scale",
        "Simulate a proportional slice of the drive: \"auto\" (fit max_memory) or a fraction",
        "auto or 0-1",
        "auto",
    ),
    k(
        "sim",
        "max_memory",
        "Memory budget for the simulated mapping",
        "size",
        "3GiB",
    ),
    k(
        "sim",
        "die_cut",
        "Whether a run may simulate a slice with fewer dies than the drive: `refuse` runs the smallest slice that keeps every die instead (a die cut changes figures that depend on the dies' parallelism; docs/scale.md), `allow` accepts its known errors",
        "refuse, allow",
        "refuse",
    ),
    k(
        "zns",
        "enabled",
        "The drive is one zoned namespace (NVMe ZNS): zones written sequentially at their write pointers, each on erase blocks of its own striped over the dies, erased by a zone reset; no garbage collection. Needs no namespaces list, no SLC cache, compression, map cache or bad-block reserve",
        "bool",
        "false",
    ),
    k(
        "zns",
        "zone_size",
        "Distance between zone starts (what fio's zonesize must equal); the host addresses zones × zone_size bytes",
        "size, a multiple of the logical block, at least zone_capacity",
        "zone_capacity",
    ),
    k(
        "zns",
        "zone_capacity",
        "Writable bytes of a zone; it takes whole erase blocks striped over the dies and planes, and capacity.user ÷ zone_capacity zones",
        "size, a multiple of the logical block",
        "one block per die and plane",
    ),
    k(
        "zns",
        "max_open_zones",
        "Zones open (implicitly or explicitly) at once; a write to another zone closes the oldest implicitly opened one, and fails when all are explicitly open",
        "count, 0 = no limit",
        "0",
    ),
    k(
        "zns",
        "max_active_zones",
        "Zones open or closed at once; a write that would make another zone active fails",
        "count, 0 = no limit",
        "0",
    ),
];

/// Sections in file order.
pub const SECTIONS: &[&str] = &[
    "capacity",
    "nand",
    "ftl",
    "slc_cache",
    "buffer",
    "link",
    "controller",
    "scheduler",
    "spec",
    "power",
    "fdp",
    "sim",
    "zns",
];

/// The Markdown table of [`KEYS`] as in `presets/README.md`.
pub fn key_table_markdown() -> String {
    let mut s = String::from("| key | meaning | unit | default |\n|---|---|---|---|\n");
    for d in KEYS {
        let key = if d.section.is_empty() {
            d.key.to_string()
        } else {
            format!("{}.{}", d.section, d.key)
        };
        s.push_str(&format!(
            "| `{key}` | {} | {} | {} |\n",
            d.meaning, d.unit, d.default
        ));
    }
    s
}

/// Keys valid in `section` ("" = top level, where sections count as keys too).
pub fn valid_keys(section: &str) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = KEYS
        .iter()
        .filter(|d| d.section == section)
        .map(|d| d.key)
        .collect();
    if section.is_empty() {
        v.extend_from_slice(SECTIONS);
    }
    v
}

/// The valid key closest to `key` (edit distance ≤ max(2, len/3)), if any.
pub fn nearest<'a>(key: &str, valid: &[&'a str]) -> Option<&'a str> {
    let limit = (key.len() / 3).max(2);
    let key_chars = key.chars().count();
    valid
        .iter()
        // Lengths further apart than the limit cannot be within it: skipping them keeps a
        // megabyte-long key from costing its length times every key's.
        .filter(|v| key_chars.abs_diff(v.chars().count()) <= limit)
        .map(|v| (strsim::levenshtein(key, v), *v))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, v)| v)
}
