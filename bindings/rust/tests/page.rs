//! The crate's calls as they land in the process's shared page, read back the way a
//! recorder reads it: the file that /proc/self/maps names, copied with a plain read,
//! parsed by the layout of lib/page.h (a 128-byte header, 64 counter slots of 64 bytes,
//! 256 mark slots of 128 bytes).
use rsswatch::{Counter, Gauge};
use std::fs;
use std::thread;

const COUNTERS_AT: usize = 128;
const RING_AT: usize = 128 + 64 * 64;
const PAGE_SIZE: usize = RING_AT + 256 * 128;

struct Slot {
    kind: u32,
    value: u64,
}

fn page() -> Vec<u8> {
    rsswatch::init().expect("the page is set up");
    let maps = fs::read_to_string("/proc/self/maps").unwrap();
    let me = format!("/rsswatch.{}", std::process::id());
    let path = maps
        .lines()
        .filter_map(|l| l.find('/').map(|at| &l[at..]))
        .find(|p| {
            p.rsplit('/').next().map_or(false, |base| {
                let base = format!("/{base}");
                base == me || base.starts_with(&format!("{me}."))
            })
        })
        .expect("/proc/self/maps names the page")
        .to_string();
    let bytes = fs::read(&path).unwrap();
    assert_eq!(bytes.len(), PAGE_SIZE, "{path} is a whole page");
    assert_eq!(&bytes[0..4], b"RSWP", "the magic");
    bytes
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn c_str(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8(b[..end].to_vec()).unwrap()
}

fn slot(name: &str) -> Option<Slot> {
    let b = page();
    (0..64).map(|i| COUNTERS_AT + 64 * i).find_map(|at| {
        (u32_at(&b, at) == 2 && c_str(&b[at + 8..at + 56]) == name).then(|| Slot {
            kind: u32_at(&b, at + 4),
            value: u64_at(&b, at + 56),
        })
    })
}

/// The complete marks in the ring, oldest first: (label, realtime ns).
fn marks() -> Vec<(String, i64)> {
    let b = page();
    let mut m: Vec<(u64, String, i64)> = (0..256)
        .map(|i| RING_AT + 128 * i)
        .filter(|&at| u64_at(&b, at) != 0 && u64_at(&b, at) % 2 == 0)
        .map(|at| (u64_at(&b, at), c_str(&b[at + 16..at + 112]), u64_at(&b, at + 8) as i64))
        .collect();
    m.sort();
    m.into_iter().map(|(_, l, t)| (l, t)).collect()
}

fn labels() -> Vec<String> {
    marks().into_iter().map(|(l, _)| l).collect()
}

#[test]
fn counts_from_many_threads_are_exact() {
    let c = Counter::new("it_adds_total").unwrap();
    thread::scope(|s| {
        for t in 0..8 {
            s.spawn(move || {
                for _ in 0..100_000 {
                    c.add(1);
                }
                for _ in 0..1_000 {
                    rsswatch::counter_add("it_adds_total", 2).unwrap();
                }
                // a handle of its own, for the same slot
                Counter::new("it_adds_total").unwrap().add(t);
            });
        }
    });
    let s = slot("it_adds_total").expect("the counter's slot");
    assert_eq!(s.kind, 1, "a counter");
    assert_eq!(s.value, 8 * 100_000 + 8 * 2_000 + (0..8).sum::<u64>());
}

#[test]
fn deltas_of_either_sign_and_wrapping() {
    let c = Counter::new("it_in_flight").unwrap();
    c.add(5);
    c.add(-7);
    assert_eq!(slot("it_in_flight").unwrap().value as i64, -2);
    c.add(i64::MAX);
    c.add(i64::MAX);
    c.add(4);
    assert_eq!(slot("it_in_flight").unwrap().value as i64, 0, "wraps at 64 bits");
}

#[test]
fn gauges_hold_the_last_value_set() {
    let g = Gauge::new("it_queue_depth").unwrap();
    g.set(17);
    g.set(-42);
    let s = slot("it_queue_depth").unwrap();
    assert_eq!((s.kind, s.value as i64), (2, -42));
    rsswatch::gauge_set("it_queue_depth", 1 << 40).unwrap();
    assert_eq!(slot("it_queue_depth").unwrap().value, 1 << 40);
    // by name and through a handle: one slot
    g.set(3);
    assert_eq!(slot("it_queue_depth").unwrap().value, 3);
}

#[test]
fn marks_and_stages_in_order() {
    {
        let _s = rsswatch::stage("it synthesis");
        rsswatch::mark("it inside").unwrap();
    }
    let l = labels();
    let at = |want: &str| l.iter().position(|x| x == want).unwrap_or_else(|| panic!("{want} in {l:?}"));
    assert!(at("it synthesis") < at("it inside"));
    assert!(at("it inside") < at("it synthesis done"));
    let m = marks();
    let t = |want: &str| m.iter().find(|(x, _)| x == want).unwrap().1;
    assert!(t("it synthesis") <= t("it synthesis done"));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    assert!((now - t("it synthesis")).abs() < 60_000_000_000, "stamped with the realtime clock");
}

#[test]
fn a_stage_ended_by_hand_marks_once() {
    let s = rsswatch::stage("it by hand");
    s.end().unwrap();
    assert_eq!(labels().iter().filter(|x| *x == "it by hand done").count(), 1);
}

#[test]
fn a_panicking_stage_says_so() {
    let r = std::panic::catch_unwind(|| {
        let _s = rsswatch::stage("it unwinding");
        panic!("on purpose");
    });
    assert!(r.is_err());
    let l = labels();
    assert!(l.iter().any(|x| x == "it unwinding panicked"), "{l:?}");
    assert!(!l.iter().any(|x| x == "it unwinding done"), "{l:?}");
}

#[test]
fn long_labels_are_kept_as_c_keeps_them() {
    let label = format!("it{}é tail", "l".repeat(92));
    rsswatch::mark(&label).unwrap();
    let want = format!("it{}", "l".repeat(92));
    assert!(labels().iter().any(|x| *x == want), "cut before the character across byte 95");
}
