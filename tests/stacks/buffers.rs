// A Rust program for t85-stacks: a Vec made by alloc_buffers, built with
// rustc -C opt-level=3.
#[inline(never)]
fn alloc_buffers(n: usize) -> Vec<u8> {
    vec![7u8; n]
}

fn main() {
    let mib: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(64);
    let v = alloc_buffers(mib << 20);
    std::thread::sleep(std::time::Duration::from_millis(50));
    println!("{}", v[mib]);
}
