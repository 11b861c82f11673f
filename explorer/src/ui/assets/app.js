// agent-env explorer: fills the page the server sent from the REST API under /api/v1.
// Plain JavaScript, no build step, no network but this server. Everything shown is set as text
// (never as HTML), so stored data cannot inject markup.
"use strict";

const main = document.getElementById("main");
const enc = encodeURIComponent;

// ---- building elements --------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function show(...children) {
  main.replaceChildren(...children.flat(2).filter((c) => c !== null && c !== undefined && c !== false));
}

// A criterion's row as a word: its result (true or false, or a plugin's "pass" or "fail"), else
// skipped, else its score (as `agent-env task get-instance` reads it).
function criterionWord(r) {
  const said = { true: "passed", false: "failed", pass: "passed", passed: "passed", fail: "failed", failed: "failed" };
  if (said[String(r.result)]) return said[String(r.result)];
  if (r.skipped) return "skipped";
  return typeof r.score === "number" ? (r.score >= 1 ? "passed" : "failed") : "skipped";
}

function badge(word) {
  const kind = String(word || "unknown").replace(/[^a-z]+/gi, "-").toLowerCase();
  return h("span", { class: `badge badge-${kind}`, "data-status": word }, word || "unknown");
}

function table(headers, rows, attrs) {
  return h("table", attrs || {},
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", {}, x)))),
    h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: headers.length, class: "muted" }, "Nothing yet."))));
}

function scoresText(scores) {
  const entries = Object.entries(scores || {});
  return entries.length ? entries.map(([k, v]) => `${k}: ${v}`).join(", ") : "—";
}

function seconds(value) {
  return typeof value === "number" ? `${value.toFixed(1)}s` : "";
}

function errorBox(error) {
  return h("p", { class: "error", role: "alert" }, String(error.message || error));
}

// What the answers left out (a configured document store that cannot be read), each sentence once.
function warningsOf(...answers) {
  return [...new Set(answers.flat().flatMap((a) => (a && Array.isArray(a.warnings) ? a.warnings : [])))];
}

// Those sentences as one notice for the top of the page; null when no answer left anything out.
function warningsNotice(...answers) {
  const said = warningsOf(...answers);
  if (!said.length) return null;
  return h("div", { class: "warning notice", role: "status", id: "answer-warnings" },
    said.map((w) => h("p", {}, String(w))));
}

// A place for that notice on a page updated in place: emptied when the newest answers left nothing
// out. `update` says whether it shows one.
function noticeSlot() {
  const slot = h("div", { class: "notice-slot" });
  slot.update = (...answers) => {
    const notice = warningsNotice(...answers);
    slot.replaceChildren(...[notice].filter(Boolean));
    return notice !== null;
  };
  return slot;
}

function json(value) {
  return h("pre", { class: "json" }, JSON.stringify(value, null, 2));
}

function link(href, text, attrs) {
  return h("a", Object.assign({ href }, attrs || {}), text);
}

// ---- keeping a page true without a reload ---------------------------------------------------------

// How often a page whose answers left something out asks for them again. A store left out is tried
// again by a request that reads it (at most once per `[explorer] store_retry_seconds`), so asking is
// what brings it back; once it is read, the notice goes and what it holds joins the page.
const RECHECK_MS = 3000;

