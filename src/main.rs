use std::process::ExitCode;

fn main() -> ExitCode {
    aic::commands::main()
}
