//! Behaviour every `Library` backend must show, written once and run against each backend
//! (the embedded segments here, the SQL postings table in `store`, on SQLite and PostgreSQL).
//! Each function panics on a violation.

use crate::library::{Library, NewDoc, Scope, ScopeFilter};
use crate::{CheckOptions, SpanClass, check};

/// Deterministic Chinese-looking text of `n` characters (not real prose).
pub fn sample_text(seed: u64, n: usize) -> String {
    const ALPHABET: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研";
    let chars: Vec<char> = ALPHABET.chars().collect();
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut out = String::new();
    for i in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.push(chars[(x >> 33) as usize % chars.len()]);
        if i % 37 == 36 {
            out.push('，');
        }
    }
    out
}

fn slice(s: &str, start: usize, end: usize) -> String {
    s.chars().skip(start).take(end - start).collect()
}

/// Adding, listing, reading back and checking against the library find exactly the copies.
pub async fn add_list_and_find<L: Library>(library: &L) {
    let a = sample_text(1, 500);
    let b = sample_text(2, 500);
    let ids = library
        .add(vec![
            NewDoc::public("甲", a.clone()),
            NewDoc {
                bib: crate::BibInfo {
                    volume: Some("36".into()),
                    pages: Some("20-25".into()),
                    doi: Some("10.1000/x".into()),
                    ..crate::BibInfo::default()
                },
                ..NewDoc::public("乙", b.clone())
            },
        ])
        .await
        .unwrap();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
    let listed = library.list().await.unwrap();
    assert_eq!(
        listed.iter().map(|m| m.title.as_str()).collect::<Vec<_>>(),
        vec!["甲", "乙"]
    );
    assert_eq!(
        library.text(ids[0]).await.unwrap().as_deref(),
        Some(a.as_str())
    );
    assert_eq!(
        library.meta(ids[1]).await.unwrap().unwrap().chars as usize,
        crate::normalize::count_chars(&b)
    );
    assert!(library.meta(9_999_999).await.unwrap().is_none());
    // The details a reference list needs are kept as imported; none are made up.
    let kept = library.meta(ids[1]).await.unwrap().unwrap().bib;
    assert_eq!(
        (
            kept.volume.as_deref(),
            kept.pages.as_deref(),
            kept.issue.as_deref()
        ),
        (Some("36"), Some("20-25"), None)
    );
    assert!(library.meta(ids[0]).await.unwrap().unwrap().bib.is_empty());

    let copied = slice(&a, 100, 150);
    let copied = copied
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_string();
    let paper = format!(
        "{}\n{}\n{}",
        sample_text(10, 100),
        copied,
        sample_text(11, 100)
    );
    let report = check(&paper, library, &CheckOptions::default())
        .await
        .unwrap();
    assert_eq!(report.spans.len(), 1, "{:?}", report.spans);
    let s = &report.spans[0];
    assert_eq!(s.source_id, ids[0]);
    assert_eq!(s.class, SpanClass::Copy);
    assert_eq!(slice(&paper, s.start, s.end), copied);
    assert_eq!(slice(&a, s.source_start, s.source_end), copied);
}

/// Private and own-published documents are matched for their owner only.
pub async fn scopes_are_respected<L: Library>(library: &L) {
    let private = sample_text(20, 300);
    let ids = library
        .add(vec![NewDoc {
            owner: Some(42),
            scope: Scope::Private,
            ..NewDoc::public("草稿", private.clone())
        }])
        .await
        .unwrap();
    let paper = format!("{}{}", sample_text(21, 60), slice(&private, 0, 60));
    let owner = CheckOptions {
        scope: ScopeFilter { owner: Some(42) },
        ..CheckOptions::default()
    };
    let stranger = CheckOptions {
        scope: ScopeFilter { owner: Some(43) },
        ..CheckOptions::default()
    };
    let anonymous = CheckOptions::default();
    assert_eq!(
        check(&paper, library, &owner)
            .await
            .unwrap()
            .sources
            .first()
            .map(|s| s.id),
        Some(ids[0])
    );
    assert!(
        check(&paper, library, &stranger)
            .await
            .unwrap()
            .spans
            .is_empty()
    );
    assert!(
        check(&paper, library, &anonymous)
            .await
            .unwrap()
            .spans
            .is_empty()
    );
}

/// A removed document is no longer listed, read or matched; removing twice says so.
pub async fn remove_hides_a_document<L: Library>(library: &L) {
    let text = sample_text(30, 300);
    let id = library
        .add(vec![NewDoc::public("将删除", text.clone())])
        .await
        .unwrap()[0];
    let paper = format!("{}{}", sample_text(31, 50), slice(&text, 10, 70));
    assert_eq!(
        check(&paper, library, &CheckOptions::default())
            .await
            .unwrap()
            .spans
            .len(),
        1
    );
    assert!(library.remove(id).await.unwrap());
    assert!(!library.remove(id).await.unwrap());
    assert!(library.meta(id).await.unwrap().is_none());
    assert!(library.text(id).await.unwrap().is_none());
    assert!(library.list().await.unwrap().iter().all(|m| m.id != id));
    assert!(
        check(&paper, library, &CheckOptions::default())
            .await
            .unwrap()
            .spans
            .is_empty()
    );
}