// A page drawn from its answers and kept true: `load` asks the API for them (an array), `draw` shows
// them. While `going(answers)` (a run under way) they are asked for again every `every` ms, and while
// they left something out every RECHECK_MS; the page is drawn again only when they changed, and
// nothing more is asked once they neither go on nor leave anything out. Returns `refresh`, which
// loads and draws now (the first time, or for a pager or a filter) and rejects when the load fails.
function keptPage(load, draw, options) {
  const going = (options && options.going) || (() => false);
  const every = (options && options.every) || 2000;
  let timer = null;
  let drawn = null;
  let latest = 0;
  // `own`: a refresh of its own, whose failure leaves the page as it is and tries again later.
  const refresh = async (own) => {
    clearTimeout(timer);
    timer = null;
    const mine = ++latest;
    let answers;
    try {
      answers = await load();
    } catch (e) {
      if (!own) throw e;
      if (mine === latest) timer = setTimeout(() => refresh(true), RECHECK_MS);
      return;
    }
    if (mine !== latest) return; // a newer refresh (a pager's) took over
    const text = JSON.stringify(answers);
    if (text !== drawn) {
      drawn = text;
      draw(answers);
    }
    const live = going(answers);
    if (live || warningsOf(answers).length) timer = setTimeout(() => refresh(true), live ? every : RECHECK_MS);
  };
  return () => refresh(false);
}

// ---- the API ------------------------------------------------------------------------------------

async function api(path, options) {
  const init = Object.assign({ headers: { Accept: "application/json" } }, options || {});
  if (init.body !== undefined) {
    init.method = init.method || "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(init.body);
  }
  const response = await fetch(`/api/v1${path}`, init);
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = text; }
  if (!response.ok) {
    const detail = data && data.detail !== undefined ? data.detail : text;
    const error = new Error(typeof detail === "string" ? detail : JSON.stringify(detail));
    error.status = response.status;
    throw error;
  }
  return data;
}

function objectUrl(url, download) {
  return `/api/v1/objects/content?object_url=${enc(url)}${download ? "&download=true" : ""}`;
}

// ---- a pager for enveloped lists ----------------------------------------------------------------

function pager(page, go) {
  const from = page.total ? page.offset + 1 : 0;
  const to = page.offset + page.items.length;
  return h("div", { class: "pager" },
    h("button", { disabled: page.offset === 0, onclick: () => go(Math.max(0, page.offset - page.limit)) }, "‹ Previous"),
    h("span", { class: "muted" }, ` ${from}–${to} of ${page.total} `),
    h("button", { disabled: !page.has_more, onclick: () => go(page.offset + page.limit) }, "Next ›"));
}

// ---- starting runs ------------------------------------------------------------------------------

async function startBundle(name, tasks, button) {
  button.disabled = true;
  try {
    const workflow = await api(`/bundles/${enc(name)}/run`, { body: { tasks } });
    location.href = `/runs/${enc(workflow.workflow_id)}`;
  } catch (e) {
    button.disabled = false;
    button.after(errorBox(e));
  }
}

async function startTask(taskId, button) {
  button.disabled = true;
  try {
    const started = await api(`/tasks/${enc(taskId)}/run`, { body: {} });
    location.href = `/runs/${enc(started.workflow_id)}`;
  } catch (e) {
    button.disabled = false;
    button.after(errorBox(e));
  }
}

// ---- views --------------------------------------------------------------------------------------

function instanceRows(items) {
  return items.map((i) => h("tr", { "data-instance": i.instance_id },
    h("td", {}, i.started_at_utc || i.created_at_utc || ""),
    h("td", {}, link(`/tasks/${enc(i.task_id)}`, i.task_id)),
    h("td", {}, badge(i.outcome)),
    h("td", {}, scoresText(i.scores)),
    h("td", {}, `${i.current_step ?? 0}/${i.total_steps ?? "?"}`),
    h("td", {}, link(`/instances/${enc(i.instance_id)}`, i.instance_id, { class: "mono" }))));
}

