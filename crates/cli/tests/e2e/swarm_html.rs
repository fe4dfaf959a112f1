//! The swarm's HTML report end to end: a real 6-task swarm (a retry after a backoff,
//! dependencies two deep, a hostile task description) records when and where each attempt
//! ran, writes `report.html` next to report.md, and `atto swarm report --html` writes it
//! again; then a real headless Chromium renders the page (a screenshot of the expected size
//! that is not blank and shows the passed bars' green, and a DOM with the known labels).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use atto_testkit::Script;
use serde_json::{Value, json};

use crate::common::{Env, events, stderr};
use crate::swarm::{
    COUNTER, COUNTER_BROKEN, decomposition, finished, report_json, run, task_report, worker, write,
};

/// A task description a model wrote to attack whoever opens the report.
const HOSTILE: &str = "<script>document.title='owned'</script> Write CHANGES.md listing the \
                       changes of this release, one line for each change.";

/// Runs a swarm of six tasks: task-1 is rejected once by the compile check and retried,
/// task-4 waits on task-1, task-5 on task-2 and task-3, task-6 on task-4 and task-5.
fn six_task_swarm(env: &mut Env) -> Vec<Value> {
    env.write(
        ".atto/swarm.yaml",
        "swarm:\n  quality_gates: false\n  enable_task_enrichment: false\n  max_workers: 3\n",
    );
    env.write("README.md", "# tools\n");
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["counter.py"],
         "description": "Create counter.py with count_words(text) returning the number of whitespace-separated words and count_lines(text) returning the number of lines."},
        {"id": "task-2", "type": "document", "target_files": ["NOTES.md"],
         "description": "Write NOTES.md explaining how the tools in this repository are run, with one example command."},
        {"id": "task-3", "type": "document", "target_files": ["CHANGES.md"],
         "description": HOSTILE},
        {"id": "task-4", "type": "document", "dependencies": ["task-1"], "target_files": ["USAGE.md"],
         "description": "Write USAGE.md showing how to call count_words and count_lines from Python, one example each."},
        {"id": "task-5", "type": "document", "dependencies": ["task-2", "task-3"], "target_files": ["FAQ.md"],
         "description": "Write FAQ.md answering how to run the tools and where the changes are listed."},
        {"id": "task-6", "type": "document", "dependencies": ["task-4", "task-5"], "target_files": ["INDEX.md"],
         "description": "Write INDEX.md linking NOTES.md, CHANGES.md, USAGE.md and FAQ.md with one line about each."}
    ]))];
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write("counter.py", COUNTER_BROKEN)],
        "Wrote counter.py.",
    ));
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write("counter.py", COUNTER)],
        "Fixed the indentation.",
    ));
    for (id, file) in [
        ("task-2", "NOTES.md"),
        ("task-3", "CHANGES.md"),
        ("task-4", "USAGE.md"),
        ("task-5", "FAQ.md"),
        ("task-6", "INDEX.md"),
    ] {
        replies.extend(worker(
            id,
            "document",
            vec![write(file, &format!("# {file}\n\nWritten by {id}.\n"))],
            "Done.",
        ));
    }
    env.serve(Script::new(replies));
    let out = run(env, &["--yes", "count words, and document the tools"]);
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{ev:?}", stderr(&out));
    assert_eq!(finished(&ev)["passed"], 6, "{ev:?}");
    ev
}

fn html_path(ev: &[Value]) -> PathBuf {
    let md = finished(ev)["report"].as_str().unwrap().to_owned();
    PathBuf::from(md.replace("report.md", "report.html"))
}

