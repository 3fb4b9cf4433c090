//! Capability search over 313 real capabilities: GitHub's 117 MCP tools,
//! the four reference servers' 37 and eleven more servers' 159
//! (`fixtures/search/corpus`, with their licences), searched together with
//! a labelled query set written here — phrased the way a user asks, not
//! copied from descriptions. Goal: recall@5 ≥ 0.95.

use std::path::Path;

use capspec::search::Index;
use capspec_tests::fixtures;
use serde_json::Value;

/// (query, the capabilities that do what it asks, as `module/name`).
/// GitHub's queries name no host: the same-named tool of the archived
/// `server-github` or of `server-gitlab` answers them as well.
const LABELLED: &[(&str, &[&str])] = &[
    ("open a new issue in a repository", &["github/issue_write", "server-github/create_issue", "server-gitlab/create_issue"]),
    ("leave a comment on an issue", &["github/add_issue_comment"]),
    ("who am I logged in as", &["github/get_me"]),
    ("read the contents of a file in a repo", &["github/get_file_contents"]),
    ("delete a file from a repository", &["github/delete_file"]),
    ("create a new branch", &["github/create_branch"]),
    ("list the branches of a repository", &["github/list_branches"]),
    ("open a pull request", &["github/create_pull_request"]),
    ("merge a pull request", &["github/merge_pull_request"]),
    ("search code across GitHub", &["github/search_code"]),
    ("find repositories about a topic", &["github/search_repositories"]),
    ("find users by name", &["github/search_users"]),
    ("fork a repository", &["github/fork_repository"]),
    ("create a new repository", &["github/create_repository"]),
    ("list commits on a branch", &["github/list_commits"]),
    ("show one commit", &["github/get_commit"]),
    ("list tags of a repository", &["github/list_tags"]),
    ("list the releases", &["github/list_releases"]),
    ("latest release of a repo", &["github/get_latest_release"]),
    ("list workflow runs of GitHub Actions", &["github/actions_list"]),
    ("rerun a failed workflow", &["github/actions_run_trigger"]),
    ("get the logs of a failed job", &["github/get_job_logs"]),
    ("list my notifications", &["github/list_notifications"]),
    ("request a review from copilot", &["github/request_copilot_review"]),
    ("list gists", &["github/list_gists"]),
    ("create a gist", &["github/create_gist"]),
    ("add a reaction to an issue", &["github/add_issue_reaction"]),
    ("list code scanning alerts", &["github/list_code_scanning_alerts"]),
    ("list secret scanning alerts", &["github/list_secret_scanning_alerts"]),
    ("list dependabot alerts", &["github/list_dependabot_alerts"]),
    ("list discussions in a repository", &["github/list_discussions"]),
    ("push several files in one commit", &["github/push_files"]),
    ("update the title of an issue", &["github/update_issue_title", "server-github/update_issue"]),
    ("list the labels of a repository", &["github/list_label"]),
    ("star a repository", &["github/star_repository"]),
    ("go to a URL in the browser", &["playwright-mcp/browser_navigate", "server-puppeteer/puppeteer_navigate"]),
    ("click a button on the page", &["playwright-mcp/browser_click", "server-puppeteer/puppeteer_click"]),
    ("type text into an input field", &["playwright-mcp/browser_type", "playwright-mcp/browser_fill_form", "server-puppeteer/puppeteer_fill"]),
    ("upload a file through the browser", &["playwright-mcp/browser_file_upload"]),
    ("go back to the previous page", &["playwright-mcp/browser_navigate_back"]),
    ("read the browser console output", &["playwright-mcp/browser_console_messages"]),
    ("accept or dismiss a javascript alert dialog", &["playwright-mcp/browser_handle_dialog"]),
    ("resize the browser window", &["playwright-mcp/browser_resize"]),
    ("wait until some text appears on the page", &["playwright-mcp/browser_wait_for"]),
    ("switch between browser tabs", &["playwright-mcp/browser_tabs"]),
    ("run javascript in the page", &["playwright-mcp/browser_evaluate", "playwright-mcp/browser_run_code_unsafe", "server-puppeteer/puppeteer_evaluate"]),
    ("pick an option from a dropdown", &["playwright-mcp/browser_select_option", "server-puppeteer/puppeteer_select"]),
    ("take a screenshot of the page", &["playwright-mcp/browser_take_screenshot", "server-puppeteer/puppeteer_screenshot"]),
    ("list the network requests the page made", &["playwright-mcp/browser_network_requests"]),
    ("search my Notion workspace", &["notion-mcp-server/API-post-search"]),
    ("create a new page in Notion", &["notion-mcp-server/API-post-page"]),
    ("add a comment to a Notion page", &["notion-mcp-server/API-create-a-comment"]),
    ("delete a block in Notion", &["notion-mcp-server/API-delete-a-block"]),
    ("list all users in the Notion workspace", &["notion-mcp-server/API-get-users"]),
    ("query a Notion database", &["notion-mcp-server/API-query-data-source", "notion-mcp-server/API-retrieve-a-database"]),
    ("get a Notion page as markdown", &["notion-mcp-server/API-retrieve-page-markdown"]),
    ("move a Notion page under another parent", &["notion-mcp-server/API-move-page"]),
    ("send a message to a Slack channel", &["server-slack/slack_post_message"]),
    ("reply in a Slack thread", &["server-slack/slack_reply_to_thread"]),
    ("add an emoji reaction to a Slack message", &["server-slack/slack_add_reaction"]),
    ("list the channels in Slack", &["server-slack/slack_list_channels"]),
    ("recent messages in a Slack channel", &["server-slack/slack_get_channel_history"]),
    ("get a Slack user's profile", &["server-slack/slack_get_user_profile"]),
    ("convert an address to coordinates", &["server-google-maps/maps_geocode"]),
    ("find the address at a latitude and longitude", &["server-google-maps/maps_reverse_geocode"]),
    ("driving directions between two places", &["server-google-maps/maps_directions"]),
    ("travel distance and time between many origins and destinations", &["server-google-maps/maps_distance_matrix"]),
    ("altitude of a location", &["server-google-maps/maps_elevation"]),
    ("find restaurants near a location", &["server-google-maps/maps_search_places", "server-brave-search/brave_local_search"]),
    ("search the web", &["server-brave-search/brave_web_search", "firecrawl-mcp/firecrawl_search"]),
    ("show the logs of a pod", &["mcp-server-kubernetes/kubectl_logs"]),
    ("scale a deployment to 3 replicas", &["mcp-server-kubernetes/kubectl_scale"]),
    ("install a helm chart", &["mcp-server-kubernetes/install_helm_chart"]),
    ("run a command inside a pod", &["mcp-server-kubernetes/exec_in_pod"]),
    ("forward a local port to a pod", &["mcp-server-kubernetes/port_forward"]),
    ("roll back a deployment", &["mcp-server-kubernetes/kubectl_rollout"]),
    ("switch the kubernetes context", &["mcp-server-kubernetes/kubectl_context"]),
    ("delete a kubernetes resource", &["mcp-server-kubernetes/kubectl_delete"]),
    ("scrape the content of a single web page", &["firecrawl-mcp/firecrawl_scrape"]),
    ("crawl an entire website", &["firecrawl-mcp/firecrawl_crawl"]),
    ("check whether a crawl job finished", &["firecrawl-mcp/firecrawl_check_crawl_status"]),
    ("find research papers about a topic", &["firecrawl-mcp/firecrawl_research_search_papers"]),
    ("list all URLs of a site", &["firecrawl-mcp/firecrawl_map"]),
    ("extract structured data from web pages", &["firecrawl-mcp/firecrawl_extract"]),
    ("look up documentation for a library", &["context7-mcp/query-docs", "context7-mcp/resolve-library-id"]),
    ("show the directory tree", &["server-filesystem/directory_tree"]),
    ("make a new folder", &["server-filesystem/create_directory"]),
    ("make a line-based edit to a text file", &["server-filesystem/edit_file"]),
    ("read several files at once", &["server-filesystem/read_multiple_files"]),
    ("file size and modification time", &["server-filesystem/get_file_info"]),
    ("add entities to the knowledge graph", &["server-memory/create_entities"]),
    ("record a relation between two entities", &["server-memory/create_relations"]),
    ("search the knowledge graph", &["server-memory/search_nodes"]),
    ("add two numbers", &["server-everything/get-sum"]),
    ("think through a problem step by step", &["server-sequential-thinking/sequentialthinking"]),
    ("open a merge request on GitLab", &["server-gitlab/create_merge_request"]),
];

