//! With the thread label, threads that share a name (a pool's workers) are distinct
//! series: `thread_serial` tells them apart, so no two series of `/metrics` carry the
//! same labels (Prometheus would keep one and drop the rest).

use latte::Id;
use latte_prometheus::Prometheus;
use std::collections::BTreeSet;

static JOB: Id = Id::new("fleet_labels_job");

#[test]
fn threads_that_share_a_name_are_distinct_series() {
    let _turn = super::agent_turn();
    let (guard, addr) = super::serve(
        Prometheus::bind("127.0.0.1:0").unwrap().thread_label(true),
        |b| b,
    );
    for n in [3u64, 5, 7] {
        std::thread::Builder::new()
            .name("worker".into())
            .spawn(move || (0..n).for_each(|i| latte::record(&JOB, 100 + i)))
            .unwrap()
            .join()
            .unwrap();
    }
    let text = ureq::get(format!("http://{addr}/metrics"))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    let seen: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("latte_samples_seen_total{component=\"fleet_labels_job\""))
        .collect();
    assert_eq!(seen.len(), 3, "{text}");
    assert!(
        seen.iter()
            .all(|l| l.contains("thread=\"worker\",thread_serial=\"")),
        "{seen:?}"
    );
    let counts: BTreeSet<&str> = seen.iter().filter_map(|l| l.rsplit(' ').next()).collect();
    assert_eq!(counts, BTreeSet::from(["3", "5", "7"]), "{seen:?}");
    // No two samples of any metric carry the same name and labels.
    let samples: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' ').map(|(series, _)| series))
        .collect();
    let distinct: BTreeSet<&&str> = samples.iter().collect();
    assert_eq!(distinct.len(), samples.len(), "a series repeats:\n{text}");
    guard.stop().unwrap();
}
