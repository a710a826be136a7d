// rustspin.rs - a real Rust program for the demangler (tests/integration/cli_names.sh,
// run only where rustc is installed): a function and a method of a
// generic type, hot_loop and grind, in the ratio of their loops (1:1).
use std::hint::black_box;
pub mod work {
    pub struct Acc<T> { pub v: T }
    impl<T: Copy + std::ops::Add<Output = T>> Acc<T> {
        #[inline(never)]
        pub fn grind(&mut self, x: T, n: u64) { for _ in 0..n { self.v = std::hint::black_box(self.v + x); } }
    }
    #[inline(never)]
    pub fn hot_loop(n: u64) -> u64 { let mut s = 0u64; for i in 0..n { s = std::hint::black_box(s.wrapping_add(i ^ (s >> 3))); } s }
}
fn main() {
    let n: u64 = std::env::args().nth(1).map(|a| a.parse().unwrap()).unwrap_or(300);
    let mut a = work::Acc { v: 0u64 };
    let mut t = 0;
    for _ in 0..n { t += work::hot_loop(1_000_000); a.grind(1, 1_000_000); }
    println!("{}", black_box(t + a.v));
}