/// A capability made from one MCP tool (the runtime's tables are
/// `'static`, as generated bindings are: leaked).
fn spec(module: &str, tool: &Value) -> &'static capspec::Spec {
    let leak = |s: String| -> &'static str { String::leak(s) };
    let description = tool["description"].as_str().unwrap_or_default().to_string();
    let summary = description.split_inclusive(". ").next().unwrap_or_default().trim().to_string();
    let name = leak(tool["name"].as_str().unwrap().to_string());
    Box::leak(Box::new(capspec::Spec {
        module: leak(module.to_string()),
        name,
        wire_name: name,
        summary: leak(summary),
        description: leak(description),
        signature: name,
        input_schema: leak(tool["inputSchema"].to_string()),
        output_schema: None,
        ..capspec::builtin::TOOL_SEARCH
    }))
}

/// Every capability of the corpora: (module, tool) from each server file
/// (`{"tools": […]}`) and from GitHub's one-file-per-tool corpus.
fn corpus() -> Vec<&'static capspec::Spec> {
    let read = |p: &Path| serde_json::from_str::<Value>(&std::fs::read_to_string(p).unwrap()).unwrap();
    let mut specs = Vec::new();
    let github = fixtures().join("import/corpus/github-mcp-server");
    let mut files: Vec<_> = std::fs::read_dir(&github).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
    files.sort();
    specs.extend(files.iter().map(|p| spec("github", &read(p))));
    for dir in ["import/corpus/mcp-reference-servers", "search/corpus"] {
        let mut files: Vec<_> = std::fs::read_dir(fixtures().join(dir)).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
        files.sort();
        for file in files {
            let module = file.file_stem().unwrap().to_str().unwrap().to_string();
            specs.extend(read(&file)["tools"].as_array().unwrap().iter().map(|t| spec(&module, t)));
        }
    }
    specs
}

