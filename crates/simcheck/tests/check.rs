//! The engine end to end: an embedded library on disk, checks against it, and the report's figures.

use proptest::prelude::*;
use simcheck::{
    CheckOptions, EmbeddedLibrary, FingerprintParams, Library, NewDoc, ReportFilter, Scope,
    ScopeFilter, SpanClass, check,
};

/// The project's own deterministic sample text (no real prose), with a full stop every 97 characters.
fn text(seed: u64, n: usize) -> String {
    simcheck::conformance::sample_text(seed, n)
        .chars()
        .enumerate()
        .flat_map(|(i, c)| {
            if i % 97 == 96 {
                vec![c, '。']
            } else {
                vec![c]
            }
        })
        .collect()
}

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

fn slice(s: &str, start: usize, end: usize) -> String {
    chars(s)[start..end].iter().collect()
}

/// A passage as a span reports it: from the first to the last letter or digit.
fn content(s: String) -> String {
    s.trim_matches(|c: char| !c.is_alphanumeric()).to_string()
}

async fn library_with(docs: Vec<NewDoc>) -> (tempfile::TempDir, EmbeddedLibrary, Vec<u64>) {
    let dir = tempfile::tempdir().unwrap();
    let lib = EmbeddedLibrary::open(dir.path().join("lib"), FingerprintParams::default()).unwrap();
    let ids = lib.add(docs).await.unwrap();
    (dir, lib, ids)
}

#[tokio::test]
async fn finds_exactly_the_copied_spans_and_the_figures_agree() {
    let a = text(1, 600);
    let b = text(2, 600);
    let (_dir, lib, ids) = library_with(vec![
        NewDoc::public("来源甲", a.clone()),
        NewDoc::public("来源乙", b.clone()),
    ])
    .await;
    let copied_a = content(slice(&a, 100, 160));
    let copied_b = content(slice(&b, 300, 340));
    let own = format!(
        "{}\n{}{}\n{}{}\n",
        text(10, 200),
        text(11, 80),
        copied_a,
        copied_b,
        text(12, 120)
    );
    let report = check(&own, &lib, &CheckOptions::default()).await.unwrap();

    assert_eq!(report.spans.len(), 2, "{:#?}", report.spans);
    let s0 = &report.spans[0];
    assert_eq!(s0.source_id, ids[0]);
    assert_eq!(slice(&own, s0.start, s0.end), copied_a);
    assert_eq!(slice(&a, s0.source_start, s0.source_end), copied_a);
    assert_eq!(s0.class, SpanClass::Copy);
    let s1 = &report.spans[1];
    assert_eq!(s1.source_id, ids[1]);
    assert_eq!(slice(&own, s1.start, s1.end), copied_b);

    let total = simcheck::normalize::count_chars(&own);
    assert_eq!(report.total_chars, total);
    let copied =
        simcheck::normalize::count_chars(&copied_a) + simcheck::normalize::count_chars(&copied_b);
    assert_eq!(report.copied_chars, copied);
    assert!((report.ratio_total - copied as f64 * 100.0 / total as f64).abs() < 1e-9);
    assert_eq!(report.ratio_excluding_quotes, report.ratio_total);
    assert_eq!(report.ratio_excluding_own, report.ratio_total);
    assert_eq!(report.sources.len(), 2);
    assert_eq!(report.sources[0].id, ids[0], "the larger share ranks first");
    assert_eq!(report.max_single_source, Some(ids[0]));
    assert_eq!(report.ratio_max_single_source, report.sources[0].ratio);
    let per_source: usize = report.sources.iter().map(|s| s.copied_chars).sum();
    assert_eq!(
        per_source, report.copied_chars,
        "disjoint sources add up to the total"
    );
    let per_paragraph: usize = report.paragraphs.iter().map(|p| p.copied_chars).sum();
    assert_eq!(per_paragraph, report.copied_chars);
    let paragraph_total: usize = report.paragraphs.iter().map(|p| p.total_chars).sum();
    assert_eq!(paragraph_total, report.total_chars);
    let per_chapter: usize = report.chapters.iter().map(|c| c.copied_chars).sum();
    assert_eq!(per_chapter, report.copied_chars);
}

#[tokio::test]
async fn punctuation_case_width_and_script_do_not_hide_a_copy() {
    let src = "基于深度学习的文本相似度检测方法在论文查重中具有重要意义并且得到了广泛应用";
    let (_d, lib, _) = library_with(vec![NewDoc::public("繁简", src)]).await;
    let disguised =
        "开头。基於深度學習的文本，相似度檢測方法在論文查重中具有重要意義並且得到了廣泛應用。结尾";
    let report = check(disguised, &lib, &CheckOptions::default())
        .await
        .unwrap();
    assert_eq!(report.spans.len(), 1);
    let s = &report.spans[0];
    assert_eq!(
        slice(disguised, s.start, s.end),
        "基於深度學習的文本，相似度檢測方法在論文查重中具有重要意義並且得到了廣泛應用"
    );
}

#[tokio::test]
async fn the_thirteen_character_rule() {
    let src = text(5, 400);
    let (_d, lib, _) = library_with(vec![NewDoc::public("s", src.clone())]).await;
    let run12 = format!("{}{}{}", text(20, 50), slice(&src, 10, 22), text(21, 50));
    let run13 = format!("{}{}{}", text(20, 50), slice(&src, 10, 23), text(21, 50));
    let plain = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).count();
    assert_eq!(plain(&slice(&src, 10, 22)), 12);
    assert!(
        check(&run12, &lib, &CheckOptions::default())
            .await
            .unwrap()
            .spans
            .is_empty()
    );
    assert_eq!(
        check(&run13, &lib, &CheckOptions::default())
            .await
            .unwrap()
            .spans
            .len(),
        1
    );
    let strict = CheckOptions {
        min_span: 20,
        ..CheckOptions::default()
    };
    assert!(check(&run13, &lib, &strict).await.unwrap().spans.is_empty());
}

