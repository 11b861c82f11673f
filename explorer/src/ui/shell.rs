//! The HTML every page starts as: head, navigation, and a `<main>` that names its view (and the id
//! the page is about) for `app.js` to fill.

use axum::response::Html;

/// The pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Home,
    Bundles,
    Tasks,
    Task,
    Run,
    RunGroup,
    Instance,
    Artifacts,
    Artifact,
    Plugins,
    Plugin,
    Config,
    NotFound,
}

impl View {
    fn name(self) -> &'static str {
        match self {
            View::Home => "home",
            View::Bundles => "bundles",
            View::Tasks => "tasks",
            View::Task => "task",
            View::Run => "run",
            View::RunGroup => "run-group",
            View::Instance => "instance",
            View::Artifacts => "artifacts",
            View::Artifact => "artifact",
            View::Plugins => "plugins",
            View::Plugin => "plugin",
            View::Config => "config",
            View::NotFound => "not-found",
        }
    }

    fn title(self) -> &'static str {
        match self {
            View::Home => "Home",
            View::Bundles => "Bundles",
            View::Tasks => "Tasks",
            View::Task => "Task",
            View::Run => "Run",
            View::RunGroup => "Run group",
            View::Instance => "Task instance",
            View::Artifacts => "Artifacts",
            View::Artifact => "Artifact",
            View::Plugins => "Plugins",
            View::Plugin => "Plugin",
            View::Config => "Config",
            View::NotFound => "Not found",
        }
    }

    /// The navigation entry the page belongs under, if any: a run is a bundle's (the Bundles page
    /// starts it), a task instance and a run group their task's.
    fn section(self) -> Option<&'static str> {
        match self {
            View::Home => Some("home"),
            View::Bundles | View::Run => Some("bundles"),
            View::Tasks | View::Task | View::Instance | View::RunGroup => Some("tasks"),
            View::Artifacts | View::Artifact => Some("artifacts"),
            View::Plugins | View::Plugin => Some("plugins"),
            View::Config => Some("config"),
            View::NotFound => None,
        }
    }
}

const NAV: [(&str, &str, &str); 6] = [
    ("home", "/", "Home"),
    ("bundles", "/bundles", "Bundles"),
    ("tasks", "/tasks", "Tasks"),
    ("artifacts", "/artifacts", "Artifacts"),
    ("plugins", "/plugins", "Plugins"),
    ("config", "/config", "Config"),
];

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page of `view`, about `id` when it is about one thing.
pub fn page(view: View, id: Option<&str>) -> Html<String> {
    let nav: String = NAV
        .iter()
        .map(|(section, href, label)| {
            let current = if Some(*section) == view.section() {
                " aria-current=\"page\""
            } else {
                ""
            };
            format!("<a href=\"{href}\" data-nav=\"{section}\"{current}>{label}</a>")
        })
        .collect();
    let title = match id {
        Some(id) => format!("{} {}", view.title(), escape(id)),
        None => view.title().to_string(),
    };
    let id_attr = id
        .map(|id| format!(" data-id=\"{}\"", escape(id)))
        .unwrap_or_default();
    Html(format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{title} · agent-env explorer</title><link rel=\"icon\" href=\"data:,\">\
<link rel=\"stylesheet\" href=\"/static/style.css\"></head>\
<body><header><a class=\"brand\" href=\"/\">agent-env explorer</a><nav id=\"plugin-nav\">{nav}</nav></header>\
<main id=\"main\" data-view=\"{view}\"{id_attr}><p class=\"muted\">Loading…</p>\
<noscript><p>This page needs JavaScript; the same data is at <a href=\"/openapi.json\">the API</a>.</p></noscript></main>\
<footer>agent-env {version} · <a href=\"/openapi.json\">API (OpenAPI)</a></footer>\
<script src=\"/static/app.js\"></script></body></html>\n",
        view = view.name(),
        version = agent_env::VERSION,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_escaped_into_the_shell() {
        let Html(html) = page(View::Artifact, Some("@local/a\"<b>"));
        assert!(
            html.contains("data-id=\"@local/a&quot;&lt;b&gt;\""),
            "{html}"
        );
        assert!(!html.contains("<b>"));
        assert!(html.contains("data-view=\"artifact\""));
        assert!(
            html.contains("<a href=\"/artifacts\" data-nav=\"artifacts\" aria-current=\"page\">")
        );
        assert!(
            html.contains("<link rel=\"icon\" href=\"data:,\">"),
            "{html}"
        );
    }

    #[test]
    fn a_run_and_an_instance_highlight_their_own_sections() {
        let current = |view: View| {
            let Html(html) = page(view, Some("x"));
            html.split("<a href=")
                .filter(|a| a.contains("aria-current"))
                .map(|a| {
                    a.split("data-nav=\"")
                        .nth(1)
                        .unwrap_or("")
                        .split('"')
                        .next()
                        .unwrap_or("")
                        .to_string()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(current(View::Run), ["bundles"]);
        assert_eq!(current(View::Instance), ["tasks"]);
        assert_eq!(current(View::Task), ["tasks"]);
        assert_eq!(current(View::RunGroup), ["tasks"]);
        assert!(current(View::NotFound).is_empty());
    }
}