async function home() {
  let offset = 0;
  const load = () => Promise.all([
    api(`/task-instances?limit=20&offset=${offset}`),
    api("/workflows?limit=10"),
  ]);
  const draw = ([instances, workflows]) => {
    show(
      h("h1", {}, "Recent runs"),
      warningsNotice(instances),
      table(["Started", "Task", "Outcome", "Scores", "Steps", "Instance"], instanceRows(instances.items), { id: "recent-runs" }),
      pager(instances, (o) => { offset = o; refresh().catch((e) => show(errorBox(e))); }),
      h("h2", {}, "Runs started here"),
      table(["Started", "Bundle", "Tasks", "Status", ""], workflows.items.map((w) => h("tr", {},
        h("td", {}, w.created_at_utc),
        h("td", {}, w.bundle),
        h("td", {}, (w.tasks || []).join(", ") || "all"),
        h("td", {}, badge(w.status)),
        h("td", {}, link(`/runs/${enc(w.workflow_id)}`, "open"))))),
      h("p", {}, link("/bundles", "Run a bundle →")));
  };
  const going = ([instances, workflows]) =>
    instances.items.some((i) => i.outcome === "running") || workflows.items.some((w) => !w.done);
  const refresh = keptPage(load, draw, { going });
  await refresh();
}

async function bundles() {
  const page = await api("/bundles?limit=500");
  show(h("h1", {}, "Bundles"),
    h("p", { class: "muted" }, "Every bundle agent-env run can name. A run here is the same run as agent-env run NAME."),
    ...page.items.map((b) => h("section", { class: "card", "data-bundle": b.name },
      h("h2", {}, b.name, " ", h("span", { class: "muted" }, `${b.package} ${b.package_version}`)),
      b.description ? h("p", {}, b.description) : null,
      h("p", { class: "muted" }, b.folder),
      b.problem ? h("p", { class: "error" }, b.problem) : null,
      h("button", { class: "primary", id: `run-bundle-${b.name}`, disabled: !!b.problem,
        onclick: (ev) => startBundle(b.name, [], ev.target) }, "Run all tasks"),
      table(["Task", "Steps", "Id", ""], (b.tasks || []).map((t) => h("tr", {},
        h("td", {}, t.name),
        h("td", {}, t.steps),
        h("td", {}, link(`/tasks/${enc(t.id)}`, t.id, { class: "mono" })),
        h("td", {}, h("button", { "data-run-task": `${b.name}/${t.name}`,
          onclick: (ev) => startBundle(b.name, [t.name], ev.target) }, "Run"))))),
      (b.evals || []).length ? h("p", { class: "muted" }, `Evals: ${b.evals.map((e) => e.name).join(", ")}`) : null)));
}

async function tasks() {
  await keptPage(() => Promise.all([api("/tasks?limit=500&sort_by=id&descending=false")]), drawTasks)();
}

function drawTasks([page]) {
  show(h("h1", {}, "Tasks"),
    warningsNotice(page),
    h("p", { class: "muted" }, "Tasks as the runs stored them (the newest version of each)."),
    table(["Task", "Version", "Bundle", "Written"], page.items.map((t) => h("tr", {},
      h("td", {}, link(`/tasks/${enc(t.id)}`, t.id, { class: "mono" })),
      h("td", {}, `v${t.version}`),
      h("td", {}, t.bundle || ""),
      h("td", {}, t.created_at_utc || "")))));
}

// The Task page draws itself again while a run of the task is under way (its groups' counts so far).
async function task(id) {
  const load = () => Promise.all([
    api(`/tasks/${enc(id)}`),
    api(`/tasks/${enc(id)}/versions`),
    api(`/tasks/${enc(id)}/runs?limit=50`),
    api(`/tasks/${enc(id)}/run-groups?limit=20`),
  ]);
  const going = ([, , runs, groups]) => runs.items.some((i) => i.outcome === "running")
    || groups.items.some((g) => g.run_live || g.running > 0);
  await keptPage(load, (answers) => drawTask(id, answers), { going })();
}

