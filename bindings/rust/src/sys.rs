//! The C functions of `include/rsswatch.h`, as they are.
//!
//! Every function returns 0 or a negative errno value and never keeps the pointers it
//! is given beyond the call; strings must be NUL-terminated. The safe API of the crate
//! root is built on these; they are public for code that already holds C strings and
//! for the crate's benchmark, which compares the two.
use std::os::raw::{c_char, c_int, c_longlong};

/// Bytes in a counter or gauge name (`RSW_NAME_MAX`).
pub const RSW_NAME_MAX: usize = 47;
/// Bytes of a mark label that are kept (`RSW_LABEL_MAX`).
pub const RSW_LABEL_MAX: usize = 95;
/// Counters and gauges together, per process (`RSW_COUNTERS_MAX`).
pub const RSW_COUNTERS_MAX: usize = 64;
/// Marks a recorder can be behind without losing any (`RSW_RING_SLOTS`).
pub const RSW_RING_SLOTS: usize = 256;

/// A counter's handle (`rsw_counter_t`): opaque, valid for the life of the process.
#[repr(C)]
pub struct rsw_counter_t {
    _opaque: [u8; 0],
}

/// A gauge's handle (`rsw_gauge_t`): opaque, valid for the life of the process.
#[repr(C)]
pub struct rsw_gauge_t {
    _opaque: [u8; 0],
}

extern "C" {
    /// Sets up now instead of at the first call.
    pub fn rsw_init() -> c_int;
    /// A stage mark with the current CLOCK_REALTIME time.
    pub fn rsw_mark(label: *const c_char) -> c_int;
    /// Adds `delta` to the counter `name`, creating it at 0 on first use.
    pub fn rsw_counter_add(name: *const c_char, delta: c_longlong) -> c_int;
    /// Sets the gauge `name` to `value`, creating it on first use.
    pub fn rsw_gauge_set(name: *const c_char, value: c_longlong) -> c_int;
    /// Looks a counter up once; NULL on any error of `rsw_counter_add`.
    pub fn rsw_counter(name: *const c_char) -> *mut rsw_counter_t;
    /// Adds `delta` through a handle; -EINVAL for a NULL handle, else 0.
    pub fn rsw_counter_add_h(counter: *mut rsw_counter_t, delta: c_longlong) -> c_int;
    /// Looks a gauge up once; NULL on any error of `rsw_gauge_set`.
    pub fn rsw_gauge(name: *const c_char) -> *mut rsw_gauge_t;
    /// Sets a gauge through a handle; -EINVAL for a NULL handle, else 0.
    pub fn rsw_gauge_set_h(gauge: *mut rsw_gauge_t, value: c_longlong) -> c_int;
}
