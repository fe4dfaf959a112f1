//! Frame times of the TUI's drawing: a 10,000-token answer streamed in ~4-character deltas
//! at 120×40 (one frame per delta, the worst case: a real terminal batches deltas per
//! frame), and a 500-message session (first frame, scrolling through all of it, RSS).
//! Plain `Instant` timing; prints p50/p99. Run: `cargo bench -p atto-tui --bench render`.

use std::time::{Duration, Instant};

use atto_protocol::{AgentMode, Event, PermissionMode, ToolCallStatus};
use atto_tui::app::{App, AppInfo};
use atto_tui::view::{ComposerView, draw};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const COMPOSER: ComposerView<'static> = ComposerView {
    text: "",
    cursor: 0,
    completions: &[],
    selected: 0,
    queued: &[],
    placeholder: "Ask atto anything",
};

fn app() -> App {
    App::new(AppInfo {
        provider: "bench".into(),
        model: "bench-model".into(),
        mode: AgentMode::Build,
        permission: PermissionMode::Interactive,
        sandbox: true,
        workspace: "/bench".into(),
        change_target: |change| change.path.clone().unwrap_or_default(),
    })
}

/// Markdown of about `tokens` tokens (~4 characters each): prose, lists and code.
fn answer(tokens: usize) -> String {
    let block = "## Step\n\nThe parser reads each *line* and keeps the `tail` when the input \
                 does not end with a newline, which matters for **files** written by editors \
                 that omit it.\n\n- first point about the change\n- second point, longer, \
                 so that it wraps at narrower widths\n\n```rust\nfn parse(s: &str) -> Vec<&str> {\n    \
                 // keep the tail\n    s.lines().collect()\n}\n```\n\n";
    let mut out = String::new();
    while out.len() < tokens * 4 {
        out.push_str(block);
    }
    out
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

fn report(name: &str, mut times: Vec<Duration>) {
    times.sort();
    println!(
        "{name}: {} frames, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        times.len(),
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3,
        times.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
}

fn streaming() -> Result<()> {
    let mut app = app();
    let mut term = Terminal::new(TestBackend::new(120, 40))?;
    app.push_user("explain the parser");
    app.on_event(&Event::TurnStarted {
        turn: 1,
        mode: AgentMode::Build,
        complexity: None,
        model: None,
        route: None,
    });
    let text = answer(10_000);
    let chars: Vec<char> = text.chars().collect();
    let mut times = Vec::with_capacity(chars.len() / 4);
    for chunk in chars.chunks(4) {
        let started = Instant::now();
        app.on_event(&Event::TextDelta {
            text: chunk.iter().collect(),
        });
        term.draw(|f| draw(f, &mut app, &COMPOSER))?;
        times.push(started.elapsed());
    }
    report("stream 10k tokens @120x40", times);
    Ok(())
}

fn rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn session() -> Result<()> {
    let before = rss_kb();
    let mut app = app();
    let mut term = Terminal::new(TestBackend::new(120, 40))?;
    let reply = answer(150);
    let started = Instant::now();
    for i in 0..250 {
        app.push_user(&format!(
            "question {i}: what does the parser do with trailing lines?"
        ));
        app.on_event(&Event::ToolCallStarted {
            call_id: format!("c{i}"),
            name: "bash".into(),
            arguments: serde_json::json!({"command": "cargo test -q"}),
            kind: Default::default(),
            title: String::new(),
        });
        app.on_event(&Event::ToolCallFinished {
            call_id: format!("c{i}"),
            name: "bash".into(),
            status: ToolCallStatus::Ok,
            duration_ms: 800,
            summary: "running 12 tests\n............\ntest result: ok".into(),
            sandboxed: Some(true),
            exit_code: Some(0),
        });
        app.on_event(&Event::TextDelta {
            text: reply.clone(),
        });
    }
    let fold = started.elapsed();
    let started = Instant::now();
    term.draw(|f| draw(f, &mut app, &COMPOSER))?;
    let first = started.elapsed();
    // Scroll to the top a page at a time: every entry gets rendered and cached.
    let mut times = Vec::new();
    let page = i32::from(app.page());
    let mut last = String::new();
    for _ in 0..100_000 {
        let started = Instant::now();
        app.scroll(page);
        term.draw(|f| draw(f, &mut app, &COMPOSER))?;
        times.push(started.elapsed());
        let top = term.backend().buffer().content()[..120]
            .iter()
            .map(|c| c.symbol())
            .collect::<String>();
        if top == last {
            break;
        }
        last = top;
    }
    println!(
        "500-message session: {} entries folded in {:.1} ms, first frame {:.3} ms",
        app.entries(),
        fold.as_secs_f64() * 1e3,
        first.as_secs_f64() * 1e3
    );
    report("scroll through 500 messages", times);
    match (before, rss_kb()) {
        (Some(b), Some(a)) => println!(
            "RSS {:.1} MB (session adds {:.1} MB)",
            a as f64 / 1024.0,
            a.saturating_sub(b) as f64 / 1024.0
        ),
        _ => println!("RSS unknown (no /proc)"),
    }
    Ok(())
}

fn main() -> Result<()> {
    streaming()?;
    session()?;
    Ok(())
}
