use std::process::ExitCode;

fn main() -> ExitCode {
    aic::cli::main()
}
