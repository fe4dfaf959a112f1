//! The composer through its public edits: typing and cursor moves, history, completion,

// Tests assert by unwrapping; a panic is the failure report.
#![allow(clippy::unwrap_used)]
//! large pastes and queued drafts.

use atto_tui::composer::Composer;
use atto_tui::composer::complete;
use atto_tui::composer::files::FileIndex;

fn typed(text: &str) -> Composer {
    let mut c = Composer::new(FileIndex::default());
    for ch in text.chars() {
        c.insert_char(ch);
    }
    c
}

#[test]
fn typing_and_moving_edit_at_the_cursor() {
    let mut c = typed("héllo wörld");
    c.word_left();
    assert_eq!(&c.text()[c.cursor()..], "wörld");
    c.backspace();
    assert_eq!(c.text(), "héllowörld");
    c.left();
    assert_eq!(&c.text()[c.cursor()..], "owörld");
    c.right();
    c.home();
    assert_eq!(c.cursor(), 0);
    c.right();
    c.delete();
    assert_eq!(c.text(), "hllowörld");
    c.end();
    assert_eq!(c.cursor(), c.text().len());
    c.delete_word_back();
    assert_eq!(c.text(), "");
    // Backspace at the start and delete at the end do nothing.
    c.backspace();
    c.delete();
    assert!(c.is_empty());
}

#[test]
fn word_moves_skip_spaces() {
    let mut c = typed("one  two three");
    c.home();
    c.word_right();
    assert_eq!(&c.text()[..c.cursor()], "one");
    c.word_right();
    assert_eq!(&c.text()[..c.cursor()], "one  two");
    c.word_left();
    assert_eq!(&c.text()[..c.cursor()], "one  ");
}

#[test]
fn newlines_make_lines_and_up_down_move_between_them() {
    let mut c = typed("first line");
    c.newline();
    for ch in "second".chars() {
        c.insert_char(ch);
    }
    assert_eq!(c.text(), "first line\nsecond");
    c.up();
    // Same column on the line above.
    assert_eq!(&c.text()[..c.cursor()], "first ");
    c.down();
    assert_eq!(c.cursor(), c.text().len());
    c.home();
    assert_eq!(&c.text()[c.cursor()..], "second");
}

#[test]
fn history_walks_back_and_restores_the_draft() {
    let mut c = typed("first");
    assert_eq!(c.submit().as_deref(), Some("first"));
    for ch in "second".chars() {
        c.insert_char(ch);
    }
    assert_eq!(c.submit().as_deref(), Some("second"));
    for ch in "draft".chars() {
        c.insert_char(ch);
    }
    c.up();
    assert_eq!(c.text(), "second");
    c.up();
    assert_eq!(c.text(), "first");
    c.up();
    assert_eq!(c.text(), "first", "stays at the oldest");
    c.down();
    assert_eq!(c.text(), "second");
    c.down();
    assert_eq!(c.text(), "draft", "the draft comes back");
    assert_eq!(c.last_prompt(), Some("second"));
}

#[test]
fn multi_line_history_entries_are_browsed_whole() {
    let mut c = typed("a");
    c.newline();
    c.insert_char('b');
    c.submit();
    c.insert_char('x');
    c.submit();
    c.up();
    assert_eq!(c.text(), "x");
    c.up();
    assert_eq!(c.text(), "a\nb");
    // The cursor is on the last line, but ↓ still walks history while browsing.
    c.down();
    assert_eq!(c.text(), "x");
}

#[test]
fn whitespace_is_not_sent() {
    let mut c = typed("   ");
    c.newline();
    assert_eq!(c.submit(), None);
    assert_eq!(c.last_prompt(), None);
}

#[test]
fn slash_menu_offers_commands_with_argument_hints() {
    let mut c = typed("/gr");
    assert!(c.menu_open());
    let menu = c.completions();
    assert_eq!(menu[0].0, "/grants");
    assert!(menu.iter().any(|(insert, _)| insert == "/grants revoke"));
    assert!(
        menu[1].1.starts_with('N'),
        "hint shows the argument: {menu:?}"
    );
    // Tab accepts the highlighted entry; a command without arguments closes the menu.
    let done = c.accept().unwrap();
    assert!(done.command && !done.takes_args);
    assert_eq!(c.text(), "/grants");
    assert!(!c.menu_open());
}

#[test]
fn accepting_a_command_with_arguments_leaves_room_and_keeps_the_hint() {
    let mut c = typed("/appr");
    assert!(
        !c.selected_is_typed(),
        "Enter completes a partial name first"
    );
    let done = c.accept().unwrap();
    assert!(done.takes_args);
    assert_eq!(c.text(), "/approve ");
    assert!(c.menu_open());
    assert!(
        c.completions()[0].1.contains("2,4"),
        "{:?}",
        c.completions()
    );
    assert!(c.selected_is_typed(), "Enter now sends /approve");
    for ch in "2".chars() {
        c.insert_char(ch);
    }
    assert!(c.selected_is_typed());
    // Arguments are typed: accepting again changes nothing.
    assert_eq!(c.accept(), None);
    assert_eq!(c.text(), "/approve 2");
}

