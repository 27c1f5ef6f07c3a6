// rustnames: Rust symbol names. Built twice, with the legacy mangling
// (rustnames-legacy) and with -C symbol-mangling-version=v0 (rustnames-v0);
// the CPU goes to rustnames::names::hot_loop, called from
// rustnames::names::Worker::step, so both builds must show those paths,
// demangled and without the legacy ::h<hash> suffix.
//
// usage: rustnames-{legacy,v0} [SECONDS]   (default: run until killed)
// Prints "ready PID" on stdout once running.
use std::hint::black_box;
use std::io::Write;
use std::time::Instant;

mod names {
    use std::hint::black_box;

    #[inline(never)]
    pub fn hot_loop(mut x: u64) -> u64 {
        for _ in 0..300_000u32 {
            x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407));
        }
        x
    }

    pub struct Worker {
        pub seed: u64,
    }

    impl Worker {
        #[inline(never)]
        pub fn step(&mut self) -> u64 {
            let r = hot_loop(black_box(self.seed));
            self.seed = r ^ 0x55;
            self.seed
        }
    }
}

fn main() {
    let seconds: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let t0 = Instant::now();
    println!("ready {}", std::process::id());
    std::io::stdout().flush().unwrap();
    let mut w = names::Worker { seed: 7 };
    let mut acc = 0u64;
    loop {
        acc ^= black_box(w.step());
        if seconds > 0.0 && t0.elapsed().as_secs_f64() >= seconds {
            break;
        }
    }
    std::process::exit(if acc == 42 { 1 } else { 0 });
}
