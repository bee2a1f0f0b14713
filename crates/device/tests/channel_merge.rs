//! A flash channel keeps at most 32 reserved transfer intervals (`sim.channel_merge`). GC
//! reads book their transfer when their array work ends, far ahead on a deep plane queue, so
//! under steady random writes a channel holds more than that. Merging the two earliest marks
//! the channel's near future busy: a program's transfer, wished for now, lands behind the
//! merged block and its plane idles. Merging the narrowest gap keeps the near future free.

mod common;

use common::steady_random_writes_many_units;

#[test]
fn merging_the_narrowest_channel_gap_keeps_more_planes_busy() {
    let (early_iops, early_busy, early_wa) =
        steady_random_writes_many_units("sim.channel_merge", "earliest");
    let (narrow_iops, narrow_busy, narrow_wa) =
        steady_random_writes_many_units("sim.channel_merge", "narrowest");
    eprintln!(
        "earliest {early_iops:.0} IOPS, planes busy {early_busy:.3}, WA {early_wa:.2}; \
         narrowest {narrow_iops:.0} IOPS, planes busy {narrow_busy:.3}, WA {narrow_wa:.2}"
    );
    assert!(narrow_busy > early_busy * 1.1);
    assert!(narrow_iops > early_iops * 1.1);
    // Same work per host write: only when the dies do it changes.
    assert!((narrow_wa - early_wa).abs() < 0.05 * early_wa);
}

#[test]
fn channel_merge_defaults_to_narrowest_and_names_the_valid_values() {
    let model = flashlab_device::load_device_config("tiny-test-1gb", &[])
        .unwrap()
        .resolve()
        .unwrap();
    assert_eq!(
        model.channel_merge,
        flashlab_device::ChannelMergeSetting::Narrowest
    );
    let sets = vec![("sim.channel_merge".to_string(), "\"latest\"".to_string())];
    let err = flashlab_device::load_device_config("tiny-test-1gb", &sets)
        .unwrap_err()
        .to_string();
    assert!(err.contains("channel_merge"), "{err}");
    assert!(err.contains("narrowest"), "{err}");
}
