//! The swarm file's `launcher`, `slurm` and `ssh` settings, and the combinations refused:
//! a remote launcher needs worktree isolation (its work comes back as a git branch, merged
//! like a local worktree's; a shared workspace is not there to write in), `ssh` needs
//! hosts, `command` needs a `worker_command`.

use super::{Field, Node, SwarmConfig};
use crate::config::Isolation;
use crate::remote::launcher::{Launcher, Pick, valid_env_pattern, valid_host};

/// Reads `launcher`, `slurm` or `ssh` into `c`.
pub(super) fn read(
    c: &mut SwarmConfig,
    f: &Field<'_>,
    warn: &mut dyn FnMut(u64, &str),
) -> Result<(), String> {
    match f.key.as_str() {
        "launcher" => {
            let name = f.string()?;
            c.launcher = Launcher::parse(&name).ok_or_else(|| {
                f.bad(&format!(
                    "must be local, slurm, ssh or command, not {name:?}"
                ))
            })?;
        }
        "slurm" => {
            for (key, value) in entries(f, "time, cpus_per_task, mem, partition, atto")? {
                let mut field = Field::new(key, value);
                field.key = format!("slurm.{}", key.value);
                if field.node.is_null() {
                    continue;
                }
                let s = &mut c.slurm;
                match key.value.as_str() {
                    "time" => s.time = plain(&field)?,
                    "cpus_per_task" => s.cpus_per_task = field.int(1, 1024)? as u32,
                    "mem" => s.mem = plain(&field)?,
                    "partition" => s.partition = Some(plain(&field)?),
                    "atto" => s.atto = Some(field.string()?),
                    _ => warn(field.line, &field.key),
                }
            }
        }
        _ => {
            for (key, value) in entries(f, "hosts, pick, config, send_env, atto")? {
                let mut field = Field::new(key, value);
                field.key = format!("ssh.{}", key.value);
                if field.node.is_null() {
                    continue;
                }
                let s = &mut c.ssh;
                match key.value.as_str() {
                    "hosts" => {
                        s.hosts = field.strings()?;
                        if let Some(bad) = s.hosts.iter().find(|h| !valid_host(h)) {
                            return Err(field.bad(&format!(
                                "{bad:?} is not a host name (letters, digits, . - _ @; not \
                                 starting with -)"
                            )));
                        }
                    }
                    "pick" => {
                        s.pick = match field.string()?.as_str() {
                            "round_robin" => Pick::RoundRobin,
                            "least_loaded" => Pick::LeastLoaded,
                            other => {
                                return Err(field.bad(&format!(
                                    "must be round_robin or least_loaded, not {other:?}"
                                )));
                            }
                        }
                    }
                    "config" => s.config = Some(field.string()?.into()),
                    "send_env" => {
                        s.send_env = field.strings()?;
                        if let Some(bad) = s.send_env.iter().find(|p| !valid_env_pattern(p)) {
                            return Err(field.bad(&format!(
                                "{bad:?} is not a variable name (only names travel; values \
                                 come from the environment)"
                            )));
                        }
                    }
                    "atto" => s.atto = Some(field.string()?),
                    _ => warn(field.line, &field.key),
                }
            }
        }
    }
    Ok(())
}

/// A mapping's entries: each key and value with where they were written.
type Entries = Vec<(serde_saphyr::Spanned<String>, serde_saphyr::Spanned<Node>)>;

fn entries<'a>(f: &Field<'a>, keys: &str) -> Result<&'a Entries, String> {
    match f.node {
        Node::Map(entries) => Ok(entries),
        _ => Err(f.expected(&format!("a mapping of {keys}"))),
    }
}

/// A value passed to `srun` as one argument: no option, no space.
fn plain(f: &Field<'_>) -> Result<String, String> {
    let s = f.string()?;
    if s.is_empty() || s.starts_with('-') || s.chars().any(char::is_whitespace) {
        return Err(f.bad(&format!("{s:?} is not a plain value")));
    }
    Ok(s)
}

