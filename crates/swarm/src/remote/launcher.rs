//! The launchers a swarm file names with `launcher:`: `srun` for a Slurm cluster, `ssh`
//! for build hosts, or the user's own `worker_command`. Each builds the argument vector
//! word by word; nothing is pasted into a string something parses, except the remote
//! command of `ssh`, which the remote shell parses and which is therefore quoted word by
//! word. API keys never appear in it: Slurm passes the environment with `--export`, ssh
//! with `SendEnv` (the server's `AcceptEnv` decides what arrives).

use std::path::PathBuf;
use std::sync::Mutex;

use crate::worker::Vars;

/// Where and how workers are started (`launcher:`; the `slurm:` and `ssh:` settings say
/// how).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Launcher {
    /// On this machine, by `worker_command` (default: this `atto exec`), in the workspace
    /// or a local worktree.
    #[default]
    Local,
    /// `worker_command` started elsewhere: its base and result travel through git. The
    /// template runs `{atto} swarm worker -- {atto} exec {args}` on the other side.
    Command,
    /// A Slurm job per attempt, by `srun`.
    Slurm,
    /// A host per attempt, by `ssh`.
    Ssh,
}

impl Launcher {
    /// Whether the worker runs beyond this machine's workspace, so its work must come
    /// back through git.
    pub fn is_remote(self) -> bool {
        !matches!(self, Launcher::Local)
    }

    /// Its name in the swarm file.
    pub fn name(self) -> &'static str {
        match self {
            Launcher::Local => "local",
            Launcher::Command => "command",
            Launcher::Slurm => "slurm",
            Launcher::Ssh => "ssh",
        }
    }

    /// The launcher a swarm file names.
    pub fn parse(name: &str) -> Option<Launcher> {
        [
            Launcher::Local,
            Launcher::Command,
            Launcher::Slurm,
            Launcher::Ssh,
        ]
        .into_iter()
        .find(|l| l.name() == name)
    }
}

/// `slurm:` of the swarm file: what each job asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slurm {
    /// `--time`, as Slurm reads it (`00:20:00`).
    pub time: String,
    /// `--cpus-per-task`.
    pub cpus_per_task: u32,
    /// `--mem` (`2G`).
    pub mem: String,
    /// `--partition`, when set.
    pub partition: Option<String>,
    /// The atto executable on the nodes (default: the coordinator's own path).
    pub atto: Option<String>,
}

impl Default for Slurm {
    fn default() -> Self {
        Slurm {
            time: "00:30:00".into(),
            cpus_per_task: 2,
            mem: "2G".into(),
            partition: None,
            atto: None,
        }
    }
}

/// How a host is chosen for an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pick {
    /// Each in turn.
    #[default]
    RoundRobin,
    /// The one running the fewest attempts now (then the one that failed least).
    LeastLoaded,
}

/// `ssh:` of the swarm file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ssh {
    /// Host names or `Host` aliases of the user's ssh config.
    pub hosts: Vec<String>,
    /// How a host is chosen.
    pub pick: Pick,
    /// An ssh config file (`-F`), when not the user's.
    pub config: Option<PathBuf>,
    /// Variables sent with `SendEnv` (patterns as ssh reads them).
    pub send_env: Vec<String>,
    /// The atto executable on the hosts (default: the coordinator's own path).
    pub atto: Option<String>,
}

/// Variables ssh sends by default: the providers' keys and atto's own settings.
pub const DEFAULT_SEND_ENV: &[&str] = &[
    "ATTO_*",
    "ANTHROPIC_*",
    "OPENAI_*",
    "GEMINI_*",
    "OPENROUTER_*",
];

/// Whether `name` can be an ssh host or alias: never an option, never something a shell
/// or ssh's own `%` expansion reads.
pub fn valid_host(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'@'))
}

/// Whether `pattern` is a variable name for `SendEnv` (letters, digits, `_`, and `*`).
pub fn valid_env_pattern(pattern: &str) -> bool {
    !pattern.is_empty()
        && pattern
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'*')
}

/// One word for a POSIX shell: single-quoted, a `'` inside written as `'\''`.
pub fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The worker's side as words: `ATTO swarm worker -- ATTO exec ARGS…`.
fn remote_words(atto: &str, vars: &Vars) -> Vec<String> {
    let mut words = vec![
        atto.to_owned(),
        "swarm".into(),
        "worker".into(),
        "--".into(),
        atto.to_owned(),
        "exec".into(),
    ];
    words.extend(vars.args.iter().cloned());
    words
}

