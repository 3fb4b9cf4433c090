//! Capability search: a model finds a capability by what it does. Measured
//! on GitHub's 117 MCP tools with a labelled query set written here —
//! queries phrased the way a user asks, not copied from the descriptions —
//! and through `Mounted::search` on a session.

use capspec::search::Index;
use capspec_tests::bindings::github::github;

/// (query, the capability it means).
const LABELLED: &[(&str, &str)] = &[
    ("open a new issue in a repository", "issue_write"),
    ("leave a comment on an issue", "add_issue_comment"),
    ("who am I logged in as", "get_me"),
    ("read the contents of a file in a repo", "get_file_contents"),
    ("delete a file from a repository", "delete_file"),
    ("create a new branch", "create_branch"),
    ("list the branches of a repository", "list_branches"),
    ("open a pull request", "create_pull_request"),
    ("merge a pull request", "merge_pull_request"),
    ("search code across GitHub", "search_code"),
    ("find repositories about a topic", "search_repositories"),
    ("find users by name", "search_users"),
    ("fork a repository", "fork_repository"),
    ("create a new repository", "create_repository"),
    ("list commits on a branch", "list_commits"),
    ("show one commit", "get_commit"),
    ("list tags of a repository", "list_tags"),
    ("list the releases", "list_releases"),
    ("latest release of a repo", "get_latest_release"),
    ("list workflow runs of GitHub Actions", "actions_list"),
    ("rerun a failed workflow", "actions_run_trigger"),
    ("get the logs of a failed job", "get_job_logs"),
    ("list my notifications", "list_notifications"),
    ("request a review from copilot", "request_copilot_review"),
    ("list gists", "list_gists"),
    ("create a gist", "create_gist"),
    ("add a reaction to an issue", "add_issue_reaction"),
    ("list code scanning alerts", "list_code_scanning_alerts"),
    ("list secret scanning alerts", "list_secret_scanning_alerts"),
    ("list dependabot alerts", "list_dependabot_alerts"),
    ("list discussions in a repository", "list_discussions"),
    ("push several files in one commit", "push_files"),
    ("update the title of an issue", "update_issue_title"),
    ("list the labels of a repository", "list_label"),
    ("star a repository", "star_repository"),
];

#[test]
fn labelled_queries_find_their_capability_in_the_top_5() {
    let index = Index::new(github::SPECS.iter());
    let names: Vec<&str> = github::SPECS.iter().map(|s| s.name).collect();
    let mut found = 0;
    let mut missed = Vec::new();
    for (query, want) in LABELLED {
        assert!(names.contains(want), "the label `{want}` is a capability of the corpus");
        let hits = index.search(query, 5, |_| true);
        if hits.iter().any(|h| h.name == *want) {
            found += 1;
        } else {
            missed.push(format!("{query:?} → {:?}", hits.iter().map(|h| h.name).collect::<Vec<_>>()));
        }
    }
    let recall = found as f64 / LABELLED.len() as f64;
    insta::assert_snapshot!(format!("recall@5 = {found}/{} = {recall:.2}\nmissed:\n{}", LABELLED.len(), missed.join("\n")));
    assert!(recall >= 0.85, "recall@5 {recall:.2}");
}

#[test]
fn ranking_is_deterministic_and_bounded() {
    let index = Index::new(github::SPECS.iter());
    let a = index.search("list issues", 7, |_| true);
    assert_eq!(a.len(), 7);
    assert_eq!(a, index.search("list issues", 7, |_| true));
    assert!(a.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(index.search("zzzz qqqq", 5, |_| true).is_empty(), "no shared word, no hit");
    assert!(index.search("list issues", 5, |s| s.name.starts_with("get_")).iter().all(|h| h.name.starts_with("get_")));
}

/// Tokens of `text` in o200k_base, the tokenizer of current OpenAI models.
fn tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base().expect("the o200k_base table is built in").encode_ordinary(text).len()
}

/// `specs`, every one deferred, as one module named `name` (leaked: the
/// runtime's tables are `'static`, as generated bindings are).
fn deferred_module(name: &'static str, specs: impl IntoIterator<Item = capspec::Spec>) -> capspec::Module {
    let specs: Vec<capspec::Spec> = specs.into_iter().map(|s| capspec::Spec { deferred: true, ..s }).collect();
    capspec::Module { name, description: "Deferred.", specs: Vec::leak(specs), facade: "", catalog: "" }
}

/// Tiering: with every capability deferred, the always-loaded catalog stays
/// under 1,500 tokens however many there are, and each capability is still
/// found by `tool_search` — asked with its own one-line description.
#[test]
fn the_tiered_catalog_is_small_at_any_size_and_search_reaches_every_capability() {
    // GitHub's 117 tools.
    let github = deferred_module("github", github::SPECS.iter().copied());
    let small = capspec::tiered_catalog([&github]);
    // 10,000 capabilities in 100 modules, each with its own words.
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];
    let modules: Vec<capspec::Module> = (0..100)
        .map(|m| {
            let name: &'static str = String::leak(format!("module_{m:03}"));
            deferred_module(
                name,
                (0..100).map(move |c| {
                    let cap: &'static str = String::leak(format!("{}_{}_{c}", words[c % 10], words[(c / 10) % 10]));
                    let summary: &'static str = String::leak(format!("Handle {} {} records of {name} number {c}.", words[c % 10], words[(c / 10) % 10]));
                    capspec::Spec { module: name, name: cap, wire_name: cap, summary, description: summary, signature: cap, ..github::SPECS[0] }
                }),
            )
        })
        .collect();
    let large = capspec::tiered_catalog(&modules);
    let (small_tokens, large_tokens) = (tokens(&small), tokens(&large));
    eprintln!("tiered catalog: {small_tokens} tokens for 117 capabilities, {large_tokens} for 10,000");
    assert!(small_tokens <= 1_500 && large_tokens <= 1_500, "{small_tokens} / {large_tokens} tokens");
    assert!(large.contains("and 60 more") && large.contains("tool_search("), "{large}");
    // Reachable: each GitHub capability is in the top 5 for its own summary.
    let index = Index::new(github.specs.iter());
    let unreachable: Vec<&str> =
        github.specs.iter().filter(|s| !index.search(s.summary, 5, |_| true).iter().any(|h| h.name == s.name)).map(|s| s.name).collect();
    eprintln!("reachable by their own summary in the top 5: {}/{}; not: {unreachable:?}", github.specs.len() - unreachable.len(), github.specs.len());
    assert!(unreachable.is_empty(), "unreachable: {unreachable:?}");
}
