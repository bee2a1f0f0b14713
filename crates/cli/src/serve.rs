//! `flashlab serve`: a simulated drive served over NBD until SIGINT or SIGTERM.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use flashlab_engine::{BlockDevice, Continued, SimTime};
use flashlab_serve::{Listen, ServeConfig, ServeStats, Server};

use crate::state_files::OutputFile;
use crate::{bad_input, failure, load_device, run_failed, Failure, DEFAULT_SEED};

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// A preset name or a path to a device TOML file.
    #[arg(long)]
    device: Option<String>,
    /// Override a device key by its dotted TOML path, e.g. `--set nand.pages_per_block=256`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Listen on this Unix socket instead of TCP.
    #[arg(long, conflicts_with = "listen")]
    socket: Option<PathBuf>,
    /// TCP address to listen on; loopback only unless --listen-any.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:10809")]
    listen: String,
    /// Accept a --listen address that is not loopback (anyone who reaches it can overwrite
    /// the data).
    #[arg(long)]
    listen_any: bool,
    /// Real seconds per simulated second: 10 runs the drive ten times slower than real
    /// time, which leaves room for the network and the simulation itself.
    #[arg(long, default_value_t = 1.0)]
    time_scale: f64,
    /// Keep the data in this sparse file (created, or extended to the drive's size).
    #[arg(long)]
    backing: Option<PathBuf>,
    /// Memory for the data when there is no --backing file; writes beyond it get ENOSPC.
    #[arg(long, default_value = "1GiB")]
    max_memory: String,
    /// Refuse requests not aligned to the drive's logical block instead of serving them.
    #[arg(long)]
    strict: bool,
    /// Connections served at once. At the limit a new client takes the slot of a connection
    /// still in its handshake or idle for a second; when none is, it is closed at once.
    #[arg(long, default_value_t = 16)]
    max_connections: usize,
    /// Request and reply payload the server holds at once, all connections together; beyond
    /// it the server stops reading requests until replies go out.
    #[arg(long, default_value = "256MiB")]
    max_buffer_memory: String,
    /// On exit, write the server's counts and the drive's counters here as JSON.
    #[arg(long)]
    stats: Option<PathBuf>,
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    #[command(flatten)]
    state: crate::StateArgs,
}

fn listen(args: &ServeArgs) -> Result<Listen, Failure> {
    if let Some(path) = &args.socket {
        return Ok(Listen::Unix(path.clone()));
    }
    let addr: SocketAddr = args.listen.parse().map_err(|_| {
        bad_input(anyhow!(
            "--listen '{}': expected an IP address and port such as 127.0.0.1:10809 or [::1]:10809",
            args.listen
        ))
    })?;
    Ok(Listen::Tcp(addr))
}

pub fn cmd_serve(args: &ServeArgs) -> Result<(), Failure> {
    // The files are registered before the device is built or loaded: a collision is found
    // first, and found again (with the handles written at exit) before serving.
    serve_files(args)?;
    let device_name = args
        .device
        .clone()
        .unwrap_or_else(|| flashlab_device::DEFAULT_DEVICE.to_string());
    if flashlab_system::is_system(&device_name) {
        if !args.set.is_empty() {
            return Err(bad_input(anyhow!(
                "--set applies to a single drive, and '{device_name}' is a system; in a system description put overrides in the drive's `set = {{...}}`"
            )));
        }
        let config = flashlab_system::load_system_config(&device_name).map_err(bad_input)?;
        let (system, clock_ns) =
            crate::state_files::system(&config, args.state.load_state.as_deref(), args.seed)?;
        return serve_device(
            args,
            Continued::new(Box::new(system), clock_ns),
            &config.name,
            "system",
            None,
            &|s| s.counters_json(),
            &|s, out, at| s.save_state(out, at),
        );
    }
    let config = load_device(&device_name, &args.set)?;
    let (ssd, clock_ns) =
        crate::state_files::drive(&config, args.state.load_state.as_deref(), args.seed)?;
    let scale = ssd.scale();
    let slice_note = (scale.capacity_factor > 1.0).then(|| scale.note.clone());
    serve_device(
        args,
        Continued::new(Box::new(ssd), clock_ns),
        &config.name,
        "drive",
        slice_note,
        &|d| d.counters_json(),
        &|d, out, at| d.save_state(out, at),
    )
}

/// Writes a device's state (`--save-state`): the device, where to, the time to resume at.
type SaveState<D> = dyn Fn(
    &D,
    &mut std::io::BufWriter<std::fs::File>,
    SimTime,
) -> Result<u64, flashlab_engine::StateError>;