function drawTask(id, [doc, versions, runs, groups]) {
  show(h("h1", {}, doc.name || id, " ", h("span", { class: "muted" }, `v${doc.version}`)),
    warningsNotice(versions, runs, groups),
    h("p", { class: "mono" }, id),
    h("button", { class: "primary", id: "run-task", onclick: (ev) => startTask(id, ev.target) }, "Run this task"),
    h("h2", {}, "Steps"),
    table(["Step", "Type", "Fails the task"], (doc.steps || []).map((s) => h("tr", {},
      h("td", {}, s.id), h("td", {}, s.type), h("td", {}, s.fail_task_on_error === false ? "no" : "yes")))),
    h("h2", {}, "Runs"),
    table(["Started", "Outcome", "Scores", "Steps", "Instance"], runs.items.map((i) => h("tr", {},
      h("td", {}, i.started_at_utc || i.created_at_utc), h("td", {}, badge(i.outcome)), h("td", {}, scoresText(i.scores)),
      h("td", {}, `${i.current_step ?? 0}/${i.total_steps ?? "?"}`),
      h("td", {}, link(`/instances/${enc(i.instance_id)}`, i.instance_id, { class: "mono" }))))),
    h("h2", {}, "Run groups"),
    table(["Group", "Runs", "Outcomes", "Complete"], groups.items.map((g) => h("tr", { "data-run-group": g.run_group_id },
      // A group whose run is still going here has no total yet: the runs recorded so far.
      h("td", { class: "mono" }, g.run_group_id), h("td", { class: "group-runs" }, g.total ?? `${g.recorded} so far`),
      h("td", { class: "group-outcomes" }, Object.entries(g.outcomes || {}).map(([k, v]) => `${v} ${k}`).join(", "),
        (g.errors || []).map((e) => h("div", { class: "error-text" }, e))),
      h("td", { class: "group-complete" }, g.complete ? "yes" : g.run_live ? "no (its run is going)" : "no"))), { id: "run-groups" }),
    h("h2", {}, "Versions"),
    table(["Version", "Written"], versions.items.map((v) => h("tr", {},
      h("td", {}, `v${v.version}`), h("td", {}, v.created_at_utc || "")))));
}

function stepsTable(progress) {
  return table(["Step", "Type", "State", "Took", "Error"], (progress.steps || []).map((s) => h("tr", { "data-step": s.step_id },
    h("td", {}, s.step_id), h("td", {}, s.type || ""), h("td", {}, badge(s.state)),
    h("td", {}, seconds(s.duration_seconds)), h("td", { class: "error-text" }, s.error || ""))), { class: "steps" });
}

function progressBar(progress) {
  const percent = Math.round((progress.fraction || 0) * 100);
  return h("div", { class: "progress", role: "progressbar", "aria-valuenow": percent, "aria-valuemin": 0, "aria-valuemax": 100 },
    h("div", { class: "bar", style: `width: ${percent}%` }),
    h("span", {}, `${progress.current_step}/${progress.total_steps} steps`));
}

async function run(id) {
  let since = 0;
  const log = h("pre", { class: "log", id: "run-log" });
  const status = h("span", { id: "run-status" });
  const instances = h("div", { id: "run-instances" });
  const cancel = h("button", { id: "cancel-run", onclick: async () => {
    cancel.disabled = true;
    try { await api(`/workflows/${enc(id)}/cancel`, { method: "POST" }); } catch (e) { cancel.after(errorBox(e)); }
  } }, "Cancel");
  const header = h("p", { class: "muted" });
  const notice = noticeSlot();
  show(h("h1", {}, "Run ", status), notice, header, cancel, h("h2", {}, "Tasks"), instances, h("h2", {}, "Output"), log);
  const tick = async () => {
    const w = await api(`/workflows/${enc(id)}?since=${since}`);
    status.replaceChildren(badge(w.status));
    header.replaceChildren(`${w.bundle}${(w.tasks || []).length ? ` (${w.tasks.join(", ")})` : ""} · run group `,
      h("span", { class: "mono" }, w.run_group_id), ` · started ${w.created_at_utc}`,
      w.finished_at_utc ? ` · finished ${w.finished_at_utc}` : "");
    if (w.error) header.append(h("p", { class: "error" }, w.error));
    cancel.hidden = w.done;
    for (const line of w.lines) {
      log.append(h("span", { class: `line-${line.stream}` }, line.text), "\n");
      since = line.seq + 1;
    }
    const answers = await Promise.all((w.instances || []).map((i) => api(`/task-instances/${enc(i.instance_id)}`)));
    const cards = (w.instances || []).map((i, n) => {
      const full = answers[n];
      return h("section", { class: "card", "data-instance": i.instance_id },
        h("h3", {}, link(`/instances/${enc(i.instance_id)}`, i.task_id, { class: "instance-link" }), " ",
          badge(full.summary.outcome)),
        full.summary.warning ? h("p", { class: "error-text run-warning" }, full.summary.warning) : null,
        progressBar(full.progress),
        h("p", {}, "Scores: ", scoresText(full.summary.scores)),
        stepsTable(full.progress));
    });
    const warned = notice.update(...answers);
    instances.replaceChildren(...(cards.length ? cards : [h("p", { class: "muted" }, w.done ? "No task ran." : "Starting…")]));
    // Once the run is done, asked again only while its answers leave something out.
    if (!w.done) setTimeout(() => tick().catch((e) => header.append(errorBox(e))), 500);
    else if (warned) setTimeout(again, RECHECK_MS);
  };
  const again = () => tick().catch(() => setTimeout(again, RECHECK_MS));
  await tick();
}