impl Slurm {
    /// `srun` and its arguments for one attempt, kept off `exclude` (the node where the
    /// task's last attempt was lost).
    pub fn command(&self, vars: &Vars, exclude: Option<&str>) -> (String, Vec<String>) {
        let mut args: Vec<String> = vec![
            "--job-name".into(),
            format!("atto-{}-{}", vars.swarm_id, vars.task_id),
            "--ntasks".into(),
            "1".into(),
            "--time".into(),
            self.time.clone(),
            "--cpus-per-task".into(),
            self.cpus_per_task.to_string(),
            "--mem".into(),
            self.mem.clone(),
            // Lines reach the coordinator as the worker writes them.
            "--unbuffered".into(),
            // Keys travel in the job's environment, never on its command line (which
            // `squeue` shows every user of the cluster).
            "--export".into(),
            "ALL".into(),
        ];
        if let Some(partition) = &self.partition {
            args.extend(["--partition".into(), partition.clone()]);
        }
        if let Some(node) = exclude.filter(|n| valid_host(n)) {
            args.extend(["--exclude".into(), node.to_owned()]);
        }
        let atto = self.atto.as_deref().unwrap_or(&vars.atto);
        args.extend(remote_words(atto, vars));
        ("srun".into(), args)
    }
}

impl Ssh {
    /// `ssh` and its arguments for one attempt on `host`.
    pub fn command(&self, vars: &Vars, host: &str) -> (String, Vec<String>) {
        let mut args: Vec<String> = vec!["-T".into()];
        if let Some(config) = &self.config {
            args.extend(["-F".into(), config.display().to_string()]);
        }
        let send: Vec<&str> = if self.send_env.is_empty() {
            DEFAULT_SEND_ENV.to_vec()
        } else {
            self.send_env.iter().map(String::as_str).collect()
        };
        args.extend([
            "-o".into(),
            "BatchMode=yes".into(),
            // A host that stops answering is a lost node: the connection drops within
            // a minute and the attempt fails like a crash.
            "-o".into(),
            "ServerAliveInterval=15".into(),
            "-o".into(),
            "ServerAliveCountMax=3".into(),
            "-o".into(),
            format!("SendEnv={}", send.join(" ")),
            "--".into(),
            host.to_owned(),
        ]);
        let atto = self.atto.as_deref().unwrap_or(&vars.atto);
        // ssh joins these with spaces for the remote shell: each is quoted so that shell
        // splits them back into exactly these words.
        args.extend(remote_words(atto, vars).iter().map(|w| shell_quote(w)));
        ("ssh".into(), args)
    }
}

/// The hosts of an `ssh` launcher and the attempts running on each, and for every task
/// the node or host where its last attempt was lost (a retry goes elsewhere).
#[derive(Debug, Default)]
pub struct Hosts {
    state: Mutex<HostState>,
}

#[derive(Debug, Default)]
struct HostState {
    next: usize,
    running: Vec<u32>,
    failed: Vec<u32>,
    lost: std::collections::HashMap<String, String>,
}

impl Hosts {
    /// Where `task_id`'s last attempt was lost, if it was.
    pub fn lost_on(&self, task_id: &str) -> Option<String> {
        self.state.lock().ok()?.lost.get(task_id).cloned()
    }

    /// Records where `task_id`'s attempt ended: `Some(node)` when it was lost there
    /// (ended without a result), `None` when it was not, or its node is unknown (a retry
    /// is then placed anywhere, so an exclusion never outlives the attempt after it).
    pub fn ended(&self, task_id: &str, lost_on: Option<&str>) {
        if let Ok(mut s) = self.state.lock() {
            match lost_on {
                Some(node) => s.lost.insert(task_id.to_owned(), node.to_owned()),
                None => s.lost.remove(task_id),
            };
        }
    }

    /// Picks a host of `ssh` for an attempt, another than `avoid` when there is another;
    /// give it back with [`Hosts::release`].
    pub fn pick(&self, ssh: &Ssh, avoid: Option<&str>) -> Option<String> {
        let n = ssh.hosts.len();
        if n == 0 {
            return None;
        }
        let mut s = self.state.lock().ok()?;
        s.running.resize(n, 0);
        s.failed.resize(n, 0);
        let avoided = |i: usize| n > 1 && avoid == ssh.hosts.get(i).map(String::as_str);
        let start = s.next % n;
        let index = match ssh.pick {
            Pick::RoundRobin => (0..n)
                .map(|i| (start + i) % n)
                .find(|&i| !avoided(i))
                .unwrap_or(start),
            Pick::LeastLoaded => (0..n)
                .map(|i| (start + i) % n)
                .filter(|&i| !avoided(i))
                .min_by_key(|&i| (s.running[i], s.failed[i]))
                .unwrap_or(start),
        };
        s.next = index + 1;
        s.running[index] += 1;
        ssh.hosts.get(index).cloned()
    }

