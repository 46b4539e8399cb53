//! Stage marks, counters and gauges from inside a Rust program, for the rsswatch
//! memory recorder to store beside its samples.
//!
//! This crate calls the C client library, `librsswatch` (`include/rsswatch.h`), which
//! it links statically by default, so a program built with it runs where rsswatch is
//! not installed. A recorder that launched or attached to the program finds its figures
//! by pid; `rsswatch show` then prints the memory at each mark and the counters.
//!
//! ```
//! use rsswatch::{Counter, Gauge};
//!
//! fn main() -> Result<(), rsswatch::Error> {
//!     rsswatch::init()?; // optional: set up now rather than at the first call
//!
//!     let in_flight = Counter::new("partitions_in_flight")?; // look the name up once
//!     let queue = Gauge::new("queue_depth")?;
//!     {
//!         let _s = rsswatch::stage("synthesis"); // marks "synthesis" ...
//!         in_flight.add(1); // one atomic add, from any thread
//!         queue.set(3);
//!         in_flight.add(-1);
//!     } // ... and "synthesis done" here
//!     rsswatch::mark("all partitions synthesized")?;
//!     rsswatch::counter_add("batches", 1)?; // by name: a lookup each call
//!     Ok(())
//! }
//! ```
//!
//! # What a call does, and costs
//!
//! Each call is one call of the C library: lock-free, no system call after setup, no
//! allocation in the library (this crate copies a name or label into a buffer on the
//! stack to add the NUL that C needs, and allocates only for a [`Stage`]'s end label).
//! A counter update through a [`Counter`] is one atomic add; by name it is a lookup and
//! an add; a mark reads the clock and writes one slot of a ring (docs/dev/BENCHMARKS.md
//! has the figures, beside the C calls').
//!
//! **Without a recorder** the calls behave exactly the same: they update the process's
//! page in memory, which no one reads, and succeed. Setup happens on the first call (or
//! [`init`]): the library creates the page `$RSSWATCH_SHM_DIR/rsswatch.<pid>` (default
//! directory `/dev/shm`) and removes it at exit. If setup fails (no writable
//! `/dev/shm`, say), every call returns that error at once, at the cost of one load.
//! This crate adds no check of its own: there is nothing to switch on or off.
//!
//! # Errors
//!
//! Calls that the C library can fail return `Result<_, `[`Error`]`>`; an error changes
//! nothing and may be ignored. A string that holds a NUL byte cannot be passed to C: it
//! is [`Error::Nul`], and the C function is not called. Updates through a handle
//! ([`Counter::add`], [`Gauge::set`]) cannot fail and return nothing; a program that
//! goes on where a lookup failed can keep [`Counter::disabled`] in its place, whose
//! updates do nothing (C's NULL handle).
//!
//! # Threads, handles and fork
//!
//! Every function may be called from any thread at once. A [`Counter`] or [`Gauge`] is
//! a handle to a slot of the page that stays valid for the life of the process: it is
//! `Copy`, `Send` and `Sync`, and owns nothing (there is no `Drop`). In a child made by
//! `fork()` the library sets up a page of the child's own on its first call, but a
//! handle inherited from the parent updates a private copy that no recorder sees: look
//! names up again in the child.
//!
//! # Names, labels and limits
//!
//! - Counter and gauge names: 1 to 47 bytes of `[A-Za-z0-9_.:-]`; 64 names in all per
//!   process. A name is a counter or a gauge, never both. Units come from the name: one
//!   ending in `_bytes` is shown as a size, one ending in `_seconds` as a duration.
//! - Mark labels: any non-empty text; the first 95 bytes are kept, cut back to a
//!   character boundary.
//! - Values are `i64`; counters wrap around at 64 bits.
//! - Link one copy of the library per process: this crate's `links = "rsswatch"` keeps
//!   a second Rust crate from linking another; a C shared object in the same process
//!   that links its own static copy would make a second page that replaces the first.
#![deny(missing_docs)]

use std::error;
use std::fmt;
use std::io;
use std::os::raw::{c_char, c_int};
use std::ptr::NonNull;

pub mod sys;

// errno values of Linux's generic table (x86-64, arm64, riscv and most others).
const EAGAIN: i32 = 11;
const EEXIST: i32 = 17;
const EINVAL: i32 = 22;
const ENOSPC: i32 = 28;
const ENAMETOOLONG: i32 = 36;
const ENOBUFS: i32 = 105;

