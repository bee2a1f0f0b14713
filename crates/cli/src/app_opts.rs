//! Options of the app-profiles and oltp suites, and how they become
//! [`flashlab_suite::AppProfileOptions`] and [`flashlab_suite::OltpOptions`].

#[derive(clap::Args, Debug)]
pub struct AppProfileArgs {
    /// app-profiles: profiles to run, comma-separated (default all: sql, sql-90-10,
    /// sql-80-20, oracle, oracle-90-10, oracle-80-20, vdi-full-boot, vdi-full-login,
    /// vdi-full-monday, vdi-linked-boot, vdi-linked-login, vdi-linked-monday,
    /// iometer-database, iometer-fileserver, iometer-webserver, iometer-workstation).
    #[arg(long, value_delimiter = ',')]
    profiles: Vec<String>,
    /// app-profiles: outstanding I/Os of each point (queue depth x --jobs), ascending.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4,8,16,32,64,128,256"
    )]
    loads: Vec<u32>,
    /// app-profiles: a curve stops once IOPS grow by less than this percentage from one
    /// load to the next while the average latency grows.
    #[arg(long, default_value_t = 5.0)]
    peak_gain: f64,
    /// oltp: virtual machines, each with its own MySQL on an equal share of the span.
    #[arg(long, default_value_t = 16)]
    vms: u32,
    /// oltp: sysbench threads per VM.
    #[arg(long, default_value_t = 8)]
    threads: u32,
}

impl AppProfileArgs {
    /// Set the suite's options in `o` (checked by `SuiteOptions::validate`).
    pub fn apply(&self, o: &mut flashlab_suite::SuiteOptions) {
        let a = &mut o.app_profiles;
        if !self.profiles.is_empty() {
            a.profiles = self.profiles.iter().map(|p| p.trim().to_string()).collect();
        }
        a.loads = self.loads.clone();
        a.peak_gain_percent = self.peak_gain;
        o.oltp = flashlab_suite::OltpOptions {
            vms: self.vms,
            threads: self.threads,
        };
    }
}
