fn main() {
    std::process::exit(agent_env::cli::main());
}