/// Why a call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// The name or label holds a NUL byte at this byte offset. C strings end at their
    /// first NUL, so the string cannot be passed: the C library was not called.
    Nul(usize),
    /// The C library returned this error: the positive errno value of its `-errno`
    /// (`include/rsswatch.h` lists them for each function). For example `EINVAL` (22)
    /// for an empty name or label or a name byte outside `[A-Za-z0-9_.:-]`,
    /// `ENAMETOOLONG` (36) for a name over 47 bytes, `ENOSPC` (28) when 64 names are in
    /// use, `EEXIST` (17) for a counter's name used as a gauge's or the other way
    /// round, `EAGAIN` (11) when another thread was setting up or creating the name
    /// and did not finish in time (first uses only), `ENOBUFS` (105) for a mark lost
    /// to the ring; any other value is the error of setting up the page.
    Os(i32),
}

impl Error {
    /// The errno value, for an error of the C library; `None` for [`Error::Nul`].
    pub fn raw_os_error(&self) -> Option<i32> {
        match *self {
            Error::Os(e) => Some(e),
            Error::Nul(_) => None,
        }
    }

    fn from_rc(rc: c_int) -> Error {
        Error::Os(-rc)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = match *self {
            Error::Nul(at) => return write!(f, "the string holds a NUL byte at offset {at}"),
            Error::Os(e) => e,
        };
        let what = match e {
            EINVAL => "invalid name or label (empty, or a name byte outside [A-Za-z0-9_.:-])",
            ENAMETOOLONG => "name longer than 47 bytes, or $RSSWATCH_SHM_DIR too long",
            ENOSPC => "64 counters and gauges already in use",
            EEXIST => "name in use as the other kind (counter or gauge), or no page name free",
            EAGAIN => "another thread was setting up or creating the name: try again",
            ENOBUFS => "mark lost: the ring was lapped while it was written",
            _ => return write!(f, "cannot set up the page: {}", io::Error::from_raw_os_error(e)),
        };
        write!(f, "{what} (errno {e})")
    }
}

impl error::Error for Error {}

impl From<Error> for io::Error {
    /// [`Error::Os`] becomes the OS error of that errno; [`Error::Nul`] an
    /// `InvalidInput` error.
    fn from(e: Error) -> io::Error {
        match e {
            Error::Os(errno) => io::Error::from_raw_os_error(errno),
            Error::Nul(_) => io::Error::new(io::ErrorKind::InvalidInput, e),
        }
    }
}

fn check(rc: c_int) -> Result<(), Error> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::from_rc(rc))
    }
}

/// Bytes of a name given to C: one more than the longest name, which makes C reject a
/// longer name exactly as it would the whole one (it fails at the 48th byte, after
/// checking the 47 before), and the NUL.
const NAME_BUF: usize = sys::RSW_NAME_MAX + 2;
/// Bytes of a label given to C: the 95 it keeps, cut back to a character boundary as C
/// cuts it, and the NUL.
const LABEL_BUF: usize = sys::RSW_LABEL_MAX + 1;

fn find_nul(s: &str) -> Result<(), Error> {
    match s.bytes().position(|b| b == 0) {
        Some(at) => Err(Error::Nul(at)),
        None => Ok(()),
    }
}

/// `s` as a C string in `buf`, shortened to `keep` bytes where C would not look further.
fn to_c<'a, const N: usize>(s: &str, keep: usize, buf: &'a mut [u8; N]) -> *const c_char {
    let b = &s.as_bytes()[..keep];
    buf[..keep].copy_from_slice(b);
    buf[keep] = 0;
    buf.as_ptr().cast()
}

/// Calls f with `name` as a C string.
fn with_name<R>(name: &str, f: impl FnOnce(*const c_char) -> R) -> Result<R, Error> {
    find_nul(name)?;
    let mut buf = [0u8; NAME_BUF];
    let keep = name.len().min(NAME_BUF - 1);
    Ok(f(to_c(name, keep, &mut buf)))
}

/// Calls f with `label` as a C string, keeping what C keeps of it.
fn with_label<R>(label: &str, f: impl FnOnce(*const c_char) -> R) -> Result<R, Error> {
    find_nul(label)?;
    let mut buf = [0u8; LABEL_BUF];
    let mut keep = label.len().min(LABEL_BUF - 1);
    while !label.is_char_boundary(keep) {
        keep -= 1;
    }
    Ok(f(to_c(label, keep, &mut buf)))
}