// The Task instance page draws itself again while the instance runs.
async function instance(id) {
  const load = async () => {
    const data = await api(`/task-instances/${enc(id)}`);
    const doc = data.instance;
    const taskDoc = await api(`/tasks/${enc(doc.task_id)}?version=${doc.task_version}`).catch(() => null);
    return [data, taskDoc];
  };
  const going = ([data]) => data.summary.outcome === "running";
  await keptPage(load, (answers) => drawInstance(id, answers), { going, every: 1000 })();
}

function drawInstance(id, [data, taskDoc]) {
  const doc = data.instance;
  const metadata = (doc.context && doc.context.metadata) || {};
  const verifications = metadata.verifications || {};
  const artifactIds = [];
  for (const step of (taskDoc && taskDoc.steps) || []) {
    if (step.artifact_id) artifactIds.push(step.artifact_id);
  }
  show(h("h1", {}, "Task instance ", badge(data.summary.outcome)),
    warningsNotice(data),
    h("p", { class: "mono" }, id),
    h("dl", {},
      h("dt", {}, "Task"), h("dd", {}, link(`/tasks/${enc(doc.task_id)}`, `${doc.task_id} v${doc.task_version}`)),
      h("dt", {}, "Status"), h("dd", {}, doc.status),
      h("dt", {}, "Scores"), h("dd", { id: "instance-scores" }, scoresText(data.summary.scores)),
      h("dt", {}, "Started"), h("dd", {}, doc.started_at_utc || doc.created_at_utc || ""),
      h("dt", {}, doc.status === "completed" ? "Completed" : "Ended"), h("dd", {}, doc.ended_at_utc || doc.completed_at_utc || "—"),
      h("dt", {}, "Run group"), h("dd", { class: "mono" }, metadata.run_group_id || ""),
      data.workflow ? [h("dt", {}, "Started here"), h("dd", {}, link(`/runs/${enc(data.workflow.workflow_id)}`, "the run's page"))] : null,
      doc.error ? [h("dt", {}, "Error"), h("dd", { class: "error-text" }, doc.error)] : null,
      data.summary.warning ? [h("dt", {}, "Warning"), h("dd", { class: "error-text", id: "instance-warning" }, data.summary.warning)] : null),
    progressBar(data.progress),
    h("h2", {}, "Steps"), stepsTable(data.progress),
    h("h2", {}, "Verifications"),
    ...Object.entries(verifications).map(([vid, v]) => h("section", { class: "card" },
      h("h3", {}, vid, " ", h("span", { class: "muted" }, `score ${v.score}`)),
      // An unnamed criterion is numbered from 1, by its index when it has one, else by its place.
      table(["Criterion", "Result", "Score", "Why"], (v.results || []).map((r, place) => h("tr", {},
        h("td", { class: "criterion" }, r.criterion ?? `#${(Number.isInteger(r.criterion_index) ? r.criterion_index : place) + 1}`),
        h("td", {}, badge(criterionWord(r))),
        h("td", {}, r.score), h("td", {}, r.justification || "")))))),
    artifactIds.length ? [h("h2", {}, "Artifacts it used"),
      h("ul", {}, artifactIds.map((a) => h("li", {}, link(`/artifacts/${enc(a)}`, a, { class: "mono artifact-link" }))))] : null,
    h("details", {}, h("summary", {}, "The instance document"), json(doc)));
}

