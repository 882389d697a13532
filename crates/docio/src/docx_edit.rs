//! Editing a .docx in place: the paragraphs whose text changed get their new text, and nothing
//! else of the file changes. Styles, numbering, tables, images, footnotes, headers and footers,
//! section properties, comments: every zip entry but the edited parts is copied as it was
//! (compressed bytes and all), and inside an edited part every byte outside the changed text is
//! copied as it was read.
//!
//! Lines are those [`crate::extract`] gives for the same file, traced back to their paragraphs by
//! the reader's own walk (`docx::layout`). Within a changed line, the characters it shares with
//! the new text at its start and at its end stay where they are, in their runs (a bold
//! 「摘要：」, a superscript 「[1]」 before the full stop). The rest of the new text goes into the
//! `w:t` of the changed span that held most of it, so it takes that run's `w:rPr` (the body
//! text's look, not a short bold lead's); the span's other `w:t` text and tabs are removed.
//! Runs themselves are never removed, so drawings, footnote and endnote references, fields,
//! objects and bookmarks stay where they were (a reference inside a changed span ends up where
//! the span's text now ends in that run's place).
//!
//! Three passes over an edited part, each a stream within the part size limit: the reader's
//! layout, a survey of where each change's text goes, and the copy.

use crate::docx::{self, Origin, PARTS, Para, Step, Walker, corrupt};
use crate::{DocError, Limits};
use quick_xml::Reader;
use quick_xml::events::Event;
use std::collections::BTreeMap;
use std::io::{BufReader, Read, Write};

fn mismatch(detail: impl Into<String>) -> DocError {
    DocError::Mismatch {
        detail: detail.into(),
    }
}

/// The part of a line that changes: characters `start..end` of its paragraph become `text`.
#[derive(Debug)]
struct Change<'a> {
    start: usize,
    end: usize,
    text: &'a str,
    /// The piece that takes `text` (see `survey`), with how much of the span it holds and
    /// whether it is text (else a tab).
    home: Option<Home>,
    placed: bool,
}

#[derive(Debug, Clone, Copy)]
struct Home {
    piece: usize,
    overlap: usize,
    text: bool,
}

impl Change<'_> {
    fn is_insertion(&self) -> bool {
        self.start == self.end
    }

    /// Whether a piece covering characters `at..at + len` is a better home for the new text
    /// than the one found so far: for a span, the text piece holding most of it (the first on a
    /// tie), a tab only where the span holds no text; for an insertion, the first piece holding
    /// its point.
    fn consider(&mut self, piece: usize, at: usize, len: usize, text: bool) {
        let candidate = if self.is_insertion() {
            let holds = if text {
                at <= self.start && self.start <= at + len
            } else {
                at == self.start
            };
            (holds && self.home.is_none()).then_some(0)
        } else {
            let overlap = (at + len).min(self.end).saturating_sub(at.max(self.start));
            let better = match self.home {
                None => true,
                Some(home) => text && (!home.text || overlap > home.overlap),
            };
            (overlap > 0 && better).then_some(overlap)
        };
        if let Some(overlap) = candidate {
            self.home = Some(Home {
                piece,
                overlap,
                text,
            });
        }
    }

    /// Whether the new text goes in at character `p` of piece `piece` (starting at `at`).
    fn lands_at(&self, piece: usize, p: usize, at: usize) -> bool {
        !self.placed
            && self.home.is_some_and(|h| h.piece == piece)
            && p == if self.is_insertion() {
                self.start
            } else {
                self.start.max(at)
            }
    }
}