/// Serve `device` until a signal; `counters` gives what the summary and `--stats` report.
/// A loaded device's simulated time continues from its state's clock; `--save-state` saves
/// it on exit, with the time the server reached.
fn serve_device<D: BlockDevice>(
    args: &ServeArgs,
    device: Continued<Box<D>>,
    name: &str,
    what: &str,
    slice_note: Option<String>,
    counters: &dyn Fn(&D) -> serde_json::Value,
    save_state: &SaveState<D>,
) -> Result<(), Failure> {
    let max_memory_bytes = flashlab_device::units::parse_size(&args.max_memory)
        .map_err(|e| bad_input(anyhow!("--max-memory: {e}")))?;
    let max_buffer_bytes = flashlab_device::units::parse_size(&args.max_buffer_memory)
        .map_err(|e| bad_input(anyhow!("--max-buffer-memory: {e}")))?;
    // The files written at exit are checked now, so a path that cannot be written fails
    // before serving rather than after a session's results exist only in memory.
    let (stats_file, state_file) = serve_files(args)?;
    let size_bytes = device.capacity_bytes();
    let block_bytes = device.logical_block_bytes();

    let mut serve = ServeConfig::new(listen(args)?);
    serve.allow_any_address = args.listen_any;
    serve.time_scale = args.time_scale;
    serve.backing = args.backing.clone();
    serve.max_memory_bytes = max_memory_bytes;
    serve.max_buffer_bytes = max_buffer_bytes;
    serve.strict_alignment = args.strict;
    serve.max_connections = args.max_connections;
    serve.export_name = name.to_string();
    serve.description = format!("flashlab simulated {what} {name}");
    serve.log = flashlab_serve::Log::new(|msg| eprintln!("flashlab: {msg}"));
    let server = Server::bind(device, serve).map_err(|e| failure(e.is_bad_input(), e))?;

    let stop = flashlab_serve::stop_on_signals();
    eprintln!(
        "flashlab: serving {name} ({size_bytes} bytes, {block_bytes}-byte blocks) at time scale {}; SIGINT or SIGTERM stops",
        args.time_scale
    );
    if let Some(note) = slice_note {
        eprintln!(
            "flashlab: the export is the simulated slice of the drive ({note}), not its full capacity"
        );
    }
    // The address alone on standard output, once the socket is listening: scripts wait for it.
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", server.address())
        .and_then(|()| out.flush())
        .context("writing to standard output")
        .map_err(run_failed)?;
    drop(out);

    let finished = server.run(stop).map_err(run_failed)?;
    eprint!("flashlab: {}", finished.stats.summary());
    let horizon_ns = finished.device.horizon_ns();
    let device = finished.device.into_inner();
    // A failed save still leaves the stats written; it is reported after them.
    let save_failure = state_file.as_ref().and_then(|f| {
        crate::state_files::save(f, |out| save_state(&device, out, horizon_ns)).err()
    });
    let counters = counters(&device);
    if let Some(wa) = counters["write_amplification"].as_f64() {
        eprintln!(
            "flashlab: drive: write amplification {wa:.3}, GC copied {} IUs, {} erases",
            counters["ftl"]["gc_copied_ius"], counters["ftl"]["erases"],
        );
    }
    if let Some(file) = stats_file {
        let json = serde_json::json!({
            "serve": stats_json(&finished.stats),
            "device_counters": counters,
        });
        let mut text = serde_json::to_string_pretty(&json).map_err(|e| run_failed(anyhow!(e)))?;
        text.push('\n');
        file.write_bytes(text.as_bytes()).map_err(run_failed)?;
    }
    save_failure.map_or(Ok(()), Err)
}

/// The `--stats` and `--save-state` files, checked before serving: each writable by the
/// rule of every output, and neither the backing file, the loaded state, the socket nor
/// the other (exit 2).
fn serve_files(args: &ServeArgs) -> Result<(Option<OutputFile>, Option<OutputFile>), Failure> {
    let mut files = crate::state_files::Files::new();
    files
        .input("--backing", args.backing.as_deref())?
        .input("--load-state", args.state.load_state.as_deref())?
        .input("--socket", args.socket.as_deref())?
        .input("--device", args.device.as_deref().map(Path::new))?;
    let stats = files.output_opt("--stats", args.stats.as_deref())?;
    let state = files.output_opt("--save-state", args.state.save_state.as_deref())?;
    Ok((stats, state))
}

fn stats_json(s: &ServeStats) -> serde_json::Value {
    let mean = |sum: u64, n: u64| sum.checked_div(n).unwrap_or(0);
    serde_json::json!({
        "connections": s.connections,
        "refused_connections": s.refused_connections,
        "evicted_connections": s.evicted_connections,
        "stalled_connections": s.stalled_connections,
        "peak_buffered_bytes": s.peak_buffered_bytes,
        "max_buffer_bytes": s.max_buffer_bytes,
        "reply_overhead_mean_ns": s.reply_overhead_mean_ns(),
        "hard_disconnects": s.hard_disconnects,
        "replies": s.replies,
        "error_replies": s.error_replies,
        "late_replies": s.late_replies,
        "max_late_ns": s.max_late_ns,
        "max_in_flight": s.max_in_flight,
        "real_elapsed_ns": s.real_elapsed_ns,
        "time_scale": s.time_scale,
        "reads": s.sim.reads,
        "writes": s.sim.writes,
        "flushes": s.sim.flushes,
        "trims": s.sim.trims,
        "write_zeroes": s.sim.write_zeroes,
        "bytes_read": s.sim.bytes_read,
        "bytes_written": s.sim.bytes_written,
        "no_space_errors": s.sim.no_space_errors,
        "io_errors": s.sim.io_errors,
        "host_queued": s.sim.host_queued,
        "peak_store_bytes": s.sim.peak_store_bytes,
        "simulated_read_latency_mean_ns": mean(s.sim.read_latency_sum_ns, s.sim.reads),
        "simulated_write_latency_mean_ns": mean(s.sim.write_latency_sum_ns, s.sim.writes),
        "last_submit_ns": s.sim.last_submit_ns,
    })
}