#[tokio::test]
async fn light_edits_merge_into_one_match() {
    let src = text(7, 300);
    let (_d, lib, _) = library_with(vec![NewDoc::public("s", src.clone())]).await;
    let mut edited = chars(&src)[50..150].to_vec();
    edited[20] = '甲';
    edited.insert(45, '乙');
    edited.remove(70);
    let edited: String = edited.into_iter().collect();
    let paper = format!("{}\n{}\n{}", text(30, 60), edited, text(31, 60));
    let report = check(&paper, &lib, &CheckOptions::default()).await.unwrap();
    assert_eq!(report.spans.len(), 1, "{:#?}", report.spans);
    assert_eq!(report.spans[0].class, SpanClass::LightEdit);
    assert!(report.spans[0].chars >= 95, "{}", report.spans[0].chars);
}

/// A middle rewritten too heavily for the alignment to bridge (nine characters) still leaves
/// one passage: its two matches with the same source are joined, the middle counted with them.
#[tokio::test]
async fn a_heavily_edited_middle_joins_the_two_halves() {
    let src = text(8, 300);
    let (_d, lib, ids) = library_with(vec![NewDoc::public("s", src.clone())]).await;
    let mut edited = chars(&src)[50..150].to_vec();
    edited.splice(45..54, "甲乙丙丁戊己庚辛壬".chars());
    let edited: String = edited.into_iter().collect();
    let paper = format!("{}\n{}\n{}", text(32, 60), edited, text(33, 60));
    let report = check(&paper, &lib, &CheckOptions::default()).await.unwrap();
    assert_eq!(report.spans.len(), 1, "{:#?}", report.spans);
    let span = &report.spans[0];
    assert_eq!(span.class, SpanClass::LightEdit);
    assert_eq!(span.source_id, ids[0]);
    assert!(span.chars >= 95, "{}", span.chars);
    assert_eq!(
        span.source_text.chars().count(),
        span.source_end - span.source_start
    );
    assert!(span.source_text.contains(&slice(&src, 50, 90)));
    assert!(span.source_text.contains(&slice(&src, 110, 145)));
}

/// A light edit of a template two documents fill in differently is a common phrase, not a
/// copy of either.
#[tokio::test]
async fn a_template_filled_in_differently_is_a_common_phrase() {
    // The template: the same 30 characters around figures that differ in each document.
    let head = text(50, 15);
    let tail = text(51, 15);
    let (_d, lib, _) = library_with(vec![
        NewDoc::public(
            "甲文",
            format!("{}{head}乙{tail}{}", text(52, 80), text(53, 80)),
        ),
        NewDoc::public(
            "乙文",
            format!("{}{head}丙{tail}{}", text(54, 80), text(55, 80)),
        ),
    ])
    .await;
    let paper = format!("{}\n{head}丁{tail}\n{}", text(56, 60), text(57, 60));
    let report = check(&paper, &lib, &CheckOptions::default()).await.unwrap();
    assert!(!report.spans.is_empty());
    assert!(
        report.spans.iter().all(|s| s.class == SpanClass::Common),
        "{:#?}",
        report.spans
    );
    assert_eq!(report.copied_chars, 0);
}

#[tokio::test]
async fn a_long_passage_published_twice_and_edited_is_still_counted() {
    // The same abstract in two journals: a light edit of all of it is copying, not a template.
    let passage = text(60, 120);
    let (_d, lib, _) = library_with(vec![
        NewDoc::public("期刊甲", format!("{}{passage}", text(61, 80))),
        NewDoc::public("期刊乙", format!("{passage}{}", text(62, 80))),
    ])
    .await;
    let edited: String = passage
        .chars()
        .enumerate()
        .map(|(i, c)| if i % 12 == 6 { '某' } else { c })
        .collect();
    let paper = format!("{}\n{edited}\n{}", text(63, 60), text(64, 60));
    let report = check(&paper, &lib, &CheckOptions::default()).await.unwrap();
    assert!(
        report.spans.iter().all(|s| s.class != SpanClass::Common),
        "{:#?}",
        report.spans
    );
    assert!(report.copied_chars >= 100, "{}", report.copied_chars);
}

#[tokio::test]
async fn quotations_citations_and_own_work_have_their_own_figures() {
    let public = text(40, 400);
    let own_pub = text(41, 400);
    let (_d, lib, ids) = library_with(vec![
        NewDoc::public("公开", public.clone()),
        NewDoc {
            owner: Some(7),
            scope: Scope::OwnPublished,
            ..NewDoc::public("本人已发表", own_pub.clone())
        },
    ])
    .await;
    let quoted = slice(&public, 0, 30);
    let cited = slice(&public, 200, 230);
    let mine = slice(&own_pub, 100, 140);
    let paper = format!(
        "{}“{}”{}。\n{}{}[3]。\n{}{}。\n",
        text(50, 40),
        quoted,
        text(51, 30),
        text(52, 30),
        cited,
        text(53, 30),
        mine
    );
    let as_owner = CheckOptions {
        scope: ScopeFilter { owner: Some(7) },
        ..CheckOptions::default()
    };
    let report = check(&paper, &lib, &as_owner).await.unwrap();
    let classes: Vec<SpanClass> = report.spans.iter().map(|s| s.class).collect();
    assert_eq!(
        classes,
        vec![SpanClass::Quoted, SpanClass::Quoted, SpanClass::Copy],
        "{:#?}",
        report.spans
    );
    let total = report.total_chars as f64;
    let mine_chars = simcheck::normalize::count_chars(&mine);
    assert!((report.ratio_excluding_quotes - mine_chars as f64 * 100.0 / total).abs() < 1e-9);
    assert!(report.ratio_excluding_own < report.ratio_total);
    assert!(report.ratio_excluding_quotes < report.ratio_total);
    assert!(report.sources.iter().any(|s| s.id == ids[1]));

    // Another user does not see the owner's work at all.
    let stranger = CheckOptions {
        scope: ScopeFilter { owner: Some(8) },
        ..CheckOptions::default()
    };
    let report = check(&paper, &lib, &stranger).await.unwrap();
    assert!(report.sources.iter().all(|s| s.id != ids[1]));
}

