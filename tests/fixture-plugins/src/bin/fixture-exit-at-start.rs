//! Exits with code 3 before the handshake, saying why on stderr.

fn main() {
    eprintln!("fixture-exit-at-start: cannot start: the settings file is missing");
    std::process::exit(3);
}
