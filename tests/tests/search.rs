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