async function artifacts() {
  let offset = 0;
  let filter = "";
  const body = h("div");
  const notice = noticeSlot();
  const input = h("input", { type: "search", placeholder: "Filter by id", "aria-label": "Filter by id" });
  const load = () => Promise.all([
    api(`/artifacts?limit=50&offset=${offset}&sort_by=id&descending=false${filter ? `&id=${enc(filter)}` : ""}`),
  ]);
  const draw = ([page]) => {
    notice.update(page);
    body.replaceChildren(
      table(["Artifact", "Type", "Version", "Files", "Written"], page.items.map((a) => h("tr", {},
        h("td", {}, link(`/artifacts/${enc(a.id)}`, a.id, { class: "mono" })),
        h("td", {}, a.type || ""), h("td", {}, `v${a.version}`),
        h("td", {}, (a.files || []).length), h("td", {}, a.created_at_utc || "")))),
      pager(page, (o) => { offset = o; refresh().catch((e) => body.replaceChildren(errorBox(e))); }));
  };
  const refresh = keptPage(load, draw);
  input.addEventListener("change", () => { filter = input.value.trim(); offset = 0; refresh().catch((e) => body.replaceChildren(errorBox(e))); });
  show(h("h1", {}, "Artifacts"), notice, input, body);
  await refresh();
}

async function artifact(id) {
  const params = new URLSearchParams(location.search);
  const version = params.get("version");
  const load = () => Promise.all([
    api(`/artifacts/${enc(id)}${version ? `?version=${enc(version)}` : ""}`),
    api(`/artifacts/${enc(id)}/versions`),
  ]);
  // The file on view stays when the page is drawn again.
  const preview = h("div", { id: "preview" });
  await keptPage(load, (answers) => drawArtifact(id, answers, preview))();
}

function drawArtifact(id, [doc, versions], preview) {
  const view = (file) => {
    preview.replaceChildren(h("h2", {}, file.path),
      // Scripts run, as the object's own sandbox CSP lets them (a stored HTML replay's player), in
      // an opaque origin: no allow-same-origin, so they reach neither the explorer nor its API.
      h("iframe", { src: objectUrl(file.object_url), sandbox: "allow-scripts", title: file.path, class: "preview" }));
  };
  show(h("h1", {}, doc.name || id, " ", h("span", { class: "muted" }, `v${doc.version} · ${doc.type}`)),
    warningsNotice(versions),
    h("p", { class: "mono" }, id),
    h("h2", {}, "Files"),
    table(["File", "Size", "SHA-256", ""], (doc.files || []).map((f) => h("tr", { "data-file": f.path },
      h("td", {}, f.path), h("td", {}, f.size ?? ""), h("td", { class: "mono small" }, (f.sha256 || "").slice(0, 16)),
      h("td", {},
        h("button", { "data-view-file": f.path, onclick: () => view(f) }, "View"), " ",
        link(objectUrl(f.object_url, true), "Download"), " ",
        link(objectUrl(f.object_url), "Open", { target: "_blank", rel: "noopener" }))))),
    preview,
    h("h2", {}, "Versions"),
    table(["Version", "Written"], versions.items.map((v) => h("tr", {},
      h("td", {}, link(`/artifacts/${enc(id)}?version=${v.version}`, `v${v.version}`)), h("td", {}, v.created_at_utc || "")))),
    h("details", {}, h("summary", {}, "The artifact document"), json(doc)));
}