#[tokio::test]
async fn report_options_refigure_from_the_stored_spans() {
    let public = text(60, 400);
    let own_pub = text(61, 400);
    let (_d, lib, ids) = library_with(vec![
        NewDoc::public("公开", public.clone()),
        NewDoc {
            owner: Some(7),
            scope: Scope::OwnPublished,
            ..NewDoc::public("本人已发表", own_pub.clone())
        },
    ])
    .await;
    let quoted = slice(&public, 0, 30);
    let copied = slice(&public, 200, 260);
    let short = slice(&public, 300, 316);
    let mine = slice(&own_pub, 100, 140);
    let paper = format!(
        "{}“{}”{}。\n{}{}。\n{}{}。\n{}{}。\n",
        text(70, 40),
        quoted,
        text(71, 30),
        text(72, 30),
        copied,
        text(73, 30),
        short,
        text(74, 30),
        mine
    );
    let options = CheckOptions {
        scope: ScopeFilter { owner: Some(7) },
        ..CheckOptions::default()
    };
    let report = check(&paper, &lib, &options).await.unwrap();
    assert_eq!(report.spans.len(), 4, "{:#?}", report.spans);
    // Every span carries its source passage for the side-by-side view.
    for s in &report.spans {
        let src = if s.source_id == ids[0] {
            &public
        } else {
            &own_pub
        };
        assert_eq!(s.source_text, slice(src, s.source_start, s.source_end));
    }
    // Keeping everything changes nothing; each option takes out exactly its spans.
    let same = simcheck::refigure(&paper, &report, &options, &ReportFilter::default());
    assert_eq!(same, report);
    let no_quotes = simcheck::refigure(
        &paper,
        &report,
        &options,
        &ReportFilter {
            exclude_quoted: true,
            ..ReportFilter::default()
        },
    );
    assert_eq!(no_quotes.ratio_total, report.ratio_excluding_quotes);
    let no_own = simcheck::refigure(
        &paper,
        &report,
        &options,
        &ReportFilter {
            exclude_own: true,
            ..ReportFilter::default()
        },
    );
    assert_eq!(no_own.ratio_total, report.ratio_excluding_own);
    assert!(no_own.sources.iter().all(|s| s.id != ids[1]));
    let long_only = simcheck::refigure(
        &paper,
        &report,
        &options,
        &ReportFilter {
            min_chars: 20,
            ..ReportFilter::default()
        },
    );
    let short_chars = simcheck::normalize::count_chars(&short);
    assert_eq!(long_only.copied_chars, report.copied_chars - short_chars);
    assert_eq!(long_only.total_chars, report.total_chars);
    // The stored form reads back into the same report.
    let stored = serde_json::to_string(&report).unwrap();
    let back: simcheck::Report = serde_json::from_str(&stored).unwrap();
    assert_eq!(back, report);
}

#[tokio::test]
async fn a_passage_in_two_sources_counts_once() {
    let shared = text(60, 80);
    let a = format!("{}{}", text(61, 100), shared);
    let b = format!("{}{}", shared, text(62, 100));
    let (_d, lib, _) = library_with(vec![NewDoc::public("a", a), NewDoc::public("b", b)]).await;
    let paper = format!("{}\n{}\n", text(63, 100), shared);
    let report = check(&paper, &lib, &CheckOptions::default()).await.unwrap();
    assert_eq!(report.sources.len(), 2);
    let shared_chars = simcheck::normalize::count_chars(&shared);
    assert_eq!(report.copied_chars, shared_chars);
    assert_eq!(report.sources[0].copied_chars, shared_chars);
    assert_eq!(report.sources[1].copied_chars, shared_chars);
}

#[tokio::test]
async fn reference_list_and_contents_are_left_out() {
    let src = text(70, 300);
    let (_d, lib, _) = library_with(vec![NewDoc::public("s", src.clone())]).await;
    let paper = format!(
        "第一章 绪论\n{}\n参考文献\n[1] {}\n",
        text(71, 200),
        slice(&src, 0, 60)
    );
    let report = check(&paper, &lib, &CheckOptions::default()).await.unwrap();
    assert!(report.spans.is_empty());
    assert!(report.excluded_chars > 60);
    let include = CheckOptions {
        exclude_bibliography: false,
        ..CheckOptions::default()
    };
    assert_eq!(check(&paper, &lib, &include).await.unwrap().spans.len(), 1);
}

#[tokio::test]
async fn library_lists_removes_and_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lib");
    let src = text(80, 300);
    {
        let lib = EmbeddedLibrary::open(&path, FingerprintParams::default()).unwrap();
        let ids = lib
            .add(vec![
                NewDoc::public("一", src.clone()),
                NewDoc::public("二", text(81, 300)),
            ])
            .await
            .unwrap();
        assert_eq!(ids, vec![1, 2]);
        assert_eq!(
            lib.meta(1).await.unwrap().unwrap().chars as usize,
            simcheck::normalize::count_chars(&src)
        );
        assert_eq!(lib.text(1).await.unwrap().unwrap(), src);
    }
    let lib = EmbeddedLibrary::open(&path, FingerprintParams { k: 9, w: 3 }).unwrap();
    assert_eq!(
        lib.params(),
        FingerprintParams::default(),
        "an existing library keeps its parameters"
    );
    assert_eq!(
        lib.list()
            .await
            .unwrap()
            .iter()
            .map(|m| m.title.as_str())
            .collect::<Vec<_>>(),
        vec!["一", "二"]
    );
    let paper = format!("{}{}", text(82, 50), slice(&src, 0, 50));
    assert_eq!(
        check(&paper, &lib, &CheckOptions::default())
            .await
            .unwrap()
            .spans
            .len(),
        1
    );

    // A second handle (another process, say) sees a removal made through the first.
    let other = EmbeddedLibrary::open(&path, FingerprintParams::default()).unwrap();
    assert!(other.remove(1).await.unwrap());
    assert!(!other.remove(1).await.unwrap());
    assert!(lib.meta(1).await.unwrap().is_none());
    assert!(
        check(&paper, &lib, &CheckOptions::default())
            .await
            .unwrap()
            .spans
            .is_empty()
    );
}