/// Sets the library up now instead of at the first call: creates the shared page and
/// registers its exit and fork handlers. Optional; calling it again returns the result
/// of the first setup.
///
/// Useful at startup to learn at once whether figures can be recorded (the error of
/// setup is the one every later call would return), and before marks are made from a
/// signal handler (setup itself is not async-signal-safe).
pub fn init() -> Result<(), Error> {
    check(unsafe { sys::rsw_init() })
}

/// Records a stage mark, timestamped now (CLOCK_REALTIME, taken by the library).
///
/// A recorder stores it as an event beside the samples; `rsswatch show` lists the
/// memory at each mark, and, with its eBPF engine, the peak of each stage, from a mark
/// to the next. The first 95 bytes of `label` are kept (cut back to a character
/// boundary; the call still succeeds).
///
/// ```
/// rsswatch::mark("loaded dataset").unwrap();
/// assert_eq!(rsswatch::mark(""), Err(rsswatch::Error::Os(22))); // EINVAL
/// assert_eq!(rsswatch::mark("a\0b"), Err(rsswatch::Error::Nul(1)));
/// ```
///
/// Errors: [`Error::Nul`]; `EINVAL` for an empty label; `ENOBUFS` when the mark was
/// lost (the ring was lapped while this call wrote it: very rare); the setup error.
pub fn mark(label: &str) -> Result<(), Error> {
    with_label(label, |l| check(unsafe { sys::rsw_mark(l) }))?
}

/// Adds `delta` (any sign) to the counter `name`, creating it at 0 on first use.
///
/// Looks the name up at each call; a [`Counter`] looks it up once. Errors: those of
/// [`Counter::new`].
pub fn counter_add(name: &str, delta: i64) -> Result<(), Error> {
    with_name(name, |n| check(unsafe { sys::rsw_counter_add(n, delta) }))?
}

/// Sets the gauge `name` to `value`, creating it on first use.
///
/// Looks the name up at each call; a [`Gauge`] looks it up once. Errors: those of
/// [`Gauge::new`].
pub fn gauge_set(name: &str, value: i64) -> Result<(), Error> {
    with_name(name, |n| check(unsafe { sys::rsw_gauge_set(n, value) }))?
}

/// Looks a name up with `lookup`, and when it gives nothing, asks why.
///
/// The C lookups return NULL without a reason. The call by name of the same kind
/// (`rsw_counter_add(name, 0)`, `rsw_gauge_set(name, 0)`) fails the same ways and says
/// why: once setup is done (`rsw_init` says so), a name the lookup could not have is a
/// bad name, the other kind's, or one that could not be made (a full table, or another
/// thread still making it). Where the probe creates the name, it is of the kind asked
/// for (a gauge is never probed as a counter: a lookup that timed out while another
/// thread made the name would otherwise make it a counter for good); adding 0 changes
/// no counter, and a new gauge starts at 0 anyway. A lost race (EAGAIN) is tried again.
fn lookup<T>(
    name: &str,
    is_gauge: bool,
    lookup: unsafe extern "C" fn(*const c_char) -> *mut T,
) -> Result<NonNull<T>, Error> {
    with_name(name, |n| {
        for _ in 0..3 {
            if let Some(h) = NonNull::new(unsafe { lookup(n) }) {
                return Ok(h);
            }
            match unsafe { sys::rsw_init() } {
                0 => {}
                rc if rc == -EAGAIN => continue,
                rc => return Err(Error::from_rc(rc)),
            }
            let probe = if is_gauge {
                unsafe { sys::rsw_gauge_set(n, 0) }
            } else {
                unsafe { sys::rsw_counter_add(n, 0) }
            };
            match probe {
                0 => continue, // there now, of this kind: look again
                rc if rc == -EAGAIN => continue,
                rc => return Err(Error::from_rc(rc)),
            }
        }
        Err(Error::Os(EAGAIN))
    })?
}