function contributionRows(plugin) {
  return (plugin.contributions || []).map((c) => h("tr", { "data-contribution": `${c.group}:${c.name}` },
    h("td", {}, c.group), h("td", {}, c.name), h("td", {}, badge(c.status)),
    h("td", {}, c.code || ""), h("td", { class: "reason" }, c.reason || "")));
}

async function plugins() {
  const data = await api("/plugin-report");
  const rows = data.report.plugins || [];
  show(h("h1", {}, "Plugins"),
    h("p", { class: "muted" }, "The plugin report, as agent-env plugin list gives it: what each package contributes and whether it took effect."),
    ...(data.warnings || []).map((w) => h("p", { class: "warning" }, w)),
    ...rows.map((p) => h("section", { class: "card", "data-plugin": p.name },
      h("h2", {}, link(`/plugins/${enc(p.name)}`, p.name), " ", h("span", { class: "muted" }, p.version)),
      table(["Group", "Name", "Status", "Code", "Reason"], contributionRows(p)))),
    h("h2", {}, "Explorer plugins"),
    table(["Page", "Package", "Routes", "Problems"], explorerPluginRows(await explorerPlugins), { id: "explorer-plugins" }),
    h("details", {}, h("summary", {}, "As text"), h("pre", { id: "plugin-text" }, data.text)));
}

// Explorer plugins' pages join the navigation; the Plugins page lists what each serves or why not.
async function explorerNav() {
  const nav = document.getElementById("plugin-nav");
  const data = await api("/explorer-plugins");
  for (const p of data.plugins || []) {
    if (!p.page || p.error) continue;
    const here = location.pathname === p.page;
    nav.append(h("a", { href: p.page, "data-nav": "explorer-plugin", "data-plugin": p.name, "aria-current": here ? "page" : null }, p.title || p.name));
  }
  return data.plugins || [];
}

function explorerPluginRows(list) {
  return list.map((p) => h("tr", { "data-explorer-plugin": p.name },
    h("td", {}, p.page && !p.error ? link(p.page, p.title || p.name) : p.name),
    h("td", {}, p.package || ""),
    h("td", {}, (p.routes || []).map((r) => `${r.method} ${r.path}`).join("\n")),
    h("td", {}, [p.error, ...(p.not_served || [])].filter(Boolean).join("\n"))));
}

async function plugin(name) {
  const data = await api(`/plugin-report/${enc(name)}`);
  show(h("h1", {}, data.plugin.name, " ", h("span", { class: "muted" }, data.plugin.version)),
    table(["Group", "Name", "Status", "Code", "Reason"], contributionRows(data.plugin)),
    h("h2", {}, "Its process"),
    data.process ? json(data.process) : h("p", { class: "muted" }, "Not started (nothing it contributes needed a process)."));
}

async function config() {
  const data = await api("/config");
  show(h("h1", {}, "Config"),
    h("p", { class: "muted" }, "What agent-env config show prints; secrets are masked."),
    h("pre", { id: "config-text" }, data.text));
}

const views = { home, bundles, tasks, task, run, instance, artifacts, artifact, plugins, plugin, config };

let explorerPlugins = Promise.resolve([]);

async function boot() {
  explorerPlugins = explorerNav().catch(() => []);
  const view = main.dataset.view;
  const id = main.dataset.id;
  if (!views[view]) {
    show(h("h1", {}, "Not found"), h("p", {}, "Nothing is served at this address. ", link("/", "Home")));
    return;
  }
  const attempt = async () => {
    try {
      await views[view](id);
    } catch (e) {
      show(h("h1", {}, document.title.split(" · ")[0]), errorBox(e));
      // Not found while a store is left out, it may be in that store: asked for again until it is read.
      if (e.status === 404 && String(e.message).includes("it may be in the store left out")) setTimeout(attempt, RECHECK_MS);
    }
  };
  await attempt();
}

boot();