/// The original .docx with the lines `replacements` names (0-based, in the text
/// [`crate::extract`] gives for it) given new text. `expected` is that text, one line per item,
/// as the caller has it: when the file no longer reads as exactly these lines (another reader
/// version, another file), nothing is written and the error says so
/// ([`DocError::Mismatch`]). A replacement equal to its line changes nothing; one for a line
/// the reader added (the blank line and 脚注 / 尾注 before notes) is refused.
///
/// Reading stays within `limits` like [`crate::extract`]; bad input gets an error, never a
/// panic.
pub fn replace_paragraph_texts(
    original: &[u8],
    expected: &[&str],
    replacements: &[(usize, String)],
    limits: &Limits,
) -> Result<Vec<u8>, DocError> {
    if original.len() > limits.max_bytes {
        return Err(DocError::TooLarge {
            size_mb: original.len().div_ceil(1024 * 1024),
            limit_mb: limits.max_bytes / (1024 * 1024),
        });
    }
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(original)).map_err(|e| corrupt(e.to_string()))?;
    let layout = docx::layout(&mut archive, limits)?;
    if layout.lines.len() != expected.len() {
        return Err(mismatch(format!(
            "原文档读出 {} 行，改写稿有 {} 行",
            layout.lines.len(),
            expected.len()
        )));
    }
    if let Some(i) = (0..expected.len()).find(|&i| layout.lines[i] != expected[i]) {
        return Err(mismatch(format!("第 {} 行与原文档不同", i + 1)));
    }

    // The last replacement of a line wins.
    let wanted: BTreeMap<usize, &str> = replacements
        .iter()
        .map(|(i, text)| (*i, text.as_str()))
        .collect();
    let mut changes: [BTreeMap<usize, Vec<Change<'_>>>; 3] = Default::default();
    for (&line, &text) in &wanted {
        let Some(old) = expected.get(line) else {
            return Err(mismatch(format!("没有第 {} 行", line + 1)));
        };
        if *old == text {
            continue;
        }
        let Some(Origin {
            part,
            para,
            start,
            end,
        }) = layout.origins[line]
        else {
            return Err(mismatch(format!("第 {} 行不是正文段落", line + 1)));
        };
        let (head, tail) = shared_ends(old, text);
        let new_chars = text.chars().count();
        let middle: &str = {
            let from = char_to_byte(text, head);
            let to = char_to_byte(text, new_chars - tail);
            &text[from..to]
        };
        changes[part].entry(para).or_default().push(Change {
            start: start + head,
            end: end - tail,
            text: middle,
            home: None,
            placed: middle.is_empty(),
        });
    }
    if changes.iter().all(BTreeMap::is_empty) {
        return Ok(original.to_vec());
    }

    for (part, changes) in changes.iter_mut().enumerate() {
        if changes.is_empty() {
            continue;
        }
        let paras = layout.parts[part].as_deref().unwrap_or_default();
        let xml = docx::open_part(&mut archive, PARTS[part], limits.max_part_bytes)?
            .ok_or_else(|| corrupt(format!("缺少 {}", PARTS[part])))?;
        survey(BufReader::new(xml), paras, changes)?;
        if let Some(para) = changes
            .iter()
            .find(|(_, c)| c.iter().any(|c| !c.placed && c.home.is_none()))
            .map(|(para, _)| *para)
        {
            return Err(mismatch(format!(
                "{} 第 {} 段的新文字没有可放的位置",
                PARTS[part],
                para + 1
            )));
        }
    }

    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::with_capacity(
        original.len() + original.len() / 8,
    )));
    for index in 0..archive.len() {
        let name = archive
            .by_index_raw(index)
            .map_err(|e| corrupt(e.to_string()))?
            .name()
            .to_string();
        let part = PARTS.iter().position(|p| *p == name);
        match part.filter(|&p| !changes[p].is_empty()) {
            Some(part) => {
                let paras = layout.parts[part].as_deref().unwrap_or_default();
                let file = archive
                    .by_index(index)
                    .map_err(|e| corrupt(e.to_string()))?;
                let mut options = zip::write::SimpleFileOptions::default()
                    .compression_method(zip::CompressionMethod::Deflated);
                if let Some(time) = file.last_modified() {
                    options = options.last_modified_time(time);
                }
                out.start_file(name.as_str(), options)
                    .map_err(|e| corrupt(e.to_string()))?;
                let limit = limits.max_part_bytes;
                let mut sink = std::io::BufWriter::new(&mut out);
                edit_part(file.take(limit + 1), &mut sink, paras, &mut changes[part])?;
                sink.flush().map_err(|e| corrupt(e.to_string()))?;
            }
            None => {
                let file = archive
                    .by_index_raw(index)
                    .map_err(|e| corrupt(e.to_string()))?;
                out.raw_copy_file(file)
                    .map_err(|e| corrupt(e.to_string()))?;
            }
        }
    }
    if let Some((part, para)) = changes.iter().enumerate().find_map(|(part, paras)| {
        paras
            .iter()
            .find(|(_, c)| c.iter().any(|c| !c.placed))
            .map(|(para, _)| (part, *para))
    }) {
        return Err(mismatch(format!(
            "{} 第 {} 段的新文字没有可放的位置",
            PARTS[part],
            para + 1
        )));
    }
    Ok(out
        .finish()
        .map_err(|e| corrupt(e.to_string()))?
        .into_inner())
}

/// Characters the two texts share at their start and at their end (not overlapping).
fn shared_ends(a: &str, b: &str) -> (usize, usize) {
    let head = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let room = a.chars().count().min(b.chars().count()) - head;
    let tail = a
        .chars()
        .rev()
        .zip(b.chars().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    (head, tail)
}

fn char_to_byte(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(at, _)| at)
}