/// A counter: a running total changed by deltas of either sign (items processed, or
/// items in flight with `add(1)` / `add(-1)`).
///
/// A handle looked up once by [`Counter::new`]; each [`add`](Counter::add) is then one
/// atomic add, from any thread. It is stored as the column `counter.NAME` of the run,
/// read by the recorder at each sample.
///
/// ```
/// let done = rsswatch::Counter::new("doc_partitions_done")?;
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| done.add(1)); // Counter is Send + Sync + Copy
///     }
/// });
/// # Ok::<(), rsswatch::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter(Option<NonNull<sys::rsw_counter_t>>);

// The C library: every function is thread-safe and lock-free, and a handle stays valid
// for the life of the process (include/rsswatch.h).
unsafe impl Send for Counter {}
unsafe impl Sync for Counter {}

impl Counter {
    /// Looks the counter `name` up, creating it at 0 on first use.
    ///
    /// Errors: [`Error::Nul`]; `EINVAL` for an empty name or a byte outside
    /// `[A-Za-z0-9_.:-]`; `ENAMETOOLONG` for a name over 47 bytes (names are never
    /// truncated, so two long names cannot become one counter); `ENOSPC` when 64
    /// counters and gauges are in use; `EEXIST` when the name is a gauge's; `EAGAIN`
    /// when another thread was creating a name and did not finish in time (first uses
    /// only); the setup error.
    pub fn new(name: &str) -> Result<Counter, Error> {
        lookup(name, false, sys::rsw_counter).map(|h| Counter(Some(h)))
    }

    /// A counter that records nothing: what a program that goes on without its figures
    /// uses where [`Counter::new`] failed (as C code keeps the NULL handle of a failed
    /// `rsw_counter()`, whose updates do nothing).
    ///
    /// ```
    /// let c = rsswatch::Counter::new("bad name").unwrap_or_else(|e| {
    ///     eprintln!("app: not counted: {e}");
    ///     rsswatch::Counter::disabled()
    /// });
    /// c.add(1); // does nothing
    /// assert!(!c.is_enabled());
    /// ```
    pub const fn disabled() -> Counter {
        Counter(None)
    }

    /// Whether updates reach the page: false only for [`Counter::disabled`].
    pub fn is_enabled(&self) -> bool {
        self.0.is_some()
    }

    /// Adds `delta` (any sign); the value wraps around at 64 bits. Exact whatever the
    /// number of threads adding at once. Cannot fail.
    #[inline]
    pub fn add(&self, delta: i64) {
        if let Some(h) = self.0 {
            // 0: rsw_counter_add_h fails only for a NULL handle
            unsafe { sys::rsw_counter_add_h(h.as_ptr(), delta) };
        }
    }
}

/// A gauge: a value that is set (a queue's depth, the bytes a cache holds).
///
/// A handle looked up once by [`Gauge::new`]; each [`set`](Gauge::set) is then one
/// atomic store, from any thread. Stored as the column `counter.NAME` of the run.
///
/// ```
/// let cache = rsswatch::Gauge::new("doc_cache_bytes")?; // "_bytes": shown as a size
/// cache.set(64 << 20);
/// # Ok::<(), rsswatch::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gauge(Option<NonNull<sys::rsw_gauge_t>>);

// As for Counter.
unsafe impl Send for Gauge {}
unsafe impl Sync for Gauge {}

impl Gauge {
    /// Looks the gauge `name` up, creating it (at 0) on first use.
    ///
    /// Errors: as [`Counter::new`], with `EEXIST` when the name is a counter's.
    pub fn new(name: &str) -> Result<Gauge, Error> {
        lookup(name, true, sys::rsw_gauge).map(|h| Gauge(Some(h)))
    }

    /// A gauge that records nothing, for where [`Gauge::new`] failed (as
    /// [`Counter::disabled`]).
    pub const fn disabled() -> Gauge {
        Gauge(None)
    }

    /// Whether updates reach the page: false only for [`Gauge::disabled`].
    pub fn is_enabled(&self) -> bool {
        self.0.is_some()
    }

    /// Sets the gauge to `value`. Cannot fail.
    #[inline]
    pub fn set(&self, value: i64) {
        if let Some(h) = self.0 {
            // 0: rsw_gauge_set_h fails only for a NULL handle
            unsafe { sys::rsw_gauge_set_h(h.as_ptr(), value) };
        }
    }
}

