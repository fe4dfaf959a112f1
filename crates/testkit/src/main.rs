//! The `atto-testkit` binary: serve a script file as a separate process, for benchmarks
//! and the offline demo.
//!
//! Owns argument parsing and the process lifecycle only; the server is the library's.
//! Arguments are parsed by hand to keep the binary light.

use std::fs::OpenOptions;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use atto_testkit::{Script, ScriptedServer};

const USAGE: &str = "usage: atto-testkit serve --script FILE.json [--port N] [--record FILE.jsonl]";

/// Options of `atto-testkit serve`.
#[derive(Debug)]
struct ServeArgs {
    script: PathBuf,
    port: u16,
    record: Option<PathBuf>,
}

fn parse_args(args: &[String]) -> Result<ServeArgs, String> {
    let mut iter = args.iter();
    match iter.next().map(String::as_str) {
        Some("serve") => {}
        Some(other) => return Err(format!("unknown command {other:?}")),
        None => return Err("missing command".to_owned()),
    }
    let (mut script, mut port, mut record) = (None, 0u16, None);
    while let Some(flag) = iter.next() {
        let mut value = || {
            iter.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--script" => script = Some(PathBuf::from(value()?)),
            "--port" => {
                let v = value()?;
                port = v
                    .parse()
                    .map_err(|_| format!("--port: not a port number: {v:?}"))?;
            }
            "--record" => record = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    let script = script.ok_or("--script is required")?;
    Ok(ServeArgs {
        script,
        port,
        record,
    })
}

/// Resolves on Ctrl-C or SIGTERM.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    // Without a SIGTERM handler, Ctrl-C (or being killed) still ends the process.
    let _ = tokio::signal::ctrl_c().await;
}

async fn serve(args: ServeArgs) -> Result<(), String> {
    let script = Script::from_file(&args.script).map_err(|e| e.to_string())?;
    let mut record = match &args.record {
        Some(path) => Some(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("cannot open record file {}: {e}", path.display()))?,
        ),
        None => None,
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    let server = ScriptedServer::start_on(script, addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let mut requests = server.subscribe();
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening {}", server.base_url())
            .and_then(|()| out.flush())
            .map_err(|e| format!("cannot write to stdout: {e}"))?;
    }
    let stop = stop_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            Some(req) = requests.recv() => {
                if let Some(file) = record.as_mut() {
                    let line = serde_json::to_string(&req).map_err(|e| e.to_string())?;
                    writeln!(file, "{line}")
                        .and_then(|()| file.flush())
                        .map_err(|e| format!("cannot append to record file: {e}"))?;
                }
            }
        }
    }
    server.shutdown().await;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let args = match parse_args(&args) {
        Ok(args) => args,
        Err(msg) => {
            eprintln!("atto-testkit: {msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("atto-testkit: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("atto-testkit: {msg}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn parses_serve_flags() {
        let a = parse_args(&strings(&[
            "serve", "--script", "s.json", "--port", "8080", "--record", "r.jsonl",
        ]))
        .unwrap();
        assert_eq!(a.script, PathBuf::from("s.json"));
        assert_eq!(a.port, 8080);
        assert_eq!(a.record, Some(PathBuf::from("r.jsonl")));
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(parse_args(&strings(&["serve"])).is_err());
        assert!(parse_args(&strings(&["run", "--script", "x"])).is_err());
        assert!(parse_args(&strings(&["serve", "--script"])).is_err());
        assert!(parse_args(&strings(&["serve", "--script", "x", "--port", "nope"])).is_err());
        assert!(parse_args(&strings(&["serve", "--script", "x", "--wat"])).is_err());
    }
}
