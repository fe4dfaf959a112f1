//! Read-only forms of programs that usually change things: help output
//! (`rm --help`, `docker run --help`) and container and cluster listings
//! (`docker ps`, `podman images`, `kubectl get pods`). Everything else these
//! programs do stays WARN (`rules`).

use super::changers::CHANGERS;
use super::command::Judge;
use super::words::Word;

/// Programs whose `SUB --help` prints help without running SUB.
const HELP_BY_SUBCOMMAND: &[&str] = &[
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "docker",
    "podman",
    "kubectl",
    "gh",
    "pip",
    "pip3",
    "uv",
    "go",
    "terraform",
    "helm",
    "brew",
    "apt",
    "apt-get",
    "dnf",
    "systemctl",
    "rustup",
];

/// `docker`/`podman` subcommands (and `OBJECT VERB` pairs) that only read.
const CONTAINER_READERS: &[&str] = &[
    "ps",
    "images",
    "version",
    "info",
    "inspect",
    "logs",
    "top",
    "port",
    "diff",
    "history",
    "stats",
    "events",
    "container ls",
    "container list",
    "container ps",
    "container inspect",
    "container logs",
    "container top",
    "container port",
    "container diff",
    "container stats",
    "image ls",
    "image list",
    "image inspect",
    "image history",
    "volume ls",
    "volume list",
    "volume inspect",
    "network ls",
    "network list",
    "network inspect",
    "context ls",
    "context list",
    "context show",
    "context inspect",
    "system df",
    "system info",
    "compose ps",
    "compose ls",
    "compose images",
    "compose logs",
    "compose top",
    "compose version",
    "compose config",
    "buildx ls",
    "pod ps",
    "pod ls",
    "pod list",
    "pod inspect",
    "machine list",
    "machine ls",
];

/// `kubectl` subcommands (and pairs) that only read.
const KUBECTL_READERS: &[&str] = &[
    "get",
    "describe",
    "logs",
    "explain",
    "version",
    "api-resources",
    "api-versions",
    "cluster-info",
    "top",
    "config view",
    "config get-contexts",
    "config current-context",
    "config get-clusters",
    "config get-users",
    "auth can-i",
    "auth whoami",
];

/// Options of docker/podman/kubectl that take a value and may come before
/// the subcommand.
const GLOBAL_WITH_ARG: &[&str] = &[
    "-H",
    "--host",
    "-c",
    "--context",
    "--config",
    "-l",
    "--log-level",
    "-n",
    "--namespace",
    "--kubeconfig",
    "--cluster",
    "--user",
    "--connection",
    "--url",
];

/// The read-only judgement of `prog args`, if it is one of these forms.
pub(crate) fn read_only_form(prog: &str, args: &[Word]) -> Option<Judge> {
    if args.iter().any(|a| a.dynamic || a.glob) {
        return None;
    }
    let t: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    if let Some(j) = help(prog, &t) {
        return Some(j);
    }
    match prog {
        "docker" | "podman" | "nerdctl" => listing(prog, &t, CONTAINER_READERS),
        "kubectl" | "oc" => listing(prog, &t, KUBECTL_READERS),
        _ => None,
    }
}

/// `prog --help` for a known program, or `prog SUB --help` for the programs
/// whose subcommands parse `--help` before doing anything.
fn help(prog: &str, t: &[&str]) -> Option<Judge> {
    let known = CHANGERS.iter().any(|(p, _)| *p == prog) || HELP_BY_SUBCOMMAND.contains(&prog);
    let asks = match t {
        ["--help"] => known,
        [sub, "--help"] => {
            HELP_BY_SUBCOMMAND.contains(&prog)
                && sub.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                && !sub.starts_with('-')
        }
        _ => false,
    };
    asks.then(|| Judge::safe(Some(prog), &format!("{prog} --help only prints help")))
}

/// Options naming a configuration file, which can name programs the tool
/// runs (kubeconfig `exec` credential plugins, docker credential helpers):
/// one in the workspace is project content.
const CONFIG_FILE: &[&str] = &["--kubeconfig", "--config"];

/// SAFE when the subcommand (after global options) is a known reader.
fn listing(prog: &str, t: &[&str], readers: &[&str]) -> Option<Judge> {
    if let Some(o) = t.iter().find(|a| {
        let name = a.split_once('=').map_or(**a, |(n, _)| n);
        CONFIG_FILE.contains(&name)
    }) {
        return Some(Judge::warn(
            Some(prog),
            &format!("{prog} {o} reads a configuration file that can name programs it runs"),
        ));
    }
    let mut i = 0;
    while let Some(a) = t.get(i) {
        if !a.starts_with('-') {
            break;
        }
        i += if GLOBAL_WITH_ARG.contains(a) { 2 } else { 1 };
    }
    let sub = t.get(i)?;
    let pair = t.get(i + 1).map(|v| format!("{sub} {v}"));
    let hit = pair
        .as_deref()
        .filter(|p| readers.contains(p))
        .or_else(|| readers.contains(sub).then_some(*sub))?;
    Some(Judge::safe(
        Some(prog),
        &format!("{prog} {hit} only lists or shows"),
    ))
}
