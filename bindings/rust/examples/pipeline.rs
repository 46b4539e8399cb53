//! A small pipeline that tells rsswatch what it is doing: a stage per phase, partitions
//! counted from several worker threads, a gauge of the bytes they hold.
//!
//!   cargo run --example pipeline -- [--workers N] [--partitions N] [--size MIB]
//!                                    [--await FILE]
//!   rsswatch record -- target/debug/examples/pipeline --workers 4
//!   rsswatch show
//!
//! Each worker synthesizes its share of the partitions (a buffer of SIZE MiB, touched),
//! adds 1 to `partitions_done` and `bytes_synthesized` by SIZE MiB per partition, and
//! keeps `partitions_in_flight` (+1 / -1) and the gauge `buffers_bytes` up to date. The
//! final figures are exact whatever the threads' order: partitions_done = N x
//! partitions, partitions_in_flight = 0.
//!
//! --await FILE: before exiting, wait (up to 60 s) until FILE exists: a handshake for a
//! test that first wants to see the recorder read the final figures.
use rsswatch::{Counter, Gauge};
use std::process::exit;
use std::sync::atomic::{AtomicI64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

struct Opts {
    workers: i64,
    partitions: i64,
    size_mib: i64,
    await_file: Option<String>,
}

fn usage(why: &str) -> ! {
    eprintln!("pipeline: {why}");
    eprintln!("usage: pipeline [--workers N] [--partitions N] [--size MIB] [--await FILE]");
    exit(2);
}

fn parse() -> Opts {
    let mut o = Opts { workers: 4, partitions: 1000, size_mib: 1, await_file: None };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().unwrap_or_else(|| usage(&format!("{a} needs a value")));
        if a == "--await" {
            o.await_file = Some(v);
            continue;
        }
        let n: i64 = v
            .parse()
            .ok()
            .filter(|&n| n >= 0 && n <= 1_000_000)
            .unwrap_or_else(|| usage(&format!("bad value for {a}: {v}")));
        match a.as_str() {
            "--workers" => o.workers = n.max(1),
            "--partitions" => o.partitions = n,
            "--size" => o.size_mib = n,
            _ => usage(&format!("unknown option {a}")),
        }
    }
    o
}

fn main() {
    let o = parse();
    // Without a recorder every call still works (it only updates memory); a failed
    // setup makes every call fail fast, and the pipeline runs on regardless.
    let said = match rsswatch::init() {
        Ok(()) => false,
        Err(e) => {
            eprintln!("pipeline: figures will not be recorded: {e}");
            true
        }
    };
    // Where a name cannot be had, a disabled handle takes its place: its updates do
    // nothing, as C's NULL handle. A failed setup was said once, above.
    let counter = |name: &str| {
        Counter::new(name).unwrap_or_else(|e| {
            if !said {
                eprintln!("pipeline: {name} will not be counted: {e}");
            }
            Counter::disabled()
        })
    };
    let (done, in_flight, synthesized) =
        (counter("partitions_done"), counter("partitions_in_flight"), counter("bytes_synthesized"));
    let held = Gauge::new("buffers_bytes").unwrap_or(Gauge::disabled());
    let _ = rsswatch::gauge_set("workers", o.workers);

    let plan = rsswatch::stage("plan");
    let sizes: Vec<usize> = (0..o.partitions).map(|_| (o.size_mib as usize) << 20).collect();
    drop(plan);

    let bytes_now = AtomicI64::new(0);
    {
        let _s = rsswatch::stage("synthesis");
        thread::scope(|s| {
            for w in 0..o.workers {
                let (sizes, bytes_now) = (&sizes, &bytes_now);
                s.spawn(move || {
                    for (i, &size) in sizes.iter().enumerate() {
                        in_flight.add(1);
                        let mut buf = vec![0u8; size];
                        // touched, so that its pages are resident (and not optimized out)
                        for b in buf.iter_mut().step_by(4096) {
                            unsafe { std::ptr::write_volatile(b, (w as u8) ^ (i as u8) | 1) };
                        }
                        held.set(bytes_now.fetch_add(size as i64, Ordering::Relaxed) + size as i64);
                        drop(buf);
                        held.set(bytes_now.fetch_sub(size as i64, Ordering::Relaxed) - size as i64);
                        synthesized.add(size as i64);
                        done.add(1);
                        in_flight.add(-1);
                    }
                });
            }
        });
    }
    match rsswatch::mark("all partitions synthesized") {
        Err(e) if !said => eprintln!("pipeline: mark: {e}"),
        _ => {}
    }
    println!(
        "pipeline: {} workers x {} partitions of {} MiB",
        o.workers, o.partitions, o.size_mib
    );
    if let Some(f) = o.await_file {
        let end = Instant::now() + Duration::from_secs(60);
        while !std::path::Path::new(&f).exists() {
            if Instant::now() >= end {
                eprintln!("pipeline: {f} did not appear within 60s");
                exit(1);
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}