    /// The attempt on `host` ended; `failed` when it ended without a result.
    pub fn release(&self, ssh: &Ssh, host: &str, failed: bool) {
        let Some(index) = ssh.hosts.iter().position(|h| h == host) else {
            return;
        };
        if let Ok(mut s) = self.state.lock() {
            if let Some(r) = s.running.get_mut(index) {
                *r = r.saturating_sub(1);
            }
            if failed && let Some(f) = s.failed.get_mut(index) {
                *f += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn vars(args: &[&str]) -> Vars {
        Vars {
            atto: "/opt/atto bin/atto".into(),
            args: args.iter().map(|s| (*s).to_owned()).collect(),
            workspace: "/w".into(),
            task_id: "t1".into(),
            swarm_id: "s1".into(),
        }
    }

    /// What a POSIX shell makes of the words ssh joins with spaces.
    fn shell_split(line: &str) -> Vec<String> {
        let out = std::process::Command::new("sh")
            .args([
                "-c",
                &format!("for w in {line}; do printf '%s\\0' \"$w\"; done"),
            ])
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn the_remote_shell_sees_every_word_as_it_was() {
        let hostile = [
            "--model",
            "m; touch /tmp/pwned",
            "$(id)",
            "it's",
            "`x`",
            "a b",
            "*",
        ];
        let (program, args) = Ssh {
            hosts: vec!["build-a".into()],
            ..Ssh::default()
        }
        .command(&vars(&hostile), "build-a");
        assert_eq!(program, "ssh");
        let at = args.iter().position(|a| a == "build-a").unwrap();
        assert_eq!(args[at - 1], "--", "the host is never read as an option");
        let remote = args[at + 1..].join(" ");
        let mut want = vec![
            "/opt/atto bin/atto",
            "swarm",
            "worker",
            "--",
            "/opt/atto bin/atto",
            "exec",
        ];
        want.extend(hostile);
        assert_eq!(shell_split(&remote), want);
    }

    #[test]
    fn keys_travel_by_environment_never_on_the_command_line() {
        let v = vars(&["--model", "m"]);
        let (_, slurm) = Slurm::default().command(&v, None);
        let (_, ssh) = Ssh::default().command(&v, "h");
        for args in [&slurm, &ssh] {
            assert!(
                !args
                    .iter()
                    .any(|a| a.contains("KEY=") || a.starts_with("SetEnv"))
            );
        }
        assert!(slurm.windows(2).any(|w| w == ["--export", "ALL"]));
        assert!(slurm.iter().any(|a| a == "--unbuffered"));
        assert!(
            ssh.iter()
                .any(|a| a.starts_with("SendEnv=") && a.contains("ANTHROPIC_*"))
        );
        assert_eq!(ssh.first().map(String::as_str), Some("-T"));
    }

    #[test]
    fn hosts_and_env_names_are_plain_names() {
        for ok in ["build-a", "gpu07.cluster.local", "me@host"] {
            assert!(valid_host(ok), "{ok}");
        }
        for bad in ["-oProxyCommand=x", "", "a b", "h;x", "h%h", "h/x"] {
            assert!(!valid_host(bad), "{bad}");
        }
        assert!(valid_env_pattern("ATTO_*"));
        assert!(!valid_env_pattern("A=1"));
    }

    #[test]
    fn least_loaded_spreads_and_avoids_the_host_that_failed() {
        let ssh = Ssh {
            hosts: vec!["a".into(), "b".into(), "c".into()],
            pick: Pick::LeastLoaded,
            ..Ssh::default()
        };
        let hosts = Hosts::default();
        let picked: Vec<String> = (0..3).map(|_| hosts.pick(&ssh, None).unwrap()).collect();
        assert_eq!(picked, ["a", "b", "c"]);
        hosts.release(&ssh, "b", true);
        hosts.release(&ssh, "c", false);
        // b and c run nothing now; b failed, so c.
        assert_eq!(hosts.pick(&ssh, None).unwrap(), "c");
        let rr = Ssh {
            pick: Pick::RoundRobin,
            ..ssh
        };
        let hosts = Hosts::default();
        let picked: Vec<String> = (0..4).map(|_| hosts.pick(&rr, None).unwrap()).collect();
        assert_eq!(picked, ["a", "b", "c", "a"]);
    }

    /// A task whose attempt was lost on a node or host is retried elsewhere, and only
    /// its next attempt is kept off it.
    #[test]
    fn a_retry_is_placed_off_the_node_where_the_attempt_was_lost() {
        let hosts = Hosts::default();
        let v = vars(&["--model", "m"]);
        hosts.ended("t1", Some("n1"));
        assert_eq!(hosts.lost_on("t1").as_deref(), Some("n1"));
        assert_eq!(hosts.lost_on("t2"), None);
        let (_, args) = Slurm::default().command(&v, hosts.lost_on("t1").as_deref());
        assert!(
            args.windows(2).any(|w| w == ["--exclude", "n1"]),
            "{args:?}"
        );
        let (_, args) = Slurm::default().command(&v, Some("-w n2"));
        assert!(!args.iter().any(|a| a == "--exclude"), "{args:?}");
        hosts.ended("t1", None);
        assert_eq!(hosts.lost_on("t1"), None);

        for pick in [Pick::RoundRobin, Pick::LeastLoaded] {
            let ssh = Ssh {
                hosts: vec!["a".into(), "b".into()],
                pick,
                ..Ssh::default()
            };
            let hosts = Hosts::default();
            // The turn (round robin) or the load (least loaded) would pick a.
            assert_eq!(hosts.pick(&ssh, Some("a")).unwrap(), "b", "{pick:?}");
            let one = Ssh {
                hosts: vec!["a".into()],
                ..ssh
            };
            assert_eq!(hosts.pick(&one, Some("a")).unwrap(), "a", "{pick:?}");
        }
    }
}