#[test]
fn a_six_task_swarm_records_its_timeline_and_writes_report_html() {
    let mut env = Env::new();
    let ev = six_task_swarm(&mut env);

    // Every attempt says when it ran and in which worker slot.
    let report = report_json(&ev);
    let log = |id: &str| task_report(&report, id)["attempt_log"].clone();
    for task in report["tasks"].as_array().unwrap() {
        for a in task["attempt_log"].as_array().unwrap() {
            let (start, end) = (a["started_ms"].as_i64(), a["ended_ms"].as_i64());
            assert!(
                start.is_some() && end >= start,
                "{} attempt without times: {a}",
                task["id"]
            );
            let worker = a["worker"].as_u64().unwrap_or(0);
            assert!((1..=3).contains(&worker), "worker slot {worker}: {a}");
        }
    }
    // Each passed when its passing attempt ended.
    for task in report["tasks"].as_array().unwrap() {
        let last = task["attempt_log"].as_array().unwrap().last().unwrap();
        assert_eq!(task["passed_ms"], last["ended_ms"], "{task}");
    }
    // task-1's rejected attempt left it in a backoff, which the retry waited out.
    let t1 = log("task-1");
    let backoff = t1[0]["backoff_ms"]
        .as_i64()
        .expect("the backoff is recorded");
    assert!(backoff > 0, "{t1}");
    assert!(t1[1]["backoff_ms"].is_null(), "{t1}");
    assert!(
        t1[1]["started_ms"].as_i64().unwrap() >= t1[0]["ended_ms"].as_i64().unwrap() + backoff,
        "the retry started before its backoff ended: {t1}"
    );
    // task-4 started only after task-1 passed.
    assert!(
        log("task-4")[0]["started_ms"].as_i64().unwrap() >= t1[1]["ended_ms"].as_i64().unwrap()
    );

    // report.html is written next to report.md, self-contained, the hostile text inert.
    let path = html_path(&ev);
    let page = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("no report.html at {}: {e}", path.display()));
    for label in [
        "Timeline",
        "Task graph",
        "task-6",
        "worker 1",
        "waits on task-4, task-5",
    ] {
        assert!(page.contains(label), "{label} missing from {page}");
    }
    assert!(!page.contains("<script"), "{page}");
    assert!(page.contains("&lt;script&gt;document.title=&#39;owned&#39;&lt;/script&gt;"));
    assert!(!page.contains("src=") && !page.contains("href="), "{page}");

    // `atto swarm report --html` writes it again and prints where; `-o` writes elsewhere.
    let again = env
        .atto()
        .args(["swarm", "report", "--html"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let printed = String::from_utf8_lossy(&again.stdout).trim().to_owned();
    assert_eq!(Path::new(&printed), path, "{printed}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), page);
    let id = finished(&ev)["swarm_id"].as_str().unwrap().to_owned();
    let elsewhere = env.repo().join("out/swarm.html");
    let written = env
        .atto()
        .args(["swarm", "report", &id[..8], "--html", "-o"])
        .arg(&elsewhere)
        .output()
        .unwrap();
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    assert_eq!(
        String::from_utf8_lossy(&written.stdout).trim(),
        elsewhere.display().to_string()
    );
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), page);
    // Without --html, the Markdown report.
    let md = env.atto().args(["swarm", "report"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&md.stdout).starts_with("# Swarm: count words"),
        "{}",
        stderr(&md)
    );
}

/// Headless Chromium renders the report: a screenshot of the window's size that is not
/// blank and shows the passed attempts' green, and a DOM holding the known labels.
#[test]
fn headless_chromium_renders_the_report_of_a_six_task_swarm() {
    let chromium = chromium();
    let mut env = Env::new();
    let ev = six_task_swarm(&mut env);
    let page = html_path(&ev);
    let url = format!("file://{}", page.display());
    let scratch = tempfile::tempdir().unwrap();
    let png = scratch.path().join("report.png");
    let (width, height) = (1280u32, 1600u32);
    let shot = headless(
        &chromium,
        scratch.path(),
        &[
            &format!("--screenshot={}", png.display()),
            &format!("--window-size={width},{height}"),
            &url,
        ],
    );
    let bytes = std::fs::read(&png)
        .unwrap_or_else(|e| panic!("Chromium wrote no screenshot ({e}): {shot}"));
    let image = decode_png(&bytes);
    assert_eq!((image.width, image.height), (width, height), "{shot}");
    let white = image
        .pixels()
        .filter(|p| p.iter().all(|&c| c >= 250))
        .count();
    let total = (width * height) as usize;
    assert!(
        white < total * 99 / 100,
        "the screenshot is blank: {white} of {total} pixels white"
    );
    // The passed attempts' bars (#2e9d58) were drawn: the inline SVG rendered.
    let green = image
        .pixels()
        .filter(|p| near(p, [0x2e, 0x9d, 0x58]))
        .count();
    assert!(green > 200, "{green} pixels of the passed bars' green");

    let dom = headless(&chromium, scratch.path(), &["--dump-dom", &url]);
    for label in ["Timeline", "Task graph", "task-6", "Write INDEX.md linking"] {
        assert!(dom.contains(label), "{label} not in the DOM: {dom}");
    }
    // The hostile description stayed text: no script element, the title untouched.
    assert!(!dom.contains("<script"), "{dom}");
    assert!(!dom.contains("<title>owned</title>"), "{dom}");
}