/// Marks the start of the stage `name` now, and its end when the returned guard is
/// dropped (or [`Stage::end`] is called).
///
/// The start mark's label is `name`, the end mark's `"NAME done"`: a stage in rsswatch
/// runs from one mark to the next, so the stage `name` opens holds the work, and `show`
/// gives the memory (and, with the eBPF engine, the peak) of each. Keep names under 90
/// bytes, so that the end label is kept whole (95 bytes are). If the thread is
/// panicking when the guard is dropped, the end mark is `"NAME panicked"`.
///
/// Never fails: the start mark's result is [`Stage::started`]. A name that is empty
/// or holds a NUL makes no marks at all.
///
/// ```
/// {
///     let _s = rsswatch::stage("synthesis"); // "synthesis"
///     // ... the work ...
/// } // "synthesis done"
///
/// let load = rsswatch::stage("load");
/// load.end()?; // "load done", with its result
/// # Ok::<(), rsswatch::Error>(())
/// ```
///
/// Bind the guard to a name (`let _s`): `let _ = stage(..)` drops it at once.
#[must_use = "the stage ends when the guard is dropped: bind it with `let _s = ...`"]
pub fn stage(name: &str) -> Stage {
    let started = mark(name);
    let ends = !name.is_empty() && !matches!(started, Err(Error::Nul(_)));
    Stage {
        name_len: name.len(),
        end_label: if ends { Some(format!("{name} done")) } else { None },
        started,
    }
}

/// The guard of a stage made by [`stage`]: marks `"NAME done"` when dropped.
///
/// Owns the end label; `Send` and `Sync`, so a stage may end on another thread.
#[derive(Debug)]
#[must_use = "the stage ends when the guard is dropped: bind it with `let _s = ...`"]
pub struct Stage {
    name_len: usize,
    end_label: Option<String>,
    started: Result<(), Error>,
}

impl Stage {
    /// The result of the start mark.
    pub fn started(&self) -> Result<(), Error> {
        self.started
    }

    /// Ends the stage now, with the end mark's result (for a name that made no start
    /// mark, the start's error).
    pub fn end(mut self) -> Result<(), Error> {
        self.finish(false)
    }

    fn finish(&mut self, panicking: bool) -> Result<(), Error> {
        match self.end_label.take() {
            None => self.started,
            Some(mut label) => {
                if panicking {
                    label.truncate(self.name_len);
                    label.push_str(" panicked");
                }
                mark(&label)
            }
        }
    }
}