#[tokio::test]
async fn many_small_adds_are_merged_and_stay_searchable() {
    let dir = tempfile::tempdir().unwrap();
    let lib = EmbeddedLibrary::open(dir.path(), FingerprintParams::default()).unwrap();
    let mut texts = Vec::new();
    for i in 0..12 {
        let t = text(100 + i, 200);
        lib.add(vec![NewDoc::public(format!("第{i}篇"), t.clone())])
            .await
            .unwrap();
        texts.push(t);
    }
    lib.remove(3).await.unwrap();
    assert!(lib.segment_count() <= 8, "{}", lib.segment_count());
    assert_eq!(lib.list().await.unwrap().len(), 11);
    for (i, t) in texts.iter().enumerate() {
        let paper = format!("{}{}", text(900, 40), slice(t, 20, 60));
        let found = check(&paper, &lib, &CheckOptions::default())
            .await
            .unwrap()
            .spans
            .len();
        assert_eq!(found, usize::from(i != 2), "document {}", i + 1);
    }
    let files = std::fs::read_dir(dir.path()).unwrap().count();
    assert!(
        files <= 8 * 3 + 3,
        "old segment files are cleaned up ({files})"
    );
}

#[tokio::test]
async fn empty_library_and_empty_text() {
    let dir = tempfile::tempdir().unwrap();
    let lib = EmbeddedLibrary::open(dir.path(), FingerprintParams::default()).unwrap();
    let r = check("", &lib, &CheckOptions::default()).await.unwrap();
    assert_eq!((r.total_chars, r.copied_chars, r.ratio_total), (0, 0, 0.0));
    let r = check(&text(1, 100), &lib, &CheckOptions::default())
        .await
        .unwrap();
    assert!(r.spans.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any copied run of at least 13 characters is reported, with exact bounds on both sides.
    #[test]
    fn every_copied_run_of_thirteen_or_more_is_found(seed in 0u64..10_000, len in 13usize..80, at in 0usize..200) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let src = text(seed, 300);
            let (_d, lib, _) = library_with(vec![NewDoc::public("s", src.clone())]).await;
            let start = at.min(300 - len);
            // Take `len` alphanumeric characters of the source.
            let cs = chars(&src);
            let mut end = start;
            let mut n = 0;
            while n < len { if cs[end].is_alphanumeric() { n += 1; } end += 1; }
            let copied: String = cs[start..end].iter().collect();
            let paper = format!("{}\n{}\n{}", text(seed + 50_000, 90), copied, text(seed + 60_000, 90));
            let report = check(&paper, &lib, &CheckOptions::default()).await.unwrap();
            let hit = report.spans.iter().find(|s| slice(&paper, s.start, s.end).contains(copied.trim_matches(|c: char| !c.is_alphanumeric())));
            prop_assert!(hit.is_some(), "copied {:?} not found: {:?}", copied, report.spans);
            Ok(())
        })?;
    }
}

mod conformance {
    use simcheck::conformance as c;
    use simcheck::{EmbeddedLibrary, FingerprintParams};

    fn open() -> (tempfile::TempDir, EmbeddedLibrary) {
        let dir = tempfile::tempdir().unwrap();
        let lib = EmbeddedLibrary::open(dir.path(), FingerprintParams::default()).unwrap();
        (dir, lib)
    }

    #[tokio::test]
    async fn add_list_and_find() {
        let (_d, lib) = open();
        c::add_list_and_find(&lib).await;
    }

    #[tokio::test]
    async fn scopes_are_respected() {
        let (_d, lib) = open();
        c::scopes_are_respected(&lib).await;
    }

    #[tokio::test]
    async fn remove_hides_a_document() {
        let (_d, lib) = open();
        c::remove_hides_a_document(&lib).await;
    }

    #[tokio::test]
    async fn very_common_kgrams_are_skipped() {
        let (_d, lib) = open();
        c::very_common_kgrams_are_skipped(&lib).await;
    }

    #[tokio::test]
    async fn common_phrases_follow_document_frequency() {
        let (_d, lib) = open();
        c::common_phrases_follow_document_frequency(&lib).await;
    }

    #[tokio::test]
    async fn sentence_index_follows_import_and_removal() {
        let Some(encoder) = super::encoder() else {
            return;
        };
        let encoder: std::sync::Arc<dyn simcheck::SentenceEmbedder> = std::sync::Arc::new(encoder);
        let (d, lib) = open();
        let semantic =
            simcheck::SemanticLibrary::open(lib, d.path().join("sentences"), Some(encoder.clone()))
                .unwrap();
        c::sentence_index_follows_import_and_removal(&semantic, encoder.as_ref()).await;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Arbitrary text (quotes, brackets, newlines, any script) never makes the engine panic, and
    /// the figures always hold together.
    #[test]
    fn arbitrary_text_gives_consistent_figures(
        noise in proptest::collection::vec(prop_oneof![
            Just("“".to_string()), Just("”".to_string()), Just("[1]".to_string()), Just("（张三，2020）".to_string()),
            Just("\n".to_string()), Just("参考文献\n".to_string()), Just("目录\n".to_string()), Just("第一章 绪论\n".to_string()),
            "\\PC{0,12}", "[a-z ]{0,8}",
        ], 0..40),
        seed in 0u64..1000,
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let src = text(seed, 200);
            let (_d, lib, _) = library_with(vec![NewDoc::public("s", src.clone())]).await;
            let mut paper: String = noise.concat();
            paper.push_str(&slice(&src, 0, 40));
            let r = check(&paper, &lib, &CheckOptions::default()).await.unwrap();
            let n = paper.chars().count();
            prop_assert!(r.copied_chars <= r.total_chars);
            prop_assert!((0.0..=100.0).contains(&r.ratio_total));
            prop_assert!(r.ratio_excluding_quotes <= r.ratio_total + 1e-9);
            prop_assert!(r.ratio_excluding_own <= r.ratio_total + 1e-9);
            prop_assert!(r.ratio_max_single_source <= r.ratio_total + 1e-9);
            prop_assert_eq!(r.paragraphs.iter().map(|p| p.total_chars).sum::<usize>(), r.total_chars);
            prop_assert_eq!(r.paragraphs.iter().map(|p| p.copied_chars).sum::<usize>(), r.copied_chars);
            for s in &r.spans {
                prop_assert!(s.start < s.end && s.end <= n);
            }
            Ok(())
        })?;
    }
}

/// The USE model from `WENJIAN_MODELS_DIR` or ./data/models; `None` (test skipped with a
/// message) when `wenjian models fetch` has not run.
fn encoder() -> Option<embed::UseEncoder> {
    let dir = std::env::var("WENJIAN_MODELS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| {
            std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/models"))
        })
        .join("usem3");
    match embed::UseEncoder::load(&dir) {
        Ok(e) => Some(e),
        Err(e) => {
            eprintln!(
                "skipped: USE model not available in {} ({e}); run `wenjian models fetch`",
                dir.display()
            );
            None
        }
    }
}