/// The Chromium binary; the test fails, saying so, when none runs.
fn chromium() -> String {
    let mut tried = Vec::new();
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        match Command::new(name).arg("--version").output() {
            Ok(out) if out.status.success() => return name.to_owned(),
            Ok(out) => tried.push(format!("{name}: {}", String::from_utf8_lossy(&out.stderr))),
            Err(e) => tried.push(format!("{name}: {e}")),
        }
    }
    panic!(
        "headless Chromium cannot be run ({}); install it (apt-get install chromium, as \
         scripts/test.sh does)",
        tried.join("; ")
    );
}

/// Runs headless Chromium with `args`, bounded to two minutes; its stdout.
fn headless(chromium: &str, scratch: &Path, args: &[&str]) -> String {
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            // The test runs as root in CI, where Chromium's own sandbox refuses to start;
            // the page is atto's, with no script and nothing to fetch.
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.join("profile").display()
        ))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("headless Chromium cannot be run: {e}"));
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("headless Chromium did not finish within two minutes: {args:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut err = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut err);
    let out = reader.join().unwrap();
    assert!(
        status.success(),
        "headless Chromium failed ({status}): {err}"
    );
    out
}

fn near(p: &[u8], want: [u8; 3]) -> bool {
    p.iter().zip(want).all(|(&a, b)| a.abs_diff(b) <= 4)
}

/// An 8-bit RGB or RGBA PNG, decoded.
struct Image {
    width: u32,
    height: u32,
    channels: usize,
    data: Vec<u8>,
}

impl Image {
    fn pixels(&self) -> impl Iterator<Item = &[u8]> {
        self.data.chunks_exact(self.channels).map(|p| &p[..3])
    }
}

/// Enough of PNG for a screenshot: the IHDR, the IDAT stream inflated, each row unfiltered.
fn decode_png(bytes: &[u8]) -> Image {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let mut at = 8;
    let (mut width, mut height, mut channels) = (0u32, 0u32, 0usize);
    let mut idat = Vec::new();
    while at + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind = &bytes[at + 4..at + 8];
        let body = &bytes[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(body[0..4].try_into().unwrap());
                height = u32::from_be_bytes(body[4..8].try_into().unwrap());
                assert_eq!(body[8], 8, "bit depth");
                assert_eq!(body[12], 0, "interlaced");
                channels = match body[9] {
                    2 => 3,
                    6 => 4,
                    other => panic!("PNG colour type {other}"),
                };
            }
            b"IDAT" => idat.extend_from_slice(body),
            b"IEND" => break,
            _ => {}
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .unwrap();
    let stride = width as usize * channels;
    assert_eq!(raw.len(), (stride + 1) * height as usize, "IDAT size");
    let mut data = vec![0u8; stride * height as usize];
    for row in 0..height as usize {
        let filter = raw[row * (stride + 1)];
        let line = &raw[row * (stride + 1) + 1..(row + 1) * (stride + 1)];
        for i in 0..stride {
            let left = if i >= channels {
                data[row * stride + i - channels]
            } else {
                0
            };
            let up = if row > 0 {
                data[(row - 1) * stride + i]
            } else {
                0
            };
            let up_left = if row > 0 && i >= channels {
                data[(row - 1) * stride + i - channels]
            } else {
                0
            };
            let predicted = match filter {
                0 => 0,
                1 => left,
                2 => up,
                3 => ((u16::from(left) + u16::from(up)) / 2) as u8,
                4 => paeth(left, up, up_left),
                other => panic!("PNG filter {other}"),
            };
            data[row * stride + i] = line[i].wrapping_add(predicted);
        }
    }
    Image {
        width,
        height,
        channels,
        data,
    }
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}
