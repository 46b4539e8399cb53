//! Cost of the crate's calls beside the C calls they wrap, in ns per call, in one
//! process: each call is timed over a loop of N calls (marks: N / 4), the Rust call's
//! loop and the C call's loop in turns, REPS times; the medians are printed. The method
//! of bench/bench_client.c (docs/dev/BENCHMARKS-client.md), on one thread. No recorder
//! reads the page meanwhile, the library's normal state.
//!
//!   cargo bench --offline --bench client -- [REPS [N]]     (default 9, 4000000)
use rsswatch::{sys, Counter, Gauge};
use std::os::raw::c_char;
use std::process::exit;
use std::time::Instant;

const LABEL: &str = "stage: synthesis done 42";
const LABEL_C: &[u8] = b"stage: synthesis done 42\0";
const COUNTER: &str = "bench.items_in_flight";
const COUNTER_C: &[u8] = b"bench.items_in_flight\0";
const GAUGE: &str = "bench.queue_depth";
const GAUGE_C: &[u8] = b"bench.queue_depth\0";

#[derive(Clone, Copy)]
enum Op {
    Mark,
    CounterAdd,
    CounterByName,
    GaugeSet,
    GaugeByName,
}

struct Env {
    counter: Counter,
    gauge: Gauge,
    counter_h: *mut sys::rsw_counter_t,
    gauge_h: *mut sys::rsw_gauge_t,
}

const ENOBUFS: i32 = 105;

/// ns per call of n calls; bad is set when a call failed (a mark lost to a busy slot,
/// ENOBUFS, is not a failure: it counts in lost).
fn run(env: &Env, op: Op, rust: bool, n: u64, bad: &mut bool, lost: &mut u64) -> f64 {
    let t0 = Instant::now();
    let mut fails = 0u64;
    match (op, rust) {
        (Op::Mark, true) => {
            for _ in 0..n {
                match rsswatch::mark(LABEL) {
                    Ok(()) => {}
                    Err(rsswatch::Error::Os(ENOBUFS)) => *lost += 1,
                    Err(_) => fails += 1,
                }
            }
        }
        (Op::Mark, false) => {
            for _ in 0..n {
                match unsafe { sys::rsw_mark(LABEL_C.as_ptr() as *const c_char) } {
                    0 => {}
                    rc if rc == -ENOBUFS => *lost += 1,
                    _ => fails += 1,
                }
            }
        }
        (Op::CounterAdd, true) => {
            for _ in 0..n {
                env.counter.add(1);
            }
        }
        (Op::CounterAdd, false) => {
            for _ in 0..n {
                fails += (unsafe { sys::rsw_counter_add_h(env.counter_h, 1) } != 0) as u64;
            }
        }
        (Op::CounterByName, true) => {
            for _ in 0..n {
                fails += rsswatch::counter_add(COUNTER, 1).is_err() as u64;
            }
        }
        (Op::CounterByName, false) => {
            for _ in 0..n {
                let rc = unsafe { sys::rsw_counter_add(COUNTER_C.as_ptr() as *const c_char, 1) };
                fails += (rc != 0) as u64;
            }
        }
        (Op::GaugeSet, true) => {
            for i in 0..n {
                env.gauge.set(i as i64);
            }
        }
        (Op::GaugeSet, false) => {
            for i in 0..n {
                fails += (unsafe { sys::rsw_gauge_set_h(env.gauge_h, i as i64) } != 0) as u64;
            }
        }
        (Op::GaugeByName, true) => {
            for i in 0..n {
                fails += rsswatch::gauge_set(GAUGE, i as i64).is_err() as u64;
            }
        }
        (Op::GaugeByName, false) => {
            for i in 0..n {
                let rc = unsafe { sys::rsw_gauge_set(GAUGE_C.as_ptr() as *const c_char, i as i64) };
                fails += (rc != 0) as u64;
            }
        }
    }
    let ns = t0.elapsed().as_nanos() as f64 / n as f64;
    *bad |= fails > 0;
    ns
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn arg(i: usize, default: u64, max: u64) -> u64 {
    // cargo bench passes "--bench" to a harness-less bench: skip it
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    match args.get(i) {
        None => default,
        Some(a) => match a.parse::<u64>() {
            Ok(v) if v >= 1 && v <= max => v,
            _ => {
                eprintln!("usage: client [REPS (1..51) [N (1..100000000)]]");
                exit(2);
            }
        },
    }
}

fn main() {
    let reps = arg(0, 9, 51) as usize;
    let n = arg(1, 4_000_000, 100_000_000);
    if let Err(e) = rsswatch::init() {
        eprintln!("client: cannot set up the client page: {e}");
        exit(1);
    }
    let env = match (Counter::new(COUNTER), Gauge::new(GAUGE)) {
        (Ok(counter), Ok(gauge)) => Env {
            counter,
            gauge,
            counter_h: unsafe { sys::rsw_counter(COUNTER_C.as_ptr() as *const c_char) },
            gauge_h: unsafe { sys::rsw_gauge(GAUGE_C.as_ptr() as *const c_char) },
        },
        _ => {
            eprintln!("client: cannot make the counter and gauge");
            exit(1);
        }
    };
    let ops = [
        (Op::Mark, "rsswatch::mark", "rsw_mark (24-byte label)"),
        (Op::CounterAdd, "Counter::add", "rsw_counter_add_h"),
        (Op::CounterByName, "rsswatch::counter_add", "rsw_counter_add (by name)"),
        (Op::GaugeSet, "Gauge::set", "rsw_gauge_set_h"),
        (Op::GaugeByName, "rsswatch::gauge_set", "rsw_gauge_set (by name)"),
    ];
    let (mut bad, mut lost) = (false, 0u64);
    println!("{:<24} {:>9}   {:<27} {:>9} {:>7}", "Rust call", "ns", "C call", "ns", "ratio");
    for &(op, rust_name, c_name) in &ops {
        let n = if matches!(op, Op::Mark) { n / 4 } else { n }.max(1);
        run(&env, op, true, n / 10 + 1, &mut bad, &mut lost); // warm up
        run(&env, op, false, n / 10 + 1, &mut bad, &mut lost);
        let (mut r, mut c) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            r.push(run(&env, op, true, n, &mut bad, &mut lost));
            c.push(run(&env, op, false, n, &mut bad, &mut lost));
        }
        let (r, c) = (median(&mut r), median(&mut c));
        println!("{rust_name:<24} {r:>9.2}   {c_name:<27} {c:>9.2} {:>7.2}", r / c);
    }
    println!(
        "median of {reps} runs of {n} calls (marks {}); {}; {lost} marks lost to a busy slot",
        (n / 4).max(1),
        if bad { "SOME CALLS FAILED" } else { "no call failed" }
    );
    exit(if bad { 1 } else { 0 });
}