/// A library abstract the sentence-layer tests copy, reword and edit.
const IMAGE_RECOGNITION: &str = "研究背景。深度学习方法在图像识别任务中取得了显著的效果，并逐渐成为主流技术。本章通过问卷调查分析了农村地区小学生的课外活动安排情况。";
/// A sentence no library document is close to.
const UNRELATED: &str = "城市居民的阅读时间与其受教育程度之间存在明显的正相关关系。";

/// Each span's class, its text in the paper and its source.
fn classes_texts_sources(report: &simcheck::Report, paper: &str) -> Vec<(SpanClass, String, u64)> {
    report
        .spans
        .iter()
        .map(|s| (s.class, slice(paper, s.start, s.end), s.source_id))
        .collect()
}

async fn check_with_layer(
    paper: &str,
    lib: &EmbeddedLibrary,
    encoder: &embed::UseEncoder,
    options: &CheckOptions,
) -> simcheck::Report {
    simcheck::check_with(paper, lib, options, Some(encoder))
        .await
        .unwrap()
}

#[tokio::test]
async fn paraphrases_are_reported_apart_and_never_counted_as_copies() {
    let Some(encoder) = encoder() else { return };
    let source = IMAGE_RECOGNITION;
    let (_d, lib, ids) = library_with(vec![NewDoc::public("图像识别综述", source)]).await;
    let copied = "本章通过问卷调查分析了农村地区小学生的课外活动安排情况";
    let paraphrased = "在图像识别任务上，基于深度学习的方法效果显著，逐步成为了主流的技术。";
    let unrelated = UNRELATED;
    let paper = format!("{paraphrased}{unrelated}\n{copied}。\n");
    let report = check_with_layer(&paper, &lib, &encoder, &CheckOptions::default()).await;
    let classes: Vec<(SpanClass, String)> = report
        .spans
        .iter()
        .map(|s| (s.class, slice(&paper, s.start, s.end)))
        .collect();
    assert_eq!(
        classes,
        vec![
            (SpanClass::Paraphrase, paraphrased.to_string()),
            (SpanClass::Copy, copied.to_string())
        ],
        "{:#?}",
        report.spans
    );
    let p = &report.spans[0];
    assert_eq!(p.source_id, ids[0]);
    assert_eq!(
        slice(source, p.source_start, p.source_end),
        "深度学习方法在图像识别任务中取得了显著的效果，并逐渐成为主流技术。"
    );
    assert_eq!(
        report.copied_chars,
        simcheck::normalize::count_chars(copied)
    );
    assert_eq!(
        report.paraphrase_chars,
        simcheck::normalize::count_chars(paraphrased)
    );
    // Without the layer, the same check reports the copy only.
    let plain = check(&paper, &lib, &CheckOptions::default()).await.unwrap();
    assert_eq!(plain.spans.len(), 1);
    assert_eq!(plain.ratio_total, report.ratio_total);
}

/// A sentence whose characters are the source's, with edits too dense for any fingerprint to
/// survive, is a light edit (counted), not a paraphrase.
#[tokio::test]
async fn densely_edited_sentences_count_as_light_edits() {
    let Some(encoder) = encoder() else { return };
    let source = IMAGE_RECOGNITION;
    let (_d, lib, ids) = library_with(vec![NewDoc::public("图像识别综述", source)]).await;
    let edited = "深度学刁方法在图象识别任务中取淂了显著的效杲，并逐渐成为主流技木。";
    let unrelated = UNRELATED;
    let paper = format!("{unrelated}\n{edited}\n{unrelated}\n");
    assert!(
        check(&paper, &lib, &CheckOptions::default())
            .await
            .unwrap()
            .spans
            .is_empty(),
        "no fingerprint survives the edits"
    );
    let report = check_with_layer(&paper, &lib, &encoder, &CheckOptions::default()).await;
    let found = classes_texts_sources(&report, &paper);
    assert_eq!(
        found,
        vec![(SpanClass::LightEdit, edited.to_string(), ids[0])],
        "{:#?}",
        report.spans
    );
    assert_eq!(
        report.spans[0].source_text,
        "深度学习方法在图像识别任务中取得了显著的效果，并逐渐成为主流技术。"
    );
    assert_eq!(
        report.copied_chars,
        simcheck::normalize::count_chars(edited)
    );
    assert_eq!(report.paraphrase_chars, 0);
    // With the rule off, the same sentence is only a suspected paraphrase, never counted.
    let options = CheckOptions {
        light_edit_overlap: f32::INFINITY,
        ..CheckOptions::default()
    };
    let report = check_with_layer(&paper, &lib, &encoder, &options).await;
    assert_eq!(report.spans.len(), 1);
    assert_eq!(report.spans[0].class, SpanClass::Paraphrase);
    assert_eq!(report.copied_chars, 0);
}

#[tokio::test]
async fn the_priced_count_is_the_reported_count() {
    let src = text(90, 300);
    let (_d, lib, _) = library_with(vec![NewDoc::public("s", src.clone())]).await;
    let paper = format!(
        "目录\n第一章 绪论 ........ 1\n第一章 绪论\n{}\n参考文献\n[1] 某文献，2020。\n",
        slice(&src, 0, 80)
    );
    for exclude_bibliography in [true, false] {
        let options = CheckOptions {
            exclude_bibliography,
            ..CheckOptions::default()
        };
        let report = check(&paper, &lib, &options).await.unwrap();
        assert_eq!(
            simcheck::checked_chars(&paper, &options),
            report.total_chars
        );
    }
}