/// Reads through to an inner reader and keeps what it read, so that the bytes of each XML event
/// can be copied exactly as they were.
struct Recorder<R> {
    inner: R,
    seen: Vec<u8>,
}

impl<R: Read> Read for Recorder<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.seen.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

/// A `w:t` element of a changed paragraph, held until it closes: its number, bytes and text.
struct Held {
    piece: usize,
    raw: Vec<u8>,
    text: String,
}

/// A changed paragraph: its pieces and what changes in it.
struct Target<'c, 'a> {
    first: usize,
    end: usize,
    changes: &'c mut Vec<Change<'a>>,
}

/// The changed paragraph piece `n` belongs to, if any (pieces come in order; so do targets).
/// At a target's first piece the character offset starts again from 0.
fn locate(
    targets: &[Target<'_, '_>],
    cursor: &mut usize,
    n: usize,
    offset: &mut usize,
) -> Option<usize> {
    while *cursor < targets.len() && targets[*cursor].end <= n {
        *cursor += 1;
    }
    let target = targets.get(*cursor).filter(|t| t.first <= n)?;
    if n == target.first {
        *offset = 0;
    }
    Some(*cursor)
}

/// The changed paragraphs of a part, in the order of their pieces.
fn targets_of<'c, 'a>(
    paras: &[Para],
    changes: &'c mut BTreeMap<usize, Vec<Change<'a>>>,
) -> Vec<Target<'c, 'a>> {
    let mut targets: Vec<Target<'c, 'a>> = changes
        .iter_mut()
        .filter_map(|(&k, changes)| {
            let para = paras.get(k)?;
            Some(Target {
                first: para.first_piece,
                end: para.first_piece + para.pieces,
                changes,
            })
        })
        .filter(|t| t.end > t.first)
        .collect();
    targets.sort_by_key(|t| t.first);
    targets
}

/// Finds each change's home: the piece its new text goes into (`Change::consider`), so that a
/// short bold lead or a superscript mark at the start of a changed span does not lend its look
/// to the whole new text.
fn survey(
    xml: impl std::io::BufRead,
    paras: &[Para],
    changes: &mut BTreeMap<usize, Vec<Change<'_>>>,
) -> Result<(), DocError> {
    let mut targets = targets_of(paras, changes);
    let mut reader = Reader::from_reader(xml);
    reader.config_mut().trim_text(false);
    let mut buf = Vec::new();
    let mut walker = Walker::default();
    let (mut cursor, mut offset) = (0, 0);
    let mut text: Option<(usize, usize)> = None;
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| corrupt(e.to_string()))?;
        if matches!(event, Event::Eof) {
            break;
        }
        match walker.step(&event)? {
            Step::TextOpen(n) => {
                text = locate(&targets, &mut cursor, n, &mut offset).map(|_| (n, 0));
            }
            Step::Chars(chars) => {
                if let Some((_, len)) = text.as_mut() {
                    *len += chars.chars().count();
                }
            }
            Step::TextClose => {
                if let Some((n, len)) = text.take() {
                    for c in targets[cursor].changes.iter_mut() {
                        c.consider(n, offset, len, true);
                    }
                    offset += len;
                }
            }
            Step::Mark(n, mark) => {
                if let Some(t) = locate(&targets, &mut cursor, n, &mut offset)
                    && mark == '\t'
                {
                    for c in targets[t].changes.iter_mut() {
                        c.consider(n, offset, 1, false);
                    }
                }
                offset += 1;
            }
            _ => {}
        }
        buf.clear();
    }
    Ok(())
}