/// k-grams found in more places than the cap are not evidence.
pub async fn very_common_kgrams_are_skipped<L: Library>(library: &L) {
    let common = sample_text(40, 40);
    let docs = (0..5)
        .map(|i| {
            NewDoc::public(
                format!("常见{i}"),
                format!("{}{}", sample_text(50 + i, 50), common),
            )
        })
        .collect();
    library.add(docs).await.unwrap();
    let paper = format!("{}{}", sample_text(60, 50), common);
    let capped = CheckOptions {
        max_postings_per_hash: 3,
        ..CheckOptions::default()
    };
    // Five documents in a library this small would make the passage a common phrase.
    let every_copy = CheckOptions {
        common_phrase_docs: Some(usize::MAX),
        ..CheckOptions::default()
    };
    assert!(
        check(&paper, library, &capped)
            .await
            .unwrap()
            .spans
            .is_empty()
    );
    assert_eq!(
        check(&paper, library, &every_copy)
            .await
            .unwrap()
            .sources
            .len(),
        5
    );
}

/// Document frequency counts live public documents and follows import and removal; a phrase
/// that many documents share is reported as a common phrase (常用表述) and left out of the
/// ratios unless the reader counts it.
pub async fn common_phrases_follow_document_frequency<L: Library>(library: &L) {
    let phrase = sample_text(70, 30);
    let mut ids = Vec::new();
    for i in 0..6 {
        let text = format!(
            "{}{}{}",
            sample_text(80 + i, 60),
            phrase,
            sample_text(90 + i, 60)
        );
        ids.push(
            library
                .add(vec![NewDoc::public(format!("常用{i}"), text)])
                .await
                .unwrap()[0],
        );
    }
    let private = NewDoc {
        owner: Some(7),
        scope: Scope::Private,
        ..NewDoc::public("私有", phrase.clone())
    };
    library.add(vec![private]).await.unwrap();
    let hashes = crate::fingerprint::kgram_hashes(&crate::normalize::normalize(&phrase).chars, 5);
    let most = |df: Vec<u32>| df.into_iter().max().unwrap_or(0);
    assert_eq!(
        most(library.document_frequencies(&hashes, 1_000).await.unwrap()),
        6
    );
    assert_eq!(
        most(library.document_frequencies(&hashes, 4).await.unwrap()),
        4
    );
    assert!(library.remove(ids[0]).await.unwrap());
    assert_eq!(
        most(library.document_frequencies(&hashes, 1_000).await.unwrap()),
        5
    );
    assert_eq!(library.doc_count().await.unwrap(), 6);

    let paper = format!("{}{}", sample_text(99, 50), phrase);
    let options = CheckOptions {
        common_phrase_docs: Some(3),
        ..CheckOptions::default()
    };
    let report = check(&paper, library, &options).await.unwrap();
    assert_eq!(
        report.spans.len(),
        1,
        "one entry however many sources use it"
    );
    assert_eq!(report.spans[0].class, SpanClass::Common);
    assert_eq!(report.spans[0].docs, 5);
    assert_eq!(report.ratio_total, 0.0);
    assert_eq!(report.common_chars, 30);
    let counted = crate::refigure(
        &paper,
        &report,
        &options,
        &crate::ReportFilter {
            count_common: true,
            ..Default::default()
        },
    );
    assert_eq!(counted.copied_chars, 30);
    // Below the threshold the same passage is an ordinary copy of each source.
    let rare = CheckOptions {
        common_phrase_docs: Some(6),
        ..CheckOptions::default()
    };
    let report = check(&paper, library, &rare).await.unwrap();
    assert_eq!(report.sources.len(), 5);
    assert_eq!(report.copied_chars, 30);
}

/// The sentence index over any backend: import indexes a document's sentences, a reworded
/// sentence is found in a document sharing no k-gram with the paper, and removal drops them.
/// `library` must have been opened with an encoder (`SemanticLibrary::open(.., Some(..))`).
pub async fn sentence_index_follows_import_and_removal<L: Library>(
    library: &crate::SemanticLibrary<L>,
    encoder: &dyn crate::SentenceEmbedder,
) {
    let index = library.sentence_index().expect("opened with an encoder");
    let before = index.len();
    let source = "研究背景。深度学习方法在图像识别任务中取得了显著的效果，并逐渐成为主流技术。";
    let id = library
        .add(vec![NewDoc::public("图像识别综述", source)])
        .await
        .unwrap()[0];
    assert_eq!(index.len(), before + 1);
    assert!(index.contains(id).unwrap());
    let paper = "在图像识别任务上，基于深度学习的方法效果显著，逐步成为了主流的技术。";
    let report = crate::check_with(paper, library, &CheckOptions::default(), Some(encoder))
        .await
        .unwrap();
    assert_eq!(report.spans.len(), 1, "{:#?}", report.spans);
    assert_eq!(report.spans[0].class, SpanClass::Paraphrase);
    assert_eq!(report.spans[0].source_id, id);
    assert!(library.remove(id).await.unwrap());
    assert!(!index.contains(id).unwrap());
    let report = crate::check_with(paper, library, &CheckOptions::default(), Some(encoder))
        .await
        .unwrap();
    assert!(report.spans.is_empty());
}