/// With a sentence index, a reworded sentence is found in a document that shares no k-gram with
/// the paper, and a Chinese translation of an English library sentence is a suspected
/// translation; removal takes a document's sentences out, and a second process sees the index.
#[tokio::test]
async fn the_sentence_index_finds_rewordings_and_translations_anywhere_in_the_library() {
    let Some(encoder) = encoder() else { return };
    let encoder: std::sync::Arc<dyn simcheck::SentenceEmbedder> = std::sync::Arc::new(encoder);
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        let inner =
            EmbeddedLibrary::open(dir.path().join("lib"), FingerprintParams::default()).unwrap();
        simcheck::SemanticLibrary::open(inner, dir.path().join("sentences"), Some(encoder.clone()))
            .unwrap()
    };
    let lib = open();
    let chinese = "研究背景。深度学习方法在图像识别任务中取得了显著的效果，并逐渐成为主流技术。";
    let english = "Background. Rising interest rates reduce household consumption in the short run. \
                   The effect is stronger for families with mortgages.";
    let ids = lib
        .add(vec![
            NewDoc::public("图像识别综述", chinese),
            NewDoc::public("Interest rates and consumption", english),
        ])
        .await
        .unwrap();
    assert_eq!(
        lib.sentence_index().unwrap().len(),
        4,
        "two sentences of each document"
    );

    let reworded = "在图像识别任务上，基于深度学习的方法效果显著，逐步成为了主流的技术。";
    let translated = "利率上升会在短期内减少家庭消费。";
    let unrelated = UNRELATED;
    let paper = format!("{reworded}{unrelated}{translated}\n");
    let report = check_semantic(&lib, &paper, encoder.as_ref()).await;
    let found = classes_texts_sources(&report, &paper);
    assert_eq!(
        found,
        vec![
            (SpanClass::Paraphrase, reworded.to_string(), ids[0]),
            (SpanClass::Translated, translated.to_string(), ids[1]),
        ],
        "{:#?}",
        report.spans
    );
    assert_eq!(report.copied_chars, 0);
    assert_eq!(
        report.translated_chars,
        simcheck::normalize::count_chars(translated)
    );
    assert!(
        report.spans[1]
            .source_text
            .starts_with("Rising interest rates")
    );

    // Another process opening the same files sees the index, and a removal there.
    let other = open();
    assert_eq!(other.sentence_index().unwrap().len(), 4);
    assert!(other.remove(ids[1]).await.unwrap());
    let report = check_semantic(&lib, &paper, encoder.as_ref()).await;
    assert!(
        report
            .spans
            .iter()
            .all(|s| s.class != SpanClass::Translated),
        "{:#?}",
        report.spans
    );
}

async fn check_semantic(
    lib: &simcheck::SemanticLibrary<EmbeddedLibrary>,
    paper: &str,
    encoder: &dyn simcheck::SentenceEmbedder,
) -> simcheck::Report {
    simcheck::check_with(paper, lib, &CheckOptions::default(), Some(encoder))
        .await
        .unwrap()
}

/// Both ways a check meets the library's sentences: through the sentence index, and among the
/// candidate documents' sentences when the library keeps no index. `None` without the model.
async fn with_both_sentence_layers(
    docs: Vec<NewDoc>,
    paper: &str,
    options: &CheckOptions,
) -> Option<[(simcheck::Report, Vec<u64>); 2]> {
    let encoder: std::sync::Arc<dyn simcheck::SentenceEmbedder> = std::sync::Arc::new(encoder()?);
    let (_d, plain, plain_ids) = library_with(docs.clone()).await;
    let without_index = simcheck::check_with(paper, &plain, options, Some(encoder.as_ref()))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let inner =
        EmbeddedLibrary::open(dir.path().join("lib"), FingerprintParams::default()).unwrap();
    let indexed =
        simcheck::SemanticLibrary::open(inner, dir.path().join("sentences"), Some(encoder.clone()))
            .unwrap();
    let indexed_ids = indexed.add(docs).await.unwrap();
    let with_index = simcheck::check_with(paper, &indexed, options, Some(encoder.as_ref()))
        .await
        .unwrap();
    Some([(without_index, plain_ids), (with_index, indexed_ids)])
}

/// Each report (one per sentence layer) finds `edited` whole as one light edit of the first
/// library document, counted.
fn assert_one_light_edit(reports: &[(simcheck::Report, Vec<u64>); 2], paper: &str, edited: &str) {
    for (report, ids) in reports {
        assert_eq!(
            classes_texts_sources(report, paper),
            vec![(SpanClass::LightEdit, edited.to_string(), ids[0])],
            "{:#?}",
            report.spans
        );
        assert_eq!(
            report.copied_chars,
            simcheck::normalize::count_chars(edited)
        );
    }
}

/// A short light edit whose words other documents also use is common by the two-document rule;
/// the sentence layer finds it a light edit of one library sentence that no other document's
/// sentence is close to, and it counts (the real-prose bench's Client/Server sentence,
/// docs/simcheck.md).
#[tokio::test]
async fn a_light_edit_of_one_sentence_counts_though_its_words_are_used_elsewhere() {
    let source = "实验结果表明，与传统客户端服务器计算模式的远程数据库访问方法对比，该技术具有明显的性能优势。";
    let docs = vec![
        NewDoc::public(
            "远程数据库访问技术",
            format!("研究背景。{source}本文还讨论了系统的部署成本。"),
        ),
        // The same words, each in a sentence about something else.
        NewDoc::public(
            "高校图书馆服务",
            "问卷的实验结果表明与传统教学相比学生兴趣提高。客户端服务器计算模式已被云平台取代。\
             图书馆的远程数据库访问方法需要统一认证。两种方案对比该技术具有更低的延迟。\
             测试显示明显的性能优势主要来自缓存。",
        ),
    ];
    let edited = "实验结果表明，与传统客户端服务器计算模式的远程数据库访问方式对比，该技朮具有明显的性能优势。";
    let paper = format!("{UNRELATED}\n{edited}\n{UNRELATED}\n");
    let off = CheckOptions {
        recheck_two_document_commons: false,
        ..CheckOptions::default()
    };
    let Some(before) = with_both_sentence_layers(docs.clone(), &paper, &off).await else {
        return;
    };
    for (report, _) in &before {
        assert!(
            !report.spans.is_empty() && report.spans.iter().all(|s| s.class == SpanClass::Common),
            "the case the rule is for: common by two documents {:#?}",
            report.spans
        );
        assert_eq!(report.copied_chars, 0);
    }
    let after = with_both_sentence_layers(docs, &paper, &CheckOptions::default())
        .await
        .unwrap();
    assert_one_light_edit(&after, &paper, edited);
}