/// Copies one part from `xml` to `out`, giving the changed paragraphs their new text.
fn edit_part(
    xml: impl Read,
    out: &mut impl Write,
    paras: &[Para],
    changes: &mut BTreeMap<usize, Vec<Change<'_>>>,
) -> Result<(), DocError> {
    let io = |e: std::io::Error| corrupt(e.to_string());
    let mut targets = targets_of(paras, changes);
    let mut reader = Reader::from_reader(BufReader::new(Recorder {
        inner: xml,
        seen: Vec::new(),
    }));
    reader.config_mut().trim_text(false);
    let mut buf = Vec::new();
    let mut walker = Walker::default();
    // Bytes before `base` are dropped from the record; those before `done` are handled.
    let (mut base, mut done) = (0u64, 0u64);
    // The changed paragraph the pieces now belong to, and the character they start at.
    let (mut cursor, mut offset) = (0, 0);
    let mut held: Option<Held> = None;
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| corrupt(e.to_string()))?;
        let eof = matches!(event, Event::Eof);
        let seen = &reader.get_ref().get_ref().seen;
        let from = (done - base) as usize;
        let to = if eof {
            seen.len()
        } else {
            (reader.buffer_position() - base) as usize
        };
        let raw = seen.get(from..to).ok_or_else(|| corrupt("XML 位置错误"))?;
        done = base + to as u64;
        match walker.step(&event)? {
            Step::TextOpen(_) if held.is_some() => return Err(corrupt("w:t 嵌套")),
            Step::TextOpen(n) => match locate(&targets, &mut cursor, n, &mut offset) {
                Some(_) => {
                    held = Some(Held {
                        piece: n,
                        raw: raw.to_vec(),
                        text: String::new(),
                    })
                }
                None => out.write_all(raw).map_err(io)?,
            },
            Step::Chars(text) if held.is_some() => {
                if let Some(h) = held.as_mut() {
                    h.text.push_str(&text);
                    h.raw.extend_from_slice(raw);
                }
            }
            Step::TextClose if held.is_some() => {
                if let Some(mut h) = held.take() {
                    h.raw.extend_from_slice(raw);
                    let changes = &mut *targets[cursor].changes;
                    match rewrite_text(&h.text, h.piece, offset, changes) {
                        Some(text) => out.write_all(text_xml(&text).as_bytes()).map_err(io)?,
                        None => out.write_all(&h.raw).map_err(io)?,
                    }
                    offset += h.text.chars().count();
                }
            }
            Step::Mark(n, mark) => {
                let target = locate(&targets, &mut cursor, n, &mut offset);
                match target {
                    Some(t) if mark == '\t' => {
                        let (text, keep) = rewrite_tab(n, offset, &mut *targets[t].changes);
                        out.write_all(text_xml(&text).as_bytes()).map_err(io)?;
                        if keep {
                            out.write_all(raw).map_err(io)?;
                        }
                    }
                    // A line break is never inside a line.
                    _ => out.write_all(raw).map_err(io)?,
                }
                offset += 1;
            }
            _ => match held.as_mut() {
                Some(h) => h.raw.extend_from_slice(raw),
                None => out.write_all(raw).map_err(io)?,
            },
        }
        if eof {
            break;
        }
        buf.clear();
        if done - base > 1 << 20 {
            let recorder = reader.get_mut().get_mut();
            recorder.seen.drain(..(done - base) as usize);
            base = done;
        }
    }
    Ok(())
}

fn covers(changes: &[Change<'_>], p: usize) -> bool {
    changes.iter().any(|c| c.start <= p && p < c.end)
}

/// The new text of text piece `piece`, holding characters `at..` of its paragraph, or `None`
/// when no change touches it: the changed spans' characters go, and a change's new text goes
/// in where its home piece meets its span.
fn rewrite_text(text: &str, piece: usize, at: usize, changes: &mut [Change<'_>]) -> Option<String> {
    let len = text.chars().count();
    let touched = changes.iter().any(|c| {
        (!c.placed && c.home.is_some_and(|h| h.piece == piece))
            || (c.start < at + len && at < c.end)
    });
    if !touched {
        return None;
    }
    let mut out = String::new();
    let mut chars = text.chars();
    for p in at..=at + len {
        for c in changes.iter_mut().filter(|c| c.lands_at(piece, p, at)) {
            out.push_str(c.text);
            c.placed = true;
        }
        if let Some(ch) = chars.next()
            && !covers(changes, p)
        {
            out.push(ch);
        }
    }
    Some(out)
}

/// What becomes of tab piece `piece` at character `at` of a changed paragraph: the new text
/// that goes before it or, when the tab is inside a changed span, instead of it; and whether
/// it stays.
fn rewrite_tab(piece: usize, at: usize, changes: &mut [Change<'_>]) -> (String, bool) {
    let mut text = String::new();
    for c in changes.iter_mut().filter(|c| c.lands_at(piece, at, at)) {
        text.push_str(c.text);
        c.placed = true;
    }
    (text, !covers(changes, at))
}

/// Text as `w:t` elements inside a run: tabs and line breaks become `w:tab` and `w:br`.
fn text_xml(text: &str) -> String {
    const OPEN: &str = r#"<w:t xml:space="preserve">"#;
    if text.is_empty() {
        return String::new();
    }
    let mut out = String::from(OPEN);
    let mut piece = String::new();
    for c in text.chars() {
        let mark = match c {
            '\t' => "<w:tab/>",
            '\n' => "<w:br/>",
            _ => {
                piece.push(c);
                continue;
            }
        };
        out.push_str(&crate::docx_write::escape(&std::mem::take(&mut piece)));
        out.push_str("</w:t>");
        out.push_str(mark);
        out.push_str(OPEN);
    }
    out.push_str(&crate::docx_write::escape(&piece));
    out.push_str("</w:t>");
    out
}
