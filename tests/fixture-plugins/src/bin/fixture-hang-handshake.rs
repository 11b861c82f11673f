//! Never answers `initialize`: it does not even read stdin.

fn main() {
    eprintln!("fixture-hang-handshake: thinking very hard before the handshake");
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}
