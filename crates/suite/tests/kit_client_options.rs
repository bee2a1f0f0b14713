//! flashlab-kit's `client_options` module on the registered suites.

use flashlab_engine::NS_PER_S;
use flashlab_kit::client_options::*;
use flashlab_kit::lengths::{parse_size, parse_time};
use flashlab_kit::options::OwnOptions;
use flashlab_suite::*;
use flashlab_suite::{DesktopOptions, TransferSweepOptions};

#[test]
fn names_round_trip_and_unknown_names_list_the_valid_ones() {
    for p in DesktopProfile::ALL {
        assert_eq!(DesktopProfile::from_name(p.name()).unwrap(), p);
    }
    for s in DriveState::ALL {
        assert_eq!(DriveState::from_name(s.name()).unwrap(), s);
    }
    let msg = DesktopProfile::from_name("sata").unwrap_err().to_string();
    assert!(msg.contains("--profile") && msg.contains("nvme"), "{msg}");
    let msg = DriveState::from_name("used").unwrap_err().to_string();
    assert!(
        msg.contains("--state") && msg.contains("fresh or full"),
        "{msg}"
    );
}

#[test]
fn sizes_and_times_parse_and_name_their_option() {
    assert_eq!(parse_size("--size", "256MiB").unwrap(), 256 << 20);
    assert_eq!(parse_size("--min-bs", "512").unwrap(), 512);
    let msg = parse_size("--max-bs", "5s").unwrap_err().to_string();
    assert!(msg.contains("--max-bs") && msg.contains("64MiB"), "{msg}");
    assert_eq!(parse_time("--test-interval", "0").unwrap(), 0);
    assert_eq!(parse_time("--test-interval", "5s").unwrap(), 5 * NS_PER_S);
    let msg = parse_time("--test-interval", "4KiB")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("--test-interval"), "{msg}");
}

#[test]
fn validate_names_the_option_out_of_range() {
    let common = SuiteOptions::default();
    assert!(ClientOptions::default().validate().is_ok());
    assert!(TransferSweepOptions::default().validate(&common).is_ok());
    assert!(DesktopOptions::default().validate(&common).is_ok());
    let sweep = |min_bs_bytes, max_bs_bytes| {
        TransferSweepOptions {
            min_bs_bytes,
            max_bs_bytes,
        }
        .validate(&common)
    };
    let desktop = |runs, interval_ns| DesktopOptions { runs, interval_ns }.validate(&common);
    let size = ClientOptions {
        size_bytes: Some(1000),
        ..Default::default()
    };
    for (result, option) in [
        (sweep(1000, 64 << 20), "--min-bs"),
        (sweep(8192, 4096), "--max-bs"),
        (size.validate(), "--size"),
        (desktop(0, 0), "--runs"),
        (desktop(1, 2 * MAX_INTERVAL_NS), "--test-interval"),
    ] {
        let msg = result.unwrap_err().to_string();
        assert!(msg.contains(option), "{msg}");
    }
}

#[test]
fn state_both_is_fresh_then_full() {
    assert_eq!(
        ClientOptions::parse_states("both").unwrap(),
        vec![DriveState::Fresh, DriveState::Full]
    );
    assert_eq!(
        ClientOptions::parse_states("full").unwrap(),
        vec![DriveState::Full]
    );
    assert!(ClientOptions::parse_states("used").is_err());
}