#[test]
fn menu_moves_wrap_and_esc_hides_until_the_next_edit() {
    let mut c = typed("/");
    let n = c.completions().len();
    assert!(n > 3);
    c.menu_up();
    assert_eq!(c.selected(), n - 1);
    c.menu_down();
    assert_eq!(c.selected(), 0);
    c.hide_menu();
    assert!(!c.menu_open());
    c.insert_char('q');
    assert!(c.menu_open());
    assert_eq!(c.completions()[0].0, "/queue");
}

#[test]
fn unknown_commands_and_prose_open_no_menu() {
    assert!(!typed("/zzz").menu_open());
    assert!(!typed("hello /grants").menu_open());
    assert!(complete::is_complete_command("/show-plan"));
    assert!(!complete::is_complete_command("/approve"));
}

#[test]
fn at_path_completion_replaces_the_word() {
    let files = FileIndex::from_paths(vec![
        "README.md".into(),
        "src/main.rs".into(),
        "src/lib.rs".into(),
        "tests/main_test.rs".into(),
    ]);
    let mut c = Composer::new(files);
    for ch in "look at @mai".chars() {
        c.insert_char(ch);
    }
    assert!(c.menu_open());
    let menu: Vec<&str> = c.completions().iter().map(|(i, _)| i.as_str()).collect();
    assert_eq!(menu, ["@src/main.rs", "@tests/main_test.rs"]);
    let done = c.accept().unwrap();
    assert!(!done.command);
    assert_eq!(c.text(), "look at @src/main.rs ");
    assert!(!c.menu_open());
}

#[test]
fn the_file_index_walks_the_workspace_in_the_background() {
    let dir = std::env::temp_dir().join(format!("atto-tui-index-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/alpha.rs"), "").unwrap();
    std::fs::write(dir.join("notes.txt"), "").unwrap();
    let mut index = FileIndex::build(dir.clone());
    let start = std::time::Instant::now();
    while !index.ready() {
        assert!(start.elapsed().as_secs() < 10, "index never finished");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(index.matches("alp"), ["src/alpha.rs"]);
    assert_eq!(index.matches("").len(), 2);
    // After a turn the index is walked again: a file the agent wrote is offered, one it
    // deleted is not, and the old paths answer until the new walk is in.
    std::fs::write(dir.join("src/alphabet.rs"), "").unwrap();
    std::fs::remove_file(dir.join("notes.txt")).unwrap();
    index.refresh();
    while index.len() != 2 || index.matches("alphab").is_empty() {
        assert!(start.elapsed().as_secs() < 10, "index never refreshed");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(index.matches("alp"), ["src/alpha.rs", "src/alphabet.rs"]);
    assert!(index.matches("notes").is_empty());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_megabyte_paste_is_folded_and_expanded_on_send() {
    let big = "x".repeat(1 << 20);
    let mut c = typed("before ");
    c.paste(&big);
    assert_eq!(c.text(), "before [pasted 1,048,576 chars]");
    c.insert_char('!');
    let sent = c.submit().unwrap();
    assert_eq!(sent.len(), "before ".len() + (1 << 20) + 1);
    assert!(sent.starts_with("before xxx") && sent.ends_with("x!"));
    // History keeps the folded form, not a megabyte.
    assert_eq!(c.last_prompt(), Some("before [pasted 1,048,576 chars]!"));
}

#[test]
fn two_equal_large_pastes_expand_to_their_own_text() {
    let mut c = typed("");
    c.paste(&"a".repeat(2000));
    c.insert_char(' ');
    c.paste(&"b".repeat(2000));
    assert_eq!(c.text(), "[pasted 2,000 chars] [pasted 2,000 chars #2]");
    let sent = c.submit().unwrap();
    assert_eq!(sent, format!("{} {}", "a".repeat(2000), "b".repeat(2000)));
}

#[test]
fn short_pastes_go_in_as_typed_with_line_endings_normalised() {
    let mut c = typed("");
    c.paste("one\r\ntwo\rthree\x1b[31m");
    assert_eq!(c.text(), "one\ntwo\nthree[31m");
    c.clear();
    // Many short lines still fold.
    c.paste(&"l\n".repeat(40));
    assert!(c.text().starts_with("[pasted 80 chars]"), "{}", c.text());
}

#[test]
fn queued_drafts_leave_in_order_and_the_newest_can_be_dropped() {
    let mut c = typed("");
    c.queue("one".into());
    c.queue("two".into());
    c.queue("three".into());
    assert_eq!(c.queued(), ["one", "two", "three"]);
    assert_eq!(c.discard_last_queued().as_deref(), Some("three"));
    assert_eq!(c.pop_queued().as_deref(), Some("one"));
    assert_eq!(c.queued(), ["two"]);
    assert_eq!(c.pop_queued().as_deref(), Some("two"));
    assert_eq!(c.pop_queued(), None);
}

#[test]
fn set_text_puts_a_prompt_back_for_editing() {
    let mut c = typed("fix the bug");
    let sent = c.submit().unwrap();
    c.set_text(&sent);
    assert_eq!(c.text(), "fix the bug");
    assert_eq!(c.cursor(), c.text().len());
}

#[test]
fn control_characters_are_not_typed() {
    let c = typed("a\u{7}b\u{1b}c");
    assert_eq!(c.text(), "abc");
}