#[test]
fn labelled_queries_over_313_capabilities_find_theirs_in_the_top_5() {
    let specs = corpus();
    assert_eq!(specs.len(), 313);
    let index = Index::new(specs.iter().copied());
    let known = |target: &str| specs.iter().any(|s| format!("{}/{}", s.module, s.name) == target);
    let mut found = 0;
    let mut missed = Vec::new();
    for (query, targets) in LABELLED {
        assert!(targets.iter().all(|t| known(t)), "every label is a capability of the corpus: {targets:?}");
        let hits = index.search(query, 5, |_| true);
        let accepts = |module: &str, name: &str| {
            targets.iter().any(|t| {
                let (m, n) = t.split_once('/').unwrap();
                n == name && (m == module || (m == "github" && ["server-github", "server-gitlab"].contains(&module)))
            })
        };
        if hits.iter().any(|h| accepts(h.module, h.name)) {
            found += 1;
        } else {
            missed.push(format!("{query:?} → {:?}", hits.iter().map(|h| format!("{}/{}", h.module, h.name)).collect::<Vec<_>>()));
        }
    }
    let recall = found as f64 / LABELLED.len() as f64;
    insta::assert_snapshot!(format!("recall@5 = {found}/{} = {recall:.3}\nmissed:\n{}", LABELLED.len(), missed.join("\n")));
    assert!(recall >= 0.95, "recall@5 {recall:.3}");
}