/// Two short sentences copied one after the other with a character or two changed are one
/// light-edited passage, though neither alone is long enough to be judged a light edit (the
/// real-prose bench's rhetorical questions, docs/simcheck.md).
#[tokio::test]
async fn short_sentences_copied_in_a_row_are_judged_as_one_passage() {
    let docs = vec![NewDoc::public(
        "建模思路",
        "本文讨论一种新的建模思路。为什么说它是一种新模型呢？它究竟新在哪些地方呢？下文从三个方面回答这个问题。",
    )];
    let edited = "为什么说它是一种模型呢？它究呵竟新在哪些地方呢？";
    let paper = format!("{UNRELATED}\n{edited}\n{UNRELATED}\n");
    let Some(reports) =
        with_both_sentence_layers(docs.clone(), &paper, &CheckOptions::default()).await
    else {
        return;
    };
    assert_one_light_edit(&reports, &paper, edited);
    // Without the rule for shorter passages it stays a suspicion, never counted.
    let off = CheckOptions {
        short_light_edit_overlap: f32::INFINITY,
        ..CheckOptions::default()
    };
    for (report, ids) in &with_both_sentence_layers(docs, &paper, &off).await.unwrap() {
        assert_eq!(
            classes_texts_sources(report, &paper),
            vec![(SpanClass::Paraphrase, edited.to_string(), ids[0])],
            "{:#?}",
            report.spans
        );
        assert_eq!(report.copied_chars, 0);
    }
}

/// A template filled in with figures, close to one library sentence only, stays a common
/// phrase with the sentence layer on: the figures are the fill-in (the real-prose bench's
/// linearity fragments; the CSL abstracts write a decimal point as "。", so a sentence ends
/// inside the figure).
#[tokio::test]
async fn a_template_filled_in_with_figures_stays_common_with_the_sentence_layer() {
    let docs = vec![
        NewDoc::public(
            "头孢克肟的含量测定",
            "方法：采用高效液相色谱法。结果：头孢克肟在2。0～40。0μg·mL-1范围内与峰面积积分值呈良好线性关系（r=0。9995），平均回收率为99。2％。",
        ),
        NewDoc::public(
            "甲硝唑注射液的相容性",
            "在甲硝唑注射液与输液包装材料相容性的长期留样考察中，先确认了方法在0。5～20。0μg·mL-1范围内与峰面积积分值呈现良好线性关系的条件，随后完成了六个月的稳定性测定和统计分析。",
        ),
    ];
    let paper = format!(
        "{UNRELATED}\n结果：头孢呋辛在1。0～50。0μg·mL-1范围内与峰面积积分值呈良好线性关系（r=0。9998），平均回收率为97。4％。\n{UNRELATED}\n"
    );
    let Some(reports) = with_both_sentence_layers(docs, &paper, &CheckOptions::default()).await
    else {
        return;
    };
    for (report, _) in &reports {
        assert!(
            report.spans.iter().any(|s| s.class == SpanClass::Common),
            "{:#?}",
            report.spans
        );
        assert_eq!(report.copied_chars, 0, "{:#?}", report.spans);
    }
}

/// A copied sentence with odd characters swapped into four of its words moves the encoder below
/// the paraphrase threshold but keeps most of the source's characters: it is a light edit,
/// counted (the real-prose bench's unfound sentence, docs/simcheck.md).
#[tokio::test]
async fn a_sentence_with_odd_characters_in_its_words_is_a_light_edit_below_the_threshold() {
    let source = "实验表明，改进后的模型在小样本条件下具有更好的泛化能力。";
    let docs = vec![NewDoc::public(
        "小样本学习模型",
        format!("研究背景。{source}最后讨论了方法的局限。"),
    )];
    let edited = "实验表明，改进后的丂型在小样乄条件下具有更好的乢化能丟。";
    let Some(encoder) = encoder() else {
        return;
    };
    let cosine = embed::cosine(
        &simcheck::SentenceEmbedder::embed(&encoder, source),
        &simcheck::SentenceEmbedder::embed(&encoder, edited),
    );
    assert!(
        (simcheck::EDITED_COPY_FLOOR..simcheck::PARAPHRASE_THRESHOLD).contains(&cosine),
        "the case the rule is for: cosine {cosine}"
    );
    let paper = format!("{UNRELATED}\n{edited}\n{UNRELATED}\n");
    let reports = with_both_sentence_layers(docs.clone(), &paper, &CheckOptions::default())
        .await
        .unwrap();
    assert_one_light_edit(&reports, &paper, edited);
    // Judged on the encoder alone, it is not found at all.
    let off = CheckOptions {
        edited_copy_floor: f32::INFINITY,
        ..CheckOptions::default()
    };
    for (report, _) in &with_both_sentence_layers(docs, &paper, &off).await.unwrap() {
        assert_eq!(report.copied_chars, 0, "{:#?}", report.spans);
    }
}

/// A cluster of edits near a sentence's end leaves no fingerprint over its last twenty-odd
/// characters, and the alignment cannot bridge it; as those keep most of the source's
/// characters in order, the match reaches the
/// sentence end, and the whole sentence counts (the real-prose bench's "…为儦方便人们吉理倏某些俘
/// 非本族傉言…", docs/simcheck.md). A tail the student wrote anew does not.
#[tokio::test]
async fn a_match_reaches_the_sentence_end_over_a_long_cluster_of_edits() {
    let copied =
        "本文以近十年出版的三百余种地方志为材料，系统考察了明清时期江南地区市镇经济的发展脉络，";
    let source = format!(
        "{copied}并讨论了商业网络与地方社会结构之间的互动关系以及其对近代城市化进程的深远影响。"
    );
    let (_d, lib, ids) = library_with(vec![NewDoc::public(
        "江南市镇经济",
        format!("研究背景。{source}最后是结论。"),
    )])
    .await;
    // Every fourth character of the last clause taken out: no four in a row are the source's.
    let edited = format!("{copied}并讨论商业网与地方会结构间的互关系以其对近城市化程的深影响。");
    let paper = format!("{UNRELATED}\n{edited}\n{UNRELATED}\n");
    let report = check(&paper, &lib, &CheckOptions::default()).await.unwrap();
    assert_eq!(
        classes_texts_sources(&report, &paper),
        vec![(SpanClass::LightEdit, edited.clone(), ids[0])],
        "{:#?}",
        report.spans
    );
    let rewritten = format!("{copied}这一过程也改变了城镇居民的日常生活与消费习惯。");
    let paper = format!("{UNRELATED}\n{rewritten}\n{UNRELATED}\n");
    let report = check(&paper, &lib, &CheckOptions::default()).await.unwrap();
    assert_eq!(
        classes_texts_sources(&report, &paper),
        vec![(
            SpanClass::Copy,
            copied.trim_end_matches('，').to_string(),
            ids[0]
        )],
        "{:#?}",
        report.spans
    );
}