impl Drop for Stage {
    /// Makes the end mark, unless [`Stage::end`] did; its error is ignored.
    fn drop(&mut self) {
        let _ = self.finish(std::thread::panicking());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync<T: Send + Sync>() {}

    #[test]
    fn disabled_handles_do_nothing() {
        let (c, g) = (Counter::disabled(), Gauge::disabled());
        c.add(1);
        g.set(1);
        assert!(!c.is_enabled() && !g.is_enabled());
        assert!(Counter::new("unit_enabled").unwrap().is_enabled());
    }

    #[test]
    fn handles_and_guards_cross_threads() {
        send_sync::<Counter>();
        send_sync::<Gauge>();
        send_sync::<Stage>();
        send_sync::<Error>();
    }

    #[test]
    fn init_succeeds_and_repeats() {
        assert_eq!(init(), Ok(()));
        assert_eq!(init(), Ok(()));
    }

    #[test]
    fn nul_is_an_error_not_a_panic() {
        assert_eq!(mark("stage\0two"), Err(Error::Nul(5)));
        assert_eq!(counter_add("\0", 1), Err(Error::Nul(0)));
        assert_eq!(gauge_set("g\0", 1), Err(Error::Nul(1)));
        assert_eq!(Counter::new("c\0x"), Err(Error::Nul(1)));
        assert_eq!(Gauge::new("g\0x"), Err(Error::Nul(1)));
        let s = stage("a\0b");
        assert_eq!(s.started(), Err(Error::Nul(1)));
        assert_eq!(s.end(), Err(Error::Nul(1)));
        // a NUL past the bytes C would look at is still refused
        let long = format!("{}\0", "x".repeat(200));
        assert_eq!(mark(&long), Err(Error::Nul(200)));
        assert_eq!(counter_add(&long, 1), Err(Error::Nul(200)));
    }

    #[test]
    fn names_are_checked_by_the_c_library() {
        assert_eq!(counter_add("", 1), Err(Error::Os(EINVAL)));
        assert_eq!(counter_add("has space", 1), Err(Error::Os(EINVAL)));
        assert_eq!(counter_add("é", 1), Err(Error::Os(EINVAL)));
        assert_eq!(Counter::new("bad/name"), Err(Error::Os(EINVAL)));
        assert_eq!(Gauge::new("bad/name"), Err(Error::Os(EINVAL)));
        assert_eq!(mark(""), Err(Error::Os(EINVAL)));
        let n47 = "n".repeat(47);
        let n48 = "n".repeat(48);
        assert_eq!(counter_add(&n47, 1), Ok(()));
        assert_eq!(counter_add(&n48, 1), Err(Error::Os(ENAMETOOLONG)));
        assert_eq!(Counter::new(&"m".repeat(300)), Err(Error::Os(ENAMETOOLONG)));
        assert_eq!(Gauge::new(&"m".repeat(48)), Err(Error::Os(ENAMETOOLONG)));
        // C checks the bytes before the 48th first: a bad one there is EINVAL
        let bad_then_long = format!("{} {}", "b".repeat(10), "b".repeat(60));
        assert_eq!(counter_add(&bad_then_long, 1), Err(Error::Os(EINVAL)));
        // and a bad byte past the 48th is never seen: the name is too long
        let long_then_bad = format!("{} ", "b".repeat(60));
        assert_eq!(counter_add(&long_then_bad, 1), Err(Error::Os(ENAMETOOLONG)));
    }

    #[test]
    fn a_name_is_a_counter_or_a_gauge() {
        let c = Counter::new("unit_kind_counter").unwrap();
        c.add(1);
        assert_eq!(Gauge::new("unit_kind_counter"), Err(Error::Os(EEXIST)));
        assert_eq!(gauge_set("unit_kind_counter", 1), Err(Error::Os(EEXIST)));
        let g = Gauge::new("unit_kind_gauge").unwrap();
        g.set(5);
        assert_eq!(Counter::new("unit_kind_gauge"), Err(Error::Os(EEXIST)));
        assert_eq!(counter_add("unit_kind_gauge", 1), Err(Error::Os(EEXIST)));
        // the same name gives the same handle
        assert_eq!(Counter::new("unit_kind_counter"), Ok(c));
        assert_eq!(Gauge::new("unit_kind_gauge"), Ok(g));
    }

    #[test]
    fn gauges_made_by_racing_threads_stay_gauges() {
        // Threads that make the same new names at once: every Gauge::new gives the one
        // handle of the name, and no name ends up a counter (a lookup that lost the race
        // must not probe the name as a counter).
        let names = ["race_gauge_a", "race_gauge_b", "race_gauge_c"];
        let got: Vec<Vec<Gauge>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| s.spawn(|| names.iter().map(|n| Gauge::new(n).unwrap()).collect()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (i, n) in names.iter().enumerate() {
            assert!(got.iter().all(|g| g[i] == got[0][i]));
            assert_eq!(Counter::new(n), Err(Error::Os(EEXIST)));
        }
    }

    #[test]
    fn long_labels_are_cut_at_a_character() {
        // 94 ASCII bytes and a 2-byte character across the 95th: cut before it
        let label = format!("{}é and more", "l".repeat(94));
        assert_eq!(mark(&label), Ok(()));
        assert_eq!(mark(&"é".repeat(100)), Ok(()));
    }

    #[test]
    fn errors_read_as_one_line() {
        assert_eq!(Error::Nul(3).to_string(), "the string holds a NUL byte at offset 3");
        assert!(Error::Os(ENOSPC).to_string().starts_with("64 counters and gauges"));
        assert!(Error::Os(13).to_string().starts_with("cannot set up the page: "));
        assert_eq!(Error::Os(ENOSPC).raw_os_error(), Some(ENOSPC));
        assert_eq!(Error::Nul(0).raw_os_error(), None);
        let io: io::Error = Error::Os(EINVAL).into();
        assert_eq!(io.raw_os_error(), Some(EINVAL));
        let io: io::Error = Error::Nul(0).into();
        assert_eq!(io.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn a_stage_with_no_name_makes_no_marks() {
        let s = stage("");
        assert_eq!(s.started(), Err(Error::Os(EINVAL)));
        assert_eq!(s.end(), Err(Error::Os(EINVAL)));
        let s = stage("unit stage");
        assert_eq!(s.started(), Ok(()));
        assert_eq!(s.end(), Ok(()));
    }
}