/// The combinations that cannot work, refused when the file is read.
pub(super) fn check(c: &SwarmConfig) -> Result<(), String> {
    let launcher = c.launcher;
    if launcher.is_remote() && c.isolation == Isolation::Shared {
        return Err(format!(
            "launcher: {} runs workers on other machines, whose work comes back as a git \
             branch merged like a worktree's; isolation: shared is refused with it. Set \
             isolation: worktree",
            launcher.name()
        ));
    }
    if launcher == Launcher::Ssh && c.ssh.hosts.is_empty() {
        return Err("launcher: ssh needs ssh: {hosts: [...]}, the hosts workers run on".into());
    }
    if launcher == Launcher::Command && c.worker_command.words.is_empty() {
        return Err(
            "launcher: command needs a worker_command that starts `{atto} swarm worker -- \
             {atto} exec {args}` where the worker runs"
                .into(),
        );
    }
    if matches!(launcher, Launcher::Slurm | Launcher::Ssh) && !c.worker_command.words.is_empty() {
        return Err(format!(
            "launcher: {} builds the worker's command itself; remove worker_command, or use \
             launcher: command to run it",
            launcher.name()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::Path;

    use super::*;
    use crate::remote::launcher::Slurm;

    fn parse(text: &str) -> Result<super::super::Loaded, String> {
        SwarmConfig::parse(text, Path::new(".atto/swarm.yaml")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_remote_launcher_with_a_shared_workspace_is_refused() {
        for launcher in [
            "slurm",
            "ssh\nssh: {hosts: [a]}",
            "command\nworker_command: [x, \"{args}\"]",
        ] {
            // Shared said, or left as the default.
            for text in [
                format!("isolation: shared\nlauncher: {launcher}\n"),
                format!("launcher: {launcher}\n"),
            ] {
                let err = parse(&text).unwrap_err();
                assert!(
                    err.contains("isolation: shared is refused"),
                    "{text}: {err}"
                );
            }
            assert!(parse(&format!("isolation: worktree\nlauncher: {launcher}\n")).is_ok());
        }
    }

    #[test]
    fn slurm_and_ssh_settings_are_read_and_need_trust() {
        let loaded = parse(
            "isolation: worktree\nlauncher: slurm\nslurm:\n  time: \"00:05:00\"\n  \
             cpus_per_task: 1\n  mem: 500M\n  partition: debug\n",
        )
        .unwrap();
        assert_eq!(loaded.config.launcher, Launcher::Slurm);
        assert_eq!(
            loaded.config.slurm,
            Slurm {
                time: "00:05:00".into(),
                cpus_per_task: 1,
                mem: "500M".into(),
                partition: Some("debug".into()),
                atto: None,
            }
        );
        assert!(loaded.needs_trust.iter().any(|k| k.ends_with("launcher")));
        assert!(loaded.needs_trust.iter().any(|k| k.ends_with("slurm")));

        let loaded = parse(
            "isolation: worktree\nlauncher: ssh\nssh:\n  hosts: [build-a, build-b]\n  \
             pick: least_loaded\n  send_env: [MY_KEY]\n",
        )
        .unwrap();
        assert_eq!(loaded.config.ssh.hosts, ["build-a", "build-b"]);
        assert_eq!(loaded.config.ssh.pick, Pick::LeastLoaded);
        assert_eq!(loaded.config.ssh.send_env, ["MY_KEY"]);
    }

    #[test]
    fn values_that_would_be_read_as_options_are_refused() {
        for (text, what) in [
            ("ssh: {hosts: [\"-oProxyCommand=sh\"]}", "not a host name"),
            ("ssh: {send_env: [\"KEY=secret\"]}", "not a variable name"),
            ("slurm: {time: \"--wrap=x\"}", "not a plain value"),
            ("launcher: ssh", "needs ssh"),
            ("launcher: k8s", "must be local, slurm, ssh or command"),
        ] {
            let err = parse(&format!("isolation: worktree\n{text}\n")).unwrap_err();
            assert!(err.contains(what), "{text}: {err}");
        }
    }
}