#[tokio::test]
async fn an_edited_stretch_longer_than_an_edge_is_not_joined_to_the_match() {
    let copied =
        "本文以近十年出版的三百余种地方志为材料，系统考察了明清时期江南地区市镇经济的发展脉络，";
    let source = format!(
        "{copied}并讨论了商业网络与地方社会结构之间的互动关系以及其对近代城市化进程的深远影响，同时结合大量档案资料分析了市镇人口流动、手工业分工和地方财政收支的长期变化趋势及其内在动因，进而比较了太湖流域与钱塘江沿岸两类市镇在交通条件、物产结构、宗族组织和士绅参与方面的显著差异，考察了牙行制度、会馆公所与地方官府在市场管理中的分工协作及其随时代推移而发生的复杂演变，梳理了丝织业、棉纺业和粮食贸易如何通过跨区域的长途贩运把江南市镇同华北、华南乃至海外市场紧密联系起来，还讨论了战乱、灾荒与赋役改革对市镇兴衰的冲击以及地方社会为应对这些冲击所形成的种种自我调节机制，另外借助地理信息系统重建了若干典型市镇的街巷格局、店铺分布与水陆码头位置，并通过对契约文书、商业账簿和私人日记的细读还原了普通商户与雇工的日常经营状况，并据此提出了重新认识传统社会经济转型的若干理论假设与研究路径。"
    );
    let (_d, lib, ids) = library_with(vec![NewDoc::public(
        "江南市镇经济",
        format!("研究背景。{source}最后是结论。"),
    )])
    .await;
    // Every fourth character of the 364-letter rest taken out: 273 letters, more than an edge
    // (each of them still the source's, in order).
    let edited = format!(
        "{copied}并讨论商业网与地方会结构间的互关系以其对近城市化程的深影响，同结合大档案资分析了镇人口动、手工分工和方财政支的长变化趋及其内动因，进比较了湖流域钱塘江岸两类镇在交条件、物结构、宗组织和绅参与面的显差异，考了牙行度、会馆所与地官府在场管理的分工作及其时代推而发生复杂演，梳理了织业、棉业和粮贸易如通过跨域的长贩运把南市镇华北、华乃至海市场紧联系起，还讨论战乱、灾与赋役革对市兴衰的击以及方社会应对这冲击所成的种自我调机制，另借助地信息系重建了干典型镇的街格局、店分布与陆码头置，并通对契约书、商业簿和私日记的读还原普通商与雇工日常经状况，并此提出重新认传统社经济转的若干论假设研究路。"
    );
    let paper = format!("{UNRELATED}\n{edited}\n{UNRELATED}\n");
    let report = check(&paper, &lib, &CheckOptions::default()).await.unwrap();
    assert_eq!(
        classes_texts_sources(&report, &paper),
        vec![(SpanClass::Copy, format!("{copied}并讨论"), ids[0])],
        "{:#?}",
        report.spans
    );
}

/// A passage copied whole from one paper, whose opening and closing are the field's stock
/// results phrases: the stock phrases are common, the source's own finding between them is
/// counted (the real-prose bench's "结果：4组患者T1时点…" paste, docs/simcheck.md).
#[tokio::test]
async fn the_own_wording_inside_a_copied_common_passage_is_counted() {
    let opening = "结果：各组患者治疗前的各项指标比较，差异均无统计学意义（P>0.05）；治疗后";
    let closing =
        "，差异均有统计学意义（P<0.05），两组患者不良反应发生率比较差异无统计学意义（P>0.05）。";
    let finding = "观察组患者的血清白介素六、肿瘤坏死因子与超敏C反应蛋白水平均显著低于对照组";
    let others = [
        "试验组的疼痛评分与住院天数均明显少于常规护理组",
        "联合用药组的总有效率高于单药组且复发率更低",
        "干预组产妇的产后出血量和焦虑评分均低于对照组",
        "研究组的肺功能指标改善程度优于常规治疗组",
        "实验组患儿的退热时间与咳嗽消失时间均短于对照组",
    ];
    let mut docs = vec![NewDoc::public(
        "炎症因子研究",
        format!("目的：观察疗效。{opening}{finding}{closing}结论：值得推广。"),
    )];
    docs.extend(others.iter().enumerate().map(|(i, other)| {
        NewDoc::public(
            format!("临床研究{i}"),
            format!("目的：评价干预效果。{opening}{other}{closing}"),
        )
    }));
    let (_d, lib, ids) = library_with(docs).await;
    let passage = format!("{opening}{finding}{closing}");
    let paper = format!("{UNRELATED}\n{passage}\n{UNRELATED}\n");
    let report = check(&paper, &lib, &CheckOptions::default()).await.unwrap();
    let found = classes_texts_sources(&report, &paper);
    let copies: Vec<&(SpanClass, String, u64)> = found
        .iter()
        .filter(|(class, _, _)| *class != SpanClass::Common)
        .collect();
    assert!(
        copies.len() == 1
            && copies[0].0 == SpanClass::Copy
            && copies[0].2 == ids[0]
            && copies[0]
                .1
                .contains("观察组患者的血清白介素六、肿瘤坏死因子与超敏C反应蛋白水平")
            && copies[0].1.chars().count() <= finding.chars().count() + 4,
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|(class, _, _)| *class == SpanClass::Common),
        "{found:#?}"
    );
    // Judged as a whole, the passage is one common phrase and nothing of it counts.
    let whole = CheckOptions {
        rare_run_chars: usize::MAX,
        ..CheckOptions::default()
    };
    let report = check(&paper, &lib, &whole).await.unwrap();
    assert_eq!(report.copied_chars, 0, "{:#?}", report.spans);
}
