// agent-env explorer: fills the page the server sent from the REST API under /api/v1.
// Plain JavaScript, no build step, no network but this server. Everything shown is set as text
// (never as HTML), so stored data cannot inject markup.
"use strict";

const main = document.getElementById("main");
const enc = encodeURIComponent;

// How many runs go at once (the explorer's run slots); the others wait for a free one.
const RUN_SLOTS = 4;

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

// What names an element across redraws: its id, else what it is and where it leads (a details by
// its summary), so the one drawn again in its place is found.
function stateKey(el) {
  if (el.id) return `#${el.id}`;
  const marks = ["href", "aria-label", "data-run-task", "data-view-file", "data-key"].map((a) => el.getAttribute(a) || "");
  const summary = el.tagName === "DETAILS" ? el.querySelector("summary") : null;
  const text = (summary || el.tagName !== "DETAILS" ? (summary || el).textContent : "") || "";
  return `${el.tagName}|${marks.join("|")}|${text.trim().slice(0, 120)}`;
}

// Replaces what `container` holds, keeping what a person did to it: the element that had the
// keyboard focus gets it back, and a <details> they opened stays open.
function replaceKeeping(container, children) {
  const open = new Set([...container.querySelectorAll("details[open]")].map(stateKey));
  const active = document.activeElement;
  const focused = active && active !== document.body && container.contains(active) ? stateKey(active) : null;
  const pagerOf = focused && active.closest("[data-pager]") ? active.closest("[data-pager]").dataset.pager : null;
  container.replaceChildren(...children);
  for (const details of container.querySelectorAll("details")) {
    if (open.has(stateKey(details))) details.open = true;
  }
  if (focused) {
    const again = [...container.querySelectorAll("a[href], button, input, select, textarea, summary, [tabindex]")]
      .find((el) => stateKey(el) === focused);
    if (again && !again.disabled) again.focus({ preventScroll: true });
    else if (pagerOf !== null) focusPager(container, pagerOf);
  }
}

// The focus a pager's button had, once that button is disabled (the list's first or last page): the
// pager's other button, else the pager itself.
function focusPager(container, what) {
  const pager = [...container.querySelectorAll("[data-pager]")].find((el) => el.dataset.pager === what);
  if (!pager) return;
  const other = [...pager.querySelectorAll("button")].find((b) => !b.disabled);
  if (other) {
    other.focus({ preventScroll: true });
  } else {
    pager.setAttribute("tabindex", "-1");
    pager.focus({ preventScroll: true });
  }
}

function show(...children) {
  replaceKeeping(main, children.flat(2).filter((c) => c !== null && c !== undefined && c !== false));
}

// Text for a screen reader only (a column header with nothing to show, say).
function hidden(text) {
  return h("span", { class: "visually-hidden" }, text);
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

// A table in a box of its own that scrolls sideways when the table is wider than the page (a
// phone), so the page itself never does. A header is text, or an element (`hidden(…)`).
// `attrs.empty` is what an empty table says (a filtered list's "Nothing matches").
// `attrs.page`, the list page the rows are, makes a page past the list's end say so.
function table(headers, rows, attrs) {
  const own = Object.assign({}, attrs || {});
  const empty = own.page && pastEnd(own.page) ? "(past the end of the list: see below)" : own.empty || "Nothing yet.";
  delete own.empty;
  delete own.page;
  if (headers.length >= 4) own.class = own.class ? `${own.class} wide` : "wide";
  return h("div", { class: "table-wrap" }, h("table", own,
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: headers.length, class: "muted" }, empty)))));
}

function scoresText(scores) {
  const entries = Object.entries(scores || {});
  return entries.length ? entries.map(([k, v]) => `${k}: ${v}`).join(", ") : "—";
}

// A score as a person reads it: up to three decimals, no trailing zeros ("0.5", "1").
function scoreNumber(n) {
  return typeof n === "number" && Number.isFinite(n) ? String(Number(n.toFixed(3))) : "—";
}

// A group's outcomes counted: "2 passed, 1 failed".
function outcomesText(outcomes) {
  return Object.entries(outcomes || {}).map(([k, v]) => `${v} ${k}`).join(", ");
}

// One task's scores' spread in a group (the API's `score_spread`) in a line: "hello: mean 0.5 (0–1)".
function spreadText(spread) {
  const entries = Object.entries(spread || {});
  if (!entries.length) return "—";
  return entries.map(([k, s]) => `${k}: mean ${scoreNumber(s.mean)} (${scoreNumber(s.min)}–${scoreNumber(s.max)})`).join(", ");
}

// A size as agent-env says it in a terminal: bytes below 1 KiB, else one decimal of the largest
// binary unit (1024) below it ("1.5 KiB").
function byteSize(bytes) {
  const units = ["KiB", "MiB", "GiB", "TiB", "PiB"];
  if (bytes < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  // As shown, to a tenth: 1048575 bytes is 1.0 MiB, not 1024.0 KiB.
  while (Math.round(value * 10) / 10 >= 1024 && unit + 1 < units.length) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

// That size as an element whose title (and `data-bytes`) holds the exact count; nothing for a size
// not known.
function sizeOf(bytes) {
  if (typeof bytes !== "number" || !Number.isFinite(bytes) || bytes < 0) return "";
  return h("span", { class: "size", title: `${bytes} byte${bytes === 1 ? "" : "s"}`, "data-bytes": bytes }, byteSize(bytes));
}

// A length of time in one format wherever it is shown: milliseconds below a second ("23 ms"), a
// tenth of a second below a minute ("25.0 s"), minutes and seconds above ("2 min 5 s"); "" for none.
function duration(total) {
  if (typeof total !== "number" || !Number.isFinite(total) || total < 0) return "";
  if (total < 1) return `${Math.round(total * 1000)} ms`;
  if (total < 60) return `${total.toFixed(1)} s`;
  const minutes = Math.floor(total / 60);
  return `${minutes} min ${Math.round(total - minutes * 60)} s`;
}

// How long a run took, from its start to its end (both as the API gives them); "" until it ended.
function tookText(started, ended) {
  const from = Date.parse(zoned(started));
  const to = Date.parse(zoned(ended));
  if (!Number.isFinite(from) || !Number.isFinite(to) || to < from) return "";
  return duration((to - from) / 1000);
}

// A recorded time in the form Date.parse reads, as UTC, as every time agent-env records is: RFC 3339
// with its zone or without, or `2026-12-07 04:18 UTC` (an instance's minute).
function zoned(value) {
  const text = String(value || "").trim().replace(/^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d(?::\d\d(?:\.\d+)?)?)\s*UTC$/i, "$1T$2Z");
  return text && !/(Z|[+-]\d\d:?\d\d)$/i.test(text) ? `${text}Z` : text;
}

// A recorded time as the pages show it: "2026-12-07 04:18:27 UTC" (to the minute for one recorded
// to the minute), on one line, in a <time> whose title holds the value as recorded; "" for none, and
// the text as it is for one that does not read as a time.
function when(value) {
  if (!value) return "";
  const ms = Date.parse(zoned(value));
  if (!Number.isFinite(ms)) return String(value);
  const iso = new Date(ms).toISOString();
  const toSeconds = /\d\d:\d\d:\d\d/.test(String(value));
  return h("time", { datetime: iso, title: String(value), class: "when" },
    `${iso.slice(0, 10)} ${iso.slice(11, toSeconds ? 19 : 16)} UTC`);
}

// That time as text, for a sentence or a label.
function whenText(value) {
  const shown = when(value);
  return typeof shown === "string" ? shown : shown.textContent;
}

function errorBox(error) {
  return h("p", { class: "error", role: "alert" }, String(error.message || error));
}

// The error of what `el` does, shown after it: one box, the newest, however often it fails.
function errorAfter(el, error) {
  if (el.errorBox) el.errorBox.remove();
  el.errorBox = errorBox(error);
  el.after(el.errorBox);
}

function clearErrorAfter(el) {
  if (el.errorBox) el.errorBox.remove();
  el.errorBox = null;
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

// ---- one page load, and the next ------------------------------------------------------------------

// A page the browser restores from its back/forward cache (Back after starting a run) is drawn again
// from fresh answers: each drawing belongs to a generation, and what an older one scheduled stops.
let generation = 0;

// Whether the drawing that called it is still the page's.
function current() {
  const mine = generation;
  return () => mine === generation;
}

// ---- staying in touch with the explorer -----------------------------------------------------------

// While the explorer does not answer (stopped, restarting), one notice says so in place of the
// browser's own words, the health route is asked again with a growing pause, and what waited for it
// (each page's next update) goes on once it answers.
const contact = (() => {
  const slot = h("div", { class: "contact-slot", id: "contact" });
  main.before(slot);
  let lost = false;
  let tries = 0;
  let probe = null;
  let waiting = [];
  const pause = () => Math.min(500 * 2 ** tries, 8000);
  const ask = async () => {
    probe = null;
    try {
      const response = await fetch("/api/v1/health", { headers: { Accept: "application/json" }, cache: "no-store" });
      await response.text();
      back();
      return;
    } catch (_) {
      // Still away.
    }
    tries += 1;
    if (lost) probe = setTimeout(ask, pause());
  };
  function back() {
    if (!lost) return;
    lost = false;
    clearTimeout(probe);
    probe = null;
    slot.replaceChildren();
    const then = waiting;
    waiting = [];
    for (const go of then) go();
  }
  return {
    lose() {
      if (lost) return;
      lost = true;
      tries = 0;
      slot.replaceChildren(h("div", { class: "warning notice", role: "status", id: "lost-contact" },
        h("p", {}, `Lost contact with the explorer at ${location.origin}; retrying…`)));
      probe = setTimeout(ask, pause());
    },
    back,
    isLost: () => lost,
    // `go` runs once the explorer answers again (at once if it does now).
    whenBack(go) {
      if (lost) waiting.push(go);
      else setTimeout(go, 0);
    },
    // A page restored from the cache starts afresh: its next request says whether it is lost.
    forget() {
      lost = false;
      clearTimeout(probe);
      probe = null;
      waiting = [];
      slot.replaceChildren();
    },
  };
})();

// ---- keeping a page true without a reload ---------------------------------------------------------

// How often a page whose answers left something out asks for them again. A store left out is tried
// again by a request that reads it (at most once per `[explorer] store_retry_seconds`), so asking is
// what brings it back; once it is read, the notice goes and what it holds joins the page.
const RECHECK_MS = 3000;

// A page drawn from its answers and kept true: `load` asks the API for them (an array), `draw` shows
// them. While `going(answers)` (a run under way) they are asked for again every `every` ms, and while
// they left something out every RECHECK_MS; the page is drawn again only when they changed, and
// nothing more is asked once they neither go on nor leave anything out. While the explorer does not
// answer, the page stays as it is and is asked for again once it does. Returns `refresh`, which loads
// and draws now (the first time, or for a pager or a filter) and rejects when the load fails (but for
// lost contact, which the notice says).
function keptPage(load, draw, options) {
  const going = (options && options.going) || (() => false);
  const every = (options && options.every) || 2000;
  const alive = current();
  let timer = null;
  let drawn = null;
  let latest = 0;
  const later = (ms) => {
    if (alive()) timer = setTimeout(() => refresh(true), ms);
  };
  // `own`: a refresh of its own, whose failure leaves the page as it is and tries again later.
  const refresh = async (own) => {
    clearTimeout(timer);
    timer = null;
    if (!alive()) return;
    const mine = ++latest;
    let answers;
    try {
      answers = await load();
    } catch (e) {
      if (mine !== latest || !alive()) return;
      if (e.lost) {
        contact.whenBack(() => refresh(true));
        return;
      }
      if (!own) throw e;
      later(RECHECK_MS);
      return;
    }
    if (mine !== latest || !alive()) return; // a newer refresh (a pager's) took over
    const text = JSON.stringify(answers);
    if (text !== drawn) {
      drawn = text;
      draw(answers);
    }
    const live = going(answers);
    if (live || warningsOf(answers).length) later(live ? every : RECHECK_MS);
  };
  return () => refresh(false);
}

// ---- the API ------------------------------------------------------------------------------------

// An error for a request the explorer never answered.
function lostError() {
  const error = new Error(`Lost contact with the explorer at ${location.origin}`);
  error.lost = true;
  return error;
}

async function api(path, options) {
  const init = Object.assign({ headers: { Accept: "application/json" } }, options || {});
  if (init.body !== undefined) {
    init.method = init.method || "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(init.body);
  }
  let response;
  let text;
  try {
    response = await fetch(`/api/v1${path}`, init);
    text = await response.text();
  } catch (_) {
    contact.lose();
    throw lostError();
  }
  contact.back();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = text; }
  if (!response.ok) {
    const detail = data && data.detail !== undefined ? data.detail : text;
    const error = new Error(detailText(detail));
    error.status = response.status;
    error.detail = detail;
    throw error;
  }
  return data;
}

// An error answer's `detail` in words: a string as it is; a 422's list of problems as
// "query version: msg; …" (each problem's place and message), not as raw JSON.
function detailText(detail) {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    const said = detail.map((p) => {
      const place = Array.isArray(p && p.loc) ? p.loc.join(" ") : "";
      const msg = p && typeof p.msg === "string" ? p.msg : JSON.stringify(p);
      return place ? `${place}: ${msg}` : msg;
    });
    if (said.length) return said.join("; ");
  }
  return JSON.stringify(detail);
}

function objectUrl(url, download) {
  return `/api/v1/objects/content?object_url=${enc(url)}${download ? "&download=true" : ""}`;
}

// ---- paging enveloped lists ---------------------------------------------------------------------

// What the page's address asked for that the page does not take (`per_page=0`, `status=bogus`),
// each said once, with what the page shows instead: a notice under the page's title.
const queryNotes = new Set();

// A place for that notice; `update` shows the notes so far (one found as the page loads, too).
function queryNoteSlot() {
  const slot = h("div", { class: "query-slot" });
  slot.update = () => slot.replaceChildren(...(queryNotes.size
    ? [h("div", { class: "warning notice", id: "query-notice", role: "status" }, [...queryNotes].map((n) => h("p", {}, n)))]
    : []));
  slot.update();
  return slot;
}

// How many rows a list shows at once: `fallback`, or the page address's `per_page` (1 to 500); a
// value outside that is noted and the list shows `fallback`.
function perPage(fallback) {
  const given = new URLSearchParams(location.search).get("per_page");
  if (given === null) return fallback;
  const asked = Number(given);
  if (given.trim() !== "" && Number.isInteger(asked) && asked >= 1 && asked <= 500) return asked;
  queryNotes.add(`per_page takes a whole number from 1 to 500, not '${given}': each list shows its usual number of rows a page.`);
  return fallback;
}

// ---- a list's place in the page address -----------------------------------------------------------

// A list's page and filters live in the page's address (`?page=2&id=team`; a page with two lists
// names each one's page: `runs_page`, `groups_page`), so a reload shows the same rows, Back returns
// to them, and the address can be shared. Turning a page adds a history entry (Back turns it back);
// a filter changes the address in place, so typing leaves no trail of entries.

// The address's value of `key`, "" when it has none.
function queryValue(key) {
  return new URLSearchParams(location.search).get(key) || "";
}

// The offset of the page of `per` rows the address's `key` asks for (a page number from 1); a value
// that is no page number is noted under the title, and the first page shown.
function offsetFrom(key, per) {
  const given = queryValue(key);
  const n = Number(given);
  if (given.trim() !== "" && !(Number.isInteger(n) && n >= 1)) {
    queryNotes.add(`${key} takes a page number, a whole number from 1, not '${given}': showing the first page.`);
    return 0;
  }
  return n > 1 ? (n - 1) * per : 0;
}

// The page number to write for `offset`: null (no key) for the first page.
function pageNumber(offset, per) {
  const n = Math.floor(offset / per) + 1;
  return n > 1 ? n : null;
}

// Writes `changes` ({key: value}; "" or null removes the key) into the address, keeping the others
// (`per_page`): as a new history entry when `push`, else in place.
function setQuery(changes, push) {
  const params = new URLSearchParams(location.search);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null || value === undefined || value === "") params.delete(key);
    else params.set(key, String(value));
  }
  const query = params.toString();
  const url = `${location.pathname}${query ? `?${query}` : ""}${location.hash}`;
  if (url === `${location.pathname}${location.search}${location.hash}`) return;
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
}

// A pager's `go` for a list whose page is the address's `key`: writes the page there (a history
// entry) and loads it.
function turnPage(key, per, moveTo) {
  return (offset) => {
    setQuery({ [key]: pageNumber(offset, per) }, true);
    moveTo(offset);
  };
}

// How long typing pauses before a filter applies what was typed.
const FILTER_PAUSE_MS = 300;

// A search box for a list's filter, showing `value` (the address's); once typing pauses, or on
// Enter, `apply` gets its trimmed value when that changed.
function filterBox(label, value, apply) {
  const input = h("input", { type: "search", placeholder: label, "aria-label": label, value: value || null });
  let applied = value || "";
  let timer = null;
  const settle = () => {
    clearTimeout(timer);
    timer = null;
    const now = input.value.trim();
    if (now === applied) return;
    applied = now;
    apply(now);
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(settle, FILTER_PAUSE_MS);
  });
  input.addEventListener("change", settle);
  return input;
}

// Whether `page` lies past the end of its list (an address's page number from when it was longer).
function pastEnd(page) {
  return page.offset > 0 && !page.items.length;
}

// Which rows of `what` are shown, of how many, and buttons to the others. A list that one page shows
// whole says how much it holds ("showing 1–9 of 9"; nothing for an empty one, whose table says so); a
// page past the list's end says so, with a button to the list's last page.
function pager(page, go, what) {
  const count = (text) => h("span", { class: "muted pager-count" }, text);
  if (page.offset === 0 && !page.has_more) {
    if (!page.items.length) return null;
    const total = typeof page.total === "number" ? page.total : page.items.length;
    return h("div", { class: "pager", "data-pager": what }, count(`showing 1–${page.items.length} of ${total}`));
  }
  if (pastEnd(page)) {
    const known = typeof page.total === "number";
    const last = known && page.total > 0 ? Math.floor((page.total - 1) / page.limit) * page.limit : 0;
    const pages = known ? Math.max(1, Math.ceil(page.total / page.limit)) : null;
    const holds = !known ? "the list ends before it" : page.total === 0 ? "the list is empty"
      : `the list holds ${page.total}, ${pages === 1 ? "on one page" : `on ${pages} pages`}`;
    const said = `No ${what} on this page: ${holds}.`;
    return h("div", { class: "pager past-end", role: "group", "aria-label": `Pages of ${what}`, "data-pager": what },
      count(said),
      h("button", { "aria-label": `The last page of ${what}`, onclick: () => go(last) },
        known && pages > 1 ? `Go to the last page (${pages})` : "Go to the first page"));
  }
  const from = page.items.length ? page.offset + 1 : 0;
  const to = page.offset + page.items.length;
  const of = page.total === null || page.total === undefined ? "more" : page.total;
  return h("div", { class: "pager", role: "group", "aria-label": `Pages of ${what}`, "data-pager": what },
    h("button", { disabled: page.offset === 0, "aria-label": `Previous page of ${what}`,
      onclick: () => go(Math.max(0, page.offset - page.limit)) }, "‹ Previous"),
    h("span", { class: "muted pager-count" }, `showing ${from}–${to} of ${of}`),
    h("button", { disabled: !page.has_more, "aria-label": `Next page of ${what}`,
      onclick: () => go(page.offset + page.limit) }, "Next ›"));
}

// For a list shown without a pager (a version history): says so when it is cut.
function cutNote(page, what) {
  if (!page.has_more) return null;
  return h("p", { class: "muted cut-note" }, `showing the ${page.items.length} newest ${what} of ${page.total}`);
}

// ---- starting runs ------------------------------------------------------------------------------

// Starts a run and goes to its page; a button left behind (the page restored by Back) is enabled
// again when the page is shown again. A button that had the keyboard focus, which it loses while
// disabled, gets it back when the run does not start, the error under it saying why.
async function startRun(path, body, button) {
  const focused = document.activeElement === button;
  button.disabled = true;
  button.dataset.busy = "true";
  try {
    const started = await api(path, { body });
    clearErrorAfter(button);
    location.href = `/runs/${enc(started.workflow_id)}`;
  } catch (e) {
    button.disabled = false;
    delete button.dataset.busy;
    errorAfter(button, e);
    if (focused && lostFocus()) button.focus();
  }
}

// Whether the keyboard focus fell to the page itself, or is about to: its element was disabled,
// hidden or removed.
function lostFocus() {
  const el = document.activeElement;
  return !el || el === document.body || el.disabled === true || !el.isConnected || el.closest("[hidden]") !== null;
}

// Puts the focus on `el` (a heading, a notice) when it fell to the page, so the keyboard and a screen
// reader go on from what took the place of the control that had it.
function focusInstead(el) {
  if (!lostFocus() || !el || !el.isConnected) return;
  if (!el.matches("a[href], button, input, select, textarea, summary")) el.setAttribute("tabindex", "-1");
  el.focus({ preventScroll: true });
}

function startBundle(name, tasks, button) {
  return startRun(`/bundles/${enc(name)}/run`, { tasks }, button);
}

function startTask(taskId, button) {
  return startRun(`/tasks/${enc(taskId)}/run`, {}, button);
}

// The most runs one group may have, as the API says it: the `maximum` of a group request's `count`
// in the API's document (/openapi.json), which the server holds requests to. Asked once per page
// load; null when the document does not say (the API's refusal then gives the limit in its words).
let groupRunLimit = null;
function maxGroupRuns() {
  if (!groupRunLimit) {
    groupRunLimit = fetch("/openapi.json", { headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : null))
      .then((doc) => {
        const n = doc && doc.components && doc.components.schemas && doc.components.schemas.RunGroupRequest
          && doc.components.schemas.RunGroupRequest.properties.count.maximum;
        return Number.isInteger(n) && n >= 1 ? n : null;
      })
      .catch(() => null);
  }
  return groupRunLimit;
}

// "How many runs (1 to 100)", once the limit is known.
function countLabel(max) {
  return max ? `How many runs (1 to ${max})` : "How many runs (1 or more)";
}

// The values typed for a seed token: separated by commas, spaces or both ("ann, bo", "ann bo").
function seedValues(text) {
  return text.split(/[\s,]+/).filter(Boolean);
}

// The Task page's form that starts a group of runs of `taskId`: so many runs, or one run per value
// of a seed token (`<name>` in the task's steps), the values separated by commas or spaces. What the
// API refuses is said under the form in its words, and the field it is about is marked and gets the
// focus; once started, the group's page. Enter in a field starts it, as a filter's Enter applies it.
function groupForm(taskId) {
  const byCount = h("input", { type: "radio", name: "group-by", id: "group-by-count", value: "count", checked: true });
  const bySeeds = h("input", { type: "radio", name: "group-by", id: "group-by-seeds", value: "seeds" });
  let max = null;
  const count = h("input", { type: "number", id: "group-count", min: 1, step: 1, value: 3,
    inputmode: "numeric", "aria-label": countLabel(max), onfocus: () => { byCount.checked = true; } });
  maxGroupRuns().then((n) => {
    max = n;
    if (!n) return;
    count.max = String(n);
    count.setAttribute("aria-label", countLabel(n));
  });
  const token = h("input", { type: "text", id: "group-seed-token", placeholder: "name", autocomplete: "off", spellcheck: "false",
    "aria-label": "The seed token each run fills (a step's <name>)", onfocus: () => { bySeeds.checked = true; } });
  const values = h("input", { type: "text", id: "group-seeds", placeholder: "alice, bob, carol", autocomplete: "off",
    "aria-label": "Its values, one run each, separated by commas or spaces", onfocus: () => { bySeeds.checked = true; } });
  const button = h("button", { type: "submit", class: "primary", id: "start-group" }, "Start the group");
  const fields = [count, token, values];
  const unmark = () => {
    for (const field of fields) {
      field.removeAttribute("aria-invalid");
      field.removeAttribute("aria-describedby");
    }
    clearErrorAfter(button);
  };
  // Says `error` after the button, marks `field` as what it is about and puts the focus there.
  const refuse = (field, error) => {
    errorAfter(button, error);
    button.errorBox.id = "group-problem";
    if (field) {
      field.setAttribute("aria-invalid", "true");
      field.setAttribute("aria-describedby", "group-problem");
      field.focus();
    }
  };
  // What the explorer refused, each problem named by its field's label rather than its place in the
  // request (`body count`).
  const said = (error) => {
    if (!Array.isArray(error.detail)) return error;
    const labels = { count: "How many runs", seeds: "Seed values" };
    const lines = error.detail.map((p) => {
      const loc = Array.isArray(p && p.loc) ? p.loc : [];
      const msg = p && typeof p.msg === "string" ? p.msg : JSON.stringify(p);
      // A seed's key no step has (`body seeds 0 who`) is the token's fault, not the values'.
      const label = loc[0] === "body" ? (loc[1] === "seeds" && loc.length === 4 ? "Seed token" : labels[loc[1]]) : null;
      return label ? `${label}: ${msg}` : loc.length ? `${loc.join(" ")}: ${msg}` : msg;
    });
    return lines.length ? new Error(lines.join("; ")) : error;
  };
  // The field a 422 is about: its problems' places (`body count`), else the way the group was asked for.
  const fieldOf = (error) => {
    const places = Array.isArray(error.detail) ? error.detail.map((p) => (Array.isArray(p && p.loc) ? p.loc.join(" ") : "")) : [];
    if (places.some((p) => p.startsWith("body count"))) return count;
    if (Array.isArray(error.detail) && error.detail.some((p) => Array.isArray(p && p.loc) && p.loc[1] === "seeds" && p.loc.length === 4)) return token;
    if (places.some((p) => p.startsWith("body seeds"))) return values;
    if (error.status === 422 && !places.length) return bySeeds.checked ? values : count;
    return null;
  };
  const submit = async (ev) => {
    ev.preventDefault();
    if (button.disabled) return;
    unmark();
    let body;
    // Checked here as the explorer checks them, and said in the same words whatever is wrong.
    if (bySeeds.checked) {
      const name = token.value.trim().replace(/^<(.*)>$/, "$1");
      if (!name) return refuse(token, new Error("Name the seed token the runs fill: a step's <name> takes each value in turn."));
      const seeds = seedValues(values.value);
      if (!seeds.length || (max && seeds.length > max)) {
        const got = seeds.length ? ` (got ${seeds.length})` : "";
        return refuse(values, new Error(`Seed values: ${max ? `from 1 to ${max}` : "at least one"}, one run each, separated by commas or spaces${got}.`));
      }
      body = { seeds: seeds.map((v) => ({ [name]: v })) };
    } else {
      const typed = count.value.trim();
      const asked = Number(typed);
      if (typed === "" || !Number.isInteger(asked) || asked < 1 || (max && asked > max)) {
        const got = typed === "" ? "" : ` (got ${typed})`;
        return refuse(count, new Error(`How many runs: a whole number ${max ? `from 1 to ${max}` : "from 1"}${got}.`));
      }
      body = { count: asked };
    }
    button.disabled = true;
    button.dataset.busy = "true";
    try {
      const started = await api(`/tasks/${enc(taskId)}/runs`, { body });
      const runs = started.runs || [];
      if (runs.length && runs.every((r) => r.error)) throw new Error(`The group did not start: ${runs[0].error}`);
      location.href = `/run-groups/${enc(started.run_group_id)}`;
    } catch (e) {
      button.disabled = false;
      delete button.dataset.busy;
      refuse(e.lost ? null : fieldOf(e), said(e));
    }
  };
  return h("form", { id: "group-form", class: "group-form", novalidate: true, onsubmit: submit },
    h("fieldset", {},
      h("legend", {}, "Start a group of runs"),
      h("div", { class: "group-choice" }, byCount, " ", h("label", { for: "group-by-count" }, "Run it"), " ", count, " times"),
      h("div", { class: "group-choice" }, bySeeds, " ", h("label", { for: "group-by-seeds" }, "One run per seed value:"), " ",
        h("span", { "aria-hidden": "true" }, "<"), token, h("span", { "aria-hidden": "true" }, ">"), " takes ", values),
      h("div", {}, button)));
}

// A criterion's "Why" as the page shows it: an empty part a command's check leaves (`stderr=` with
// nothing after it) is left out.
function whyText(justification) {
  if (justification === null || justification === undefined) return "";
  return String(justification).replace(/(^|;\s*)(stderr|stdout)=\s*(?=;|$)/g, "").replace(/^;\s*|;\s*$/g, "").trim();
}

// ---- views --------------------------------------------------------------------------------------

// Home's recent runs: the outcome beside the start, so a phone's screen shows both before the
// table scrolls.
function instanceRows(items) {
  return items.map((i) => h("tr", { "data-instance": i.instance_id },
    h("td", {}, when(i.started_at_utc || i.created_at_utc)),
    h("td", {}, badge(i.outcome)),
    h("td", { class: "wrap" }, link(`/tasks/${enc(i.task_id)}`, i.task_id)),
    h("td", { class: "scores" }, scoresText(i.scores)),
    h("td", {}, `${i.current_step ?? 0}/${i.total_steps ?? "?"}`),
    h("td", {}, link(`/instances/${enc(i.instance_id)}`, i.instance_id, { class: "mono" }))));
}

// The words Home's recent runs can be filtered by (the API's `status`): the outcomes a run shows.
const RUN_FILTERS = ["running", "passed", "failed", "interrupted", "cancelled", "scored below 1", "unscored", "queued"];

async function home() {
  const per = perPage(20);
  const startedPer = perPage(10);
  let offset = offsetFrom("runs_page", per);
  let startedAt = offsetFrom("started_page", startedPer);
  // Next asks for the page after the one shown by its cursor (the API's `next_cursor`), so runs
  // recorded meanwhile show no run twice; the address keeps the page's number, which a reload (with
  // no cursor to go on) reads as an offset. Each cursor is kept by the offset its page starts at.
  const cursors = new Map();
  let cursor = null;
  const asked = queryValue("status");
  let status = RUN_FILTERS.includes(asked) ? asked : "";
  if (asked && !status) {
    queryNotes.add(`'${asked}' is not an outcome the recent runs are filtered by (${RUN_FILTERS.join(", ")}): showing runs of any outcome.`);
  }
  const asking = queryNoteSlot();
  const load = () => Promise.all([
    api(`/task-instances?limit=${per}&${cursor ? `cursor=${enc(cursor)}` : `offset=${offset}`}${status ? `&status=${enc(status)}` : ""}`),
    api(`/workflows?limit=${startedPer}&offset=${startedAt}`),
  ]);
  const notice = noticeSlot();
  const recent = h("div", { id: "recent-runs-list" });
  const started = h("div", { id: "runs-started-here-list" });
  const failed = (e) => recent.replaceChildren(errorBox(e));
  const filter = h("select", { id: "run-filter",
    onchange: () => {
      status = filter.value;
      offset = 0;
      cursor = null;
      cursors.clear();
      setQuery({ status, runs_page: null }, false);
      refresh().catch(failed);
    } },
  h("option", { value: "" }, "any outcome"),
  RUN_FILTERS.map((word) => h("option", { value: word, selected: word === status }, word)));
  const draw = ([instances, workflows]) => {
    notice.update(instances);
    if (instances.next_cursor) cursors.set(instances.offset + instances.items.length, instances.next_cursor);
    replaceKeeping(recent, [
      table(["Started", "Outcome", "Task", "Scores", "Steps", "Instance"], instanceRows(instances.items),
        { id: "recent-runs", page: instances, empty: status ? `No recent run is ${status}.` : null }),
      pager(instances, turnPage("runs_page", per, (o) => { offset = o; cursor = cursors.get(o) || null; refresh().catch(failed); }), "recent runs"),
    ].filter(Boolean));
    replaceKeeping(started, [
      table(["Asked for", "Bundle", "Tasks", "Status", hidden("Its page")], workflows.items.map((w) => {
        const what = `${w.bundle}${(w.tasks || []).length ? ` (${w.tasks.join(", ")})` : ""}`;
        return h("tr", { "data-workflow": w.workflow_id },
          h("td", {}, when(w.created_at_utc)),
          h("td", { class: "wrap" }, w.bundle),
          h("td", { class: "wrap" }, (w.tasks || []).join(", ") || "all"),
          h("td", {}, badge(w.status)),
          h("td", {}, link(`/runs/${enc(w.workflow_id)}`, "open", { "aria-label": `Open the run of ${what} asked for at ${whenText(w.created_at_utc)}` })));
      }), { id: "runs-started-here", page: workflows }),
      pager(workflows, turnPage("started_page", startedPer, (o) => { startedAt = o; refresh().catch(failed); }), "runs started here"),
    ].filter(Boolean));
  };
  const going = ([instances, workflows]) =>
    instances.items.some((i) => i.outcome === "running") || workflows.items.some((w) => !w.done);
  const refresh = keptPage(load, draw, { going });
  show(h("h1", {}, "Recent runs"), notice, asking, h("p", { class: "list-filter" }, h("label", { for: "run-filter" }, "Recent runs that are "), filter),
    recent, h("h2", {}, "Runs started here"), started, h("p", {}, link("/bundles", "Run a bundle →")));
  await refresh();
}

async function bundles() {
  const [page, stored] = await Promise.all([api("/bundles?limit=500"), storedTaskIds()]);
  // A task's id leads to its page once a run stored it; before, it says it has not run yet.
  const taskCell = (t) => (!stored || stored.has(t.id) ? link(`/tasks/${enc(t.id)}`, t.id, { class: "mono" })
    : [h("span", { class: "mono" }, t.id), " ", h("span", { class: "muted small not-run-yet" }, "(not run yet)")]);
  show(h("h1", {}, "Bundles"),
    h("p", { class: "muted" }, "Every bundle agent-env run can name. A run here is the same run as agent-env run NAME."),
    cutNote(page, "bundles"),
    ...page.items.map((b) => h("section", { class: "card", "data-bundle": b.name },
      h("h2", {}, b.name, " ", h("span", { class: "muted" }, `${b.package} ${b.package_version}`)),
      b.description ? h("p", {}, b.description) : null,
      // A built-in bundle has no folder: where to get one of it to change.
      b.built_in ? h("p", { class: "muted bundle-folder" }, "Built into agent-env; ",
        h("span", { class: "mono" }, `agent-env bundle init FOLDER --from-bundle ${b.name}`), " writes a copy to change.")
        : h("p", { class: "muted mono bundle-folder" }, b.folder),
      b.problem ? h("p", { class: "error" }, b.problem) : null,
      h("button", { class: "primary", id: `run-bundle-${b.name}`, disabled: !!b.problem, "aria-label": `Run all tasks of ${b.name}`,
        onclick: (ev) => startBundle(b.name, [], ev.currentTarget) }, "Run all tasks"),
      table(["Task", "Steps", "Id", hidden("Run it")], (b.tasks || []).map((t) => h("tr", {},
        h("td", { class: "wrap" }, t.name),
        h("td", {}, t.steps),
        h("td", { class: "task-id" }, taskCell(t)),
        h("td", {}, h("button", { "data-run-task": `${b.name}/${t.name}`, "aria-label": `Run ${b.name}/${t.name}`,
          onclick: (ev) => startBundle(b.name, [t.name], ev.currentTarget) }, "Run"))))),
      (b.evals || []).length ? h("p", { class: "muted" }, `Evals: ${b.evals.map((e) => e.name).join(", ")}`) : null)));
}

// The ids of the stored tasks, when one answer holds them all (else null: each is taken as stored).
async function storedTaskIds() {
  try {
    const page = await api("/tasks?limit=500");
    return page.has_more ? null : new Set(page.items.map((t) => t.id));
  } catch (e) {
    if (e.lost) throw e;
    return null;
  }
}

async function tasks() {
  const per = perPage(100);
  let offset = offsetFrom("page", per);
  let filter = queryValue("id").trim();
  const body = h("div");
  const notice = noticeSlot();
  const failed = (e) => body.replaceChildren(errorBox(e));
  const load = () => Promise.all([
    api(`/tasks?limit=${per}&offset=${offset}&sort_by=id&descending=false${filter ? `&id=${enc(filter)}` : ""}`),
  ]);
  const go = turnPage("page", per, (o) => { offset = o; refresh().catch(failed); });
  const refresh = keptPage(load, ([page]) => {
    notice.update(page);
    replaceKeeping(body, drawTasks(page, go, filter));
  });
  const input = filterBox("Filter tasks by id", filter, (value) => {
    filter = value;
    offset = 0;
    setQuery({ id: value, page: null }, false);
    refresh().catch(failed);
  });
  show(h("h1", {}, "Tasks"), notice, queryNoteSlot(),
    h("p", { class: "muted" }, "Tasks as the runs stored them (the newest version of each)."),
    input, body);
  await refresh();
}

function drawTasks(page, go, filter) {
  return [
    table(["Task", "Version", "Bundle", "Written"], page.items.map((t) => h("tr", { "data-task": t.id },
      h("td", { class: "wrap" }, link(`/tasks/${enc(t.id)}`, t.id, { class: "mono" })),
      h("td", {}, `v${t.version}`),
      h("td", { class: "wrap" }, t.bundle || ""),
      h("td", {}, when(t.created_at_utc)))), { id: "tasks", page, empty: filter ? "No task id holds that text." : null }),
    pager(page, go, "tasks"),
  ].filter(Boolean);
}

// Whether the explorer can run a task: one a bundle wrote (its document names the bundle and its
// name there); a stored one (`agent-env task put`) comes from no bundle.
function fromBundle(doc) {
  return typeof doc.bundle === "string" && doc.bundle !== "" && typeof doc.name === "string" && doc.name !== "";
}

// The Task page draws itself again while a run of the task is under way (its groups' counts so far).
async function task(id) {
  const runsPer = perPage(50);
  const groupsPer = perPage(20);
  let runsAt = offsetFrom("runs_page", runsPer);
  let groupsAt = offsetFrom("groups_page", groupsPer);
  const load = () => Promise.all([
    api(`/tasks/${enc(id)}`),
    api(`/tasks/${enc(id)}/versions`),
    api(`/tasks/${enc(id)}/runs?limit=${runsPer}&offset=${runsAt}`),
    api(`/tasks/${enc(id)}/run-groups?limit=${groupsPer}&offset=${groupsAt}`),
  ]);
  const going = ([, , runs, groups]) => runs.items.some((i) => i.outcome === "running")
    || groups.items.some((g) => g.run_live || g.running > 0);
  const failed = (e) => show(h("h1", {}, id), errorBox(e));
  const pages = {
    runs: turnPage("runs_page", runsPer, (o) => { runsAt = o; refresh().catch(failed); }),
    groups: turnPage("groups_page", groupsPer, (o) => { groupsAt = o; refresh().catch(failed); }),
  };
  // The page in three parts: the run button and the group form are made once, between the two
  // parts a redraw draws again, so a redraw (a run's progress) keeps what was typed in the form and
  // the focus it had (an element moved into a new part as the part is built would lose it).
  const parts = {
    head: h("div", { class: "task-head" }),
    actions: h("div", { class: "run-actions" },
      h("button", { class: "primary", id: "run-task", onclick: (ev) => startTask(id, ev.currentTarget) }, "Run this task"),
      groupForm(id)),
    rest: h("div", { class: "task-rest" }),
  };
  // A stored task (from no bundle) has neither: the explorer does not run it.
  const draw = (answers) => {
    if (!main.contains(parts.head)) show(parts.head, parts.rest);
    const runnable = fromBundle(answers[0]);
    if (runnable && !main.contains(parts.actions)) parts.head.after(parts.actions);
    if (!runnable) parts.actions.remove();
    drawTask(id, answers, pages, parts);
  };
  const refresh = keptPage(load, draw, { going });
  await refresh();
}

// Fills `container` anew with `children`, leaving out the ones that are nothing (a pager on a list
// of one page).
function fill(container, ...children) {
  replaceKeeping(container, children.flat(2).filter((c) => c !== null && c !== undefined && c !== false));
}

function drawTask(id, [doc, versions, runs, groups], pages, parts) {
  fill(parts.head, h("h1", {}, doc.name || id, " ", h("span", { class: "muted" }, `v${doc.version}`)),
    warningsNotice(versions, runs, groups), queryNoteSlot(),
    h("p", { class: "mono" }, id),
    fromBundle(doc) ? null
      : h("p", { class: "muted", id: "run-task-stored" }, "A stored task (it comes from no bundle): the explorer runs only bundles' tasks; run it with ",
        h("code", {}, `agent-env task run ${id}`), "."));
  fill(parts.rest, h("h2", {}, "Steps"),
    table(["Step", "Type", "Fails the task"], (doc.steps || []).map((s) => h("tr", {},
      h("td", { class: "wrap" }, s.id), h("td", {}, s.type), h("td", {}, s.fail_task_on_error === false ? "no" : "yes")))),
    h("h2", {}, "Runs"),
    table(["Started", "Outcome", "Scores", "Steps", "Instance"], runs.items.map((i) => h("tr", { "data-instance": i.instance_id },
      h("td", {}, when(i.started_at_utc || i.created_at_utc)), h("td", {}, badge(i.outcome)), h("td", { class: "scores" }, scoresText(i.scores)),
      h("td", {}, `${i.current_step ?? 0}/${i.total_steps ?? "?"}`),
      h("td", {}, link(`/instances/${enc(i.instance_id)}`, i.instance_id, { class: "mono" })))), { id: "task-runs", page: runs }),
    pager(runs, pages.runs, "runs"),
    h("h2", {}, "Run groups"),
    table(["Group", "Runs", "Outcomes", "Scores", "Complete"], groups.items.map((g) => h("tr", { "data-run-group": g.run_group_id },
      h("td", {}, link(`/run-groups/${enc(g.run_group_id)}`, g.run_group_id, { class: "mono group-link" })),
      // A group whose run is still going here has no total yet: the runs recorded so far.
      h("td", { class: "group-runs" }, g.total ?? `${g.recorded} so far`),
      h("td", { class: "group-outcomes" }, outcomesText(g.outcomes),
        (g.errors || []).map((e) => h("div", { class: "error-text" }, e))),
      // The task's own runs of the group: their spread is this task's alone (`score_spread`).
      h("td", { class: "group-scores" }, spreadText(g.score_spread)),
      h("td", { class: "group-complete" }, g.complete ? "yes" : g.run_live ? "no (its run is going)" : "no"))), { id: "run-groups", page: groups }),
    pager(groups, pages.groups, "run groups"),
    h("h2", {}, "Versions"),
    table(["Version", "Written"], versions.items.map((v) => h("tr", {},
      h("td", {}, `v${v.version}`), h("td", {}, when(v.created_at_utc))))),
    cutNote(versions, "versions"));
}

// The failures an instance document records for each step (its context's `failed_steps`), in order.
function failuresOf(doc) {
  const metadata = (doc && doc.context && doc.context.metadata) || {};
  const byStep = new Map();
  for (const f of Array.isArray(metadata.failed_steps) ? metadata.failed_steps : []) {
    if (!f || typeof f !== "object") continue;
    const id = String(f.step_id ?? "");
    byStep.set(id, [...(byStep.get(id) || []), f]);
  }
  return byStep;
}

// A step's Error cell: its error type and message, whether it was retried, and the traceback folded
// under it (all as text).
function stepError(step, failures) {
  const last = failures.length ? failures[failures.length - 1] : {};
  const message = step.error || last.error || "";
  if (!message && !failures.length) return "";
  const type = step.error_type || last.error_type;
  const traceback = step.traceback || last.traceback;
  const retried = failures.filter((f) => f.retried).length;
  return [
    h("span", { class: "step-error" }, type ? h("span", { class: "error-type mono" }, String(type), ": ") : null, String(message)),
    retried ? h("span", { class: "muted small step-retried" }, ` (failed ${retried} time${retried === 1 ? "" : "s"} before, retried)`) : null,
    traceback ? h("details", { class: "traceback", "data-key": `traceback:${step.step_id}` },
      h("summary", {}, "traceback"), h("pre", {}, String(traceback))) : null,
  ];
}

// The steps of an instance; `doc`, its document, adds what the failures recorded (type, traceback).
function stepsTable(progress, doc) {
  const failures = failuresOf(doc);
  return table(["Step", "Type", "State", "Took", "Error"], (progress.steps || []).map((s) => h("tr", { "data-step": s.step_id },
    h("td", { class: "wrap" }, s.step_id), h("td", {}, s.type || ""), h("td", {}, badge(s.state)),
    h("td", { class: "step-took" }, duration(s.duration_seconds)),
    h("td", { class: "error-text step-error-cell" }, stepError(s, failures.get(String(s.step_id)) || [])))), { class: "steps" });
}

// How an instance's steps went, in words: "1 of 2 steps succeeded, 1 failed". A failed step ended,
// but it is not counted with the ones that succeeded.
function stepsSaid(progress) {
  const steps = progress.steps || [];
  const total = progress.total_steps ?? steps.length;
  if (!steps.length) return { text: `${progress.current_step ?? 0} of ${total} steps done`, succeeded: progress.current_step ?? 0, failed: 0, total };
  const count = (state) => steps.filter((s) => s.state === state).length;
  const succeeded = count("succeeded");
  const others = ["failed", "interrupted", "cancelled", "running"].map((state) => [state, count(state)]).filter(([, n]) => n);
  const text = [`${succeeded} of ${total} steps succeeded`, ...others.map(([state, n]) => `${n} ${state}`)].join(", ");
  return { text, succeeded, failed: count("failed") + count("interrupted"), total };
}

function progressBar(progress, what) {
  const said = stepsSaid(progress);
  const part = (n) => (said.total ? Math.min(100, Math.round((n / said.total) * 100)) : 0);
  const done = progress.finished && !said.total ? 100 : part(said.succeeded);
  const failed = Math.min(100 - done, part(said.failed));
  return h("div", { class: "progress", role: "progressbar", "aria-label": `Steps of ${what}`, "aria-valuenow": done,
    "aria-valuemin": 0, "aria-valuemax": 100, "aria-valuetext": said.text },
  h("div", { class: "bar", style: `width: ${done}%` }),
  failed ? h("div", { class: "bar bar-failed", style: `left: ${done}%; width: ${failed}%` }) : null,
  h("span", { class: "progress-text" }, said.text));
}

function remembered(id) {
  try {
    const list = JSON.parse(sessionStorage.getItem(`agent-env-run:${id}`) || "[]");
    return Array.isArray(list) ? list : [];
  } catch (_) {
    return [];
  }
}

// Whether this tab's page ever saw the run `id` answered.
function seenBefore(id) {
  try { return sessionStorage.getItem(`agent-env-run:${id}`) !== null; } catch (_) { return false; }
}

function remember(id, list) {
  try { sessionStorage.setItem(`agent-env-run:${id}`, JSON.stringify(list)); } catch (_) { /* not kept */ }
}

// The Run page: asks for the workflow every half second until it is done. While the explorer does
// not answer, the page stays as it was last seen and goes on once it does; a workflow the explorer
// does not know (it was started by one that has since stopped, or it ended and was let go: workflows
// live in its memory, the newest ended ones kept) is said in the UI's words, with the instances the
// page knew.
async function run(id) {
  const alive = current();
  let since = 0;
  let cancelling = false;
  let known = remembered(id);
  let seen = seenBefore(id);
  const log = h("pre", { class: "log", id: "run-log" });
  const status = h("span", { id: "run-status" });
  const instances = h("div", { id: "run-instances" });
  const problem = h("div", { class: "problem-slot" });
  const heading = h("h1", { id: "run-heading" }, "Run ", status);
  // Cancel disables itself (and is hidden once the run ends): the focus it had goes to the heading,
  // whose status says what became of the run; or, when the cancel failed, back to it (else its error).
  const cancel = h("button", { id: "cancel-run", onclick: async () => {
    const focused = document.activeElement === cancel;
    cancelling = true;
    cancel.disabled = true;
    try {
      await api(`/workflows/${enc(id)}/cancel`, { method: "POST" });
      clearErrorAfter(cancel);
      if (focused) focusInstead(heading);
    } catch (e) {
      cancelling = false;
      cancel.disabled = contact.isLost();
      errorAfter(cancel, e);
      if (focused) focusInstead(cancel.disabled ? cancel.errorBox : cancel);
    }
  } }, "Cancel");
  const header = h("div", { class: "muted", id: "run-header" });
  const notice = noticeSlot();
  // A screen reader hears the run's status as it changes (and, at its end, each task's outcome,
  // the task named by the last part of its id); never the output's lines.
  const live = h("p", { class: "visually-hidden", id: "run-live", role: "status", "aria-live": "polite", "aria-atomic": "true" });
  let announced = "";
  const announce = (w, answers) => {
    const outcomes = (w.instances || []).map((i, n) => `${String(i.task_id).split("/").pop()} ${answers[n].summary.outcome}`);
    const said = `Run ${w.status}${w.done && outcomes.length ? `: ${outcomes.join(", ")}` : ""}.`;
    if (said === announced) return;
    announced = said;
    live.textContent = said;
  };
  show(heading, live, notice, header, problem, cancel, h("h2", {}, "Tasks"), instances, h("h2", {}, "Output"), log);
  const gone = () => {
    const links = known.map((i) => h("li", {},
      link(`/instances/${enc(i.instance_id)}`, i.task_id || i.instance_id, { class: "gone-instance" }), " ",
      h("span", { class: "mono muted" }, i.instance_id)));
    show(h("h1", {}, "Run"),
      h("div", { class: "warning notice", id: "run-gone", role: "status" },
        h("p", {}, "This run was started by an explorer that has since stopped, or it ended and the explorer let it go (it keeps the newest ended runs); its task instances are still listed under ",
          link("/", "Recent runs"), " on Home", links.length ? ". This run's:" : "."),
        links.length ? h("ul", {}, links) : null),
      log.childNodes.length ? [h("h2", {}, "Output"), log] : null);
  };
  // A run this page never saw (a mistyped address): nothing says an explorer ever started it.
  const unknown = () => {
    show(h("h1", {}, "Run"),
      h("div", { class: "warning notice", id: "run-unknown", role: "status" },
        h("p", {}, "No run ", h("span", { class: "mono" }, id), " here. ",
          link("/", "Home"), " lists the recent runs.")));
  };
  const tick = async () => {
    if (!alive()) return;
    let w;
    let answers;
    try {
      w = await api(`/workflows/${enc(id)}?since=${since}`);
    } catch (e) {
      if (!alive()) return;
      if (e.status === 404) return seen || known.length ? gone() : unknown();
      return trouble(e);
    }
    try {
      answers = await Promise.all((w.instances || []).map((i) => api(`/task-instances/${enc(i.instance_id)}`)));
    } catch (e) {
      if (alive()) trouble(e);
      return;
    }
    if (!alive()) return;
    problem.replaceChildren();
    draw(w, answers);
    const warned = notice.update(...answers);
    // Once the run is done, asked again only while its answers leave something out.
    if (!w.done) setTimeout(tick, 500);
    else if (warned) setTimeout(tick, RECHECK_MS);
  };
  // No answer: the page stays as last seen (and can't cancel) until the explorer answers; another
  // error is shown once, and asked again.
  const trouble = (e) => {
    if (e.lost) {
      cancel.disabled = true;
      if (!status.querySelector(".last-seen")) status.append(" ", h("span", { class: "muted small last-seen" }, "(as last seen)"));
      contact.whenBack(tick);
      return;
    }
    problem.replaceChildren(errorBox(e));
    setTimeout(tick, RECHECK_MS);
  };
  const draw = (w, answers) => {
    const queued = w.status === "queued";
    status.replaceChildren(badge(w.status));
    announce(w, answers);
    // When the run left the queue; its first instance's start when the answer does not say.
    const started = w.started_at_utc
      || (w.instances || []).map((i) => i.started_at_utc).filter(Boolean).sort()[0];
    header.replaceChildren(...[`${w.bundle}${(w.tasks || []).length ? ` (${w.tasks.join(", ")})` : ""} · run group `,
      link(`/run-groups/${enc(w.run_group_id)}`, w.run_group_id, { class: "mono", id: "run-group-link" }),
      queued ? [" · waiting since ", when(w.created_at_utc)] : started ? [" · started ", when(started)] : "",
      w.finished_at_utc ? [" · finished ", when(w.finished_at_utc)] : "",
      // The run log is a file on this machine: its path, and a link to its text, which the API serves.
      w.log ? [" · run log ", h("span", { class: "mono", id: "run-log-path" }, w.log), " (",
        link(`/api/v1/workflows/${enc(id)}/log`, "open it", { id: "run-log-link" }), ")"] : ""].flat());
    if (w.error) header.append(h("p", { class: "error" }, w.error));
    cancel.hidden = w.done;
    cancel.disabled = cancelling || !!w.cancel_requested;
    for (const line of w.lines) {
      log.append(h("span", { class: `line-${line.stream}` }, line.text), "\n");
      since = line.seq + 1;
    }
    known = (w.instances || []).map((i) => ({ instance_id: i.instance_id, task_id: i.task_id }));
    remember(id, known);
    seen = true;
    const cards = (w.instances || []).map((i, n) => {
      const full = answers[n];
      return h("section", { class: "card", "data-instance": i.instance_id },
        h("h3", {}, link(`/tasks/${enc(i.task_id)}`, i.task_id, { class: "task-link" }), " ", badge(full.summary.outcome)),
        h("p", { class: "muted" }, "Task instance ",
          link(`/instances/${enc(i.instance_id)}`, i.instance_id, { class: "mono instance-link", "aria-label": `The task instance of ${i.task_id}` })),
        full.summary.warning ? h("p", { class: "error-text run-warning" }, full.summary.warning) : null,
        progressBar(full.progress, i.task_id),
        h("p", {}, "Scores: ", scoresText(full.summary.scores)),
        stepsTable(full.progress, full.instance));
    });
    const waiting = `Waiting for a free slot (at most ${RUN_SLOTS} runs at once).`;
    replaceKeeping(instances, cards.length ? cards
      : [h("p", { class: "muted", id: "run-waiting" }, w.done ? "No task ran." : queued ? waiting : "Starting…")]);
  };
  await tick();
}

// How far a group has got: runs planned (null while not known), done (every outcome but running),
// running, and waiting for their turn (planned runs not recorded yet, nor stopped before they were).
function groupCounts(g) {
  const done = Object.entries(g.outcomes || {}).filter(([k]) => k !== "running").reduce((n, [, v]) => n + v, 0);
  const running = g.running || 0;
  const total = typeof g.total === "number" ? g.total : null;
  const waiting = total === null ? 0 : Math.max(0, total - done - running);
  return { total, done, running, waiting };
}

// A group's state in a word: complete, running, queued (every run waiting its turn), else incomplete.
function groupWord(g, counts) {
  if (g.complete) return "complete";
  if (counts.running || g.run_live) return "running";
  if (counts.waiting) return "queued";
  return "incomplete";
}

// Whether a group's runs may still change: one running, its run live here, or one of the
// explorer's runs not done.
function groupGoing(g) {
  return !g.complete && (g.running > 0 || g.run_live || (g.workflows || []).some((w) => !w.done));
}

// A run's seed as its tokens' values: "name=alice".
function seedText(seed) {
  return Object.entries(seed).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(", ");
}

// A row's word: its instance's outcome, else its run's state (queued, errored, cancelled, …).
function runWord(row) {
  return row.instance ? row.instance.outcome : row.workflow.status;
}

// The Run group page: the group's task, its runs planned and how many are recorded, running and
// done, how they came out, the scores' spread (all over the whole group) and a page of its runs (the
// API's `runs`: the explorer's runs in the order it started them, then the others); kept live (as
// the Task page is) while its runs go, and told to a screen reader in a polite live region. Cancel
// cancels the runs the explorer started for it. Its runs can be filtered by outcome, and the filter
// and the page are in the address (`?outcome=failed&page=2`).
async function runGroup(id) {
  const per = perPage(50);
  let offset = offsetFrom("page", per);
  let outcome = queryValue("outcome");
  const notice = noticeSlot();
  const status = h("span", { id: "group-status" });
  const live = h("p", { class: "visually-hidden", id: "group-live", role: "status", "aria-live": "polite", "aria-atomic": "true" });
  const body = h("div", { id: "group-body" });
  const cancelSlot = h("div", { class: "cancel-slot" });
  let cancelling = false;
  let latest = null;
  let announced = "";
  const announce = (g, counts) => {
    const said = g.complete
      ? `Run group complete: ${outcomesText(g.outcomes) || "no runs"}.`
      : `Run group ${groupWord(g, counts)}: ${counts.done} of ${counts.total ?? "?"} runs done${counts.running ? `, ${counts.running} running` : ""}.`;
    if (said === announced) return;
    announced = said;
    live.textContent = said;
  };
  const heading = h("h1", { id: "group-heading" }, "Run group ", status);
  // Cancel asks first, in the page: a question with its two answers in Cancel's place, the focus on
  // the question. Yes cancels the runs and puts the focus on the heading, whose status says what became
  // of them; No puts Cancel back, focused.
  let confirming = false;
  const question = h("p", { id: "cancel-group-question", tabindex: "-1" });
  const yes = h("button", { id: "cancel-group-yes", class: "primary", onclick: async () => {
    if (!latest || !latest.task_id) return;
    confirming = false;
    confirm.hidden = true;
    cancelling = true;
    cancel.disabled = true;
    cancel.hidden = false;
    try {
      await api(`/tasks/${enc(latest.task_id)}/cancel-run`, { body: { run_group_id: id } });
      clearErrorAfter(cancel);
      focusInstead(heading);
      refresh().catch(() => {});
    } catch (e) {
      cancelling = false;
      cancel.disabled = contact.isLost();
      errorAfter(cancel, e);
      focusInstead(cancel.disabled ? cancel.errorBox : cancel);
    }
  } }, "Yes, cancel them");
  const no = h("button", { id: "cancel-group-no", onclick: () => {
    confirming = false;
    confirm.hidden = true;
    cancel.hidden = false;
    cancel.focus();
  } }, "No, let them run");
  const confirm = h("div", { class: "warning notice confirm", id: "cancel-group-confirm", role: "group",
    "aria-labelledby": "cancel-group-question" }, question, h("p", {}, yes, " ", no));
  confirm.hidden = true;
  const cancel = h("button", { id: "cancel-group", onclick: () => {
    if (!latest || !latest.task_id) return;
    const left = (latest.workflows || []).filter((w) => !w.done && !w.cancel_requested).length;
    question.textContent = `Cancel ${left === 1 ? "the group's run that is not done" : `the ${left} runs of this group that are not done`}? Runs that ended stay as they are.`;
    clearErrorAfter(cancel);
    confirming = true;
    cancel.hidden = true;
    confirm.hidden = false;
    question.focus();
  } }, "Cancel the group's runs");
  cancel.hidden = true;
  cancelSlot.append(cancel, confirm);
  const asking = queryNoteSlot();
  const ask = () => api(`/run-groups/${enc(id)}?limit=${per}&offset=${offset}${outcome ? `&outcome=${enc(outcome)}` : ""}`);
  // An outcome no run is said in (the address's, mistyped) is noted, and the group's runs shown whatever
  // their outcome.
  const load = async () => {
    try {
      return [await ask()];
    } catch (e) {
      const about = Array.isArray(e.detail) ? e.detail.find((p) => Array.isArray(p && p.loc) && p.loc.join(" ") === "query outcome") : null;
      if (!outcome || e.status !== 422 || !about) throw e;
      queryNotes.add(`${about.msg}: showing runs of any outcome.`);
      outcome = "";
      setQuery({ outcome: null }, false);
      return [await ask()];
    }
  };
  const failed = (e) => { if (!e.lost) errorAfter(body, e); };
  const go = turnPage("page", per, (o) => { offset = o; refresh().catch(failed); });
  const draw = ([g]) => {
    latest = g;
    asking.update();
    const counts = groupCounts(g);
    notice.update(g);
    status.replaceChildren(badge(groupWord(g, counts)));
    announce(g, counts);
    const going = groupGoing(g);
    const cancellable = going && g.task_id && (g.workflows || []).some((w) => !w.done);
    // Cancel, or the question, gone (the runs ended): the focus either had goes to the heading.
    const hadFocus = cancelSlot.contains(document.activeElement);
    if (confirming && !cancellable) {
      confirming = false;
      confirm.hidden = true;
    }
    cancel.hidden = confirming || !cancellable;
    cancel.disabled = cancelling || (g.workflows || []).every((w) => w.done || w.cancel_requested);
    if (hadFocus) focusInstead(heading);
    const tasks = g.task_ids || [];
    const runs = g.runs || { items: [], total: 0, limit: per, offset: 0, has_more: false };
    const shown = runs.items;
    const words = Object.keys(g.run_words || {}).sort();
    if (outcome && !words.includes(outcome)) words.push(outcome);
    const seeded = (g.workflows || []).some((w) => w.seed);
    const filter = h("select", { id: "group-filter", onchange: (ev) => {
      outcome = ev.currentTarget.value;
      offset = 0;
      setQuery({ outcome, page: null }, false);
      refresh().catch(failed);
    } },
    h("option", { value: "" }, "any outcome"),
    words.map((word) => h("option", { value: word, selected: word === outcome }, word)));
    // Each task's scores apart (the API's `score_spread_by_task`): tasks whose verifying steps
    // share an id are different verifiers. The Task column is there when the group has several.
    const spread = Object.entries(g.score_spread_by_task || {})
      .flatMap(([task, scores]) => Object.entries(scores).map(([key, sp]) => ({ task, key, sp })));
    const severalTasks = tasks.length > 1;
    replaceKeeping(body, [
      h("dl", { id: "group-facts" },
        h("dt", {}, tasks.length === 1 ? "Task" : "Tasks"),
        h("dd", {}, tasks.length ? tasks.flatMap((t, n) => [n ? ", " : null, link(`/tasks/${enc(t)}`, t, { class: "mono group-task" })]) : "—"),
        h("dt", {}, "Runs planned"),
        h("dd", { id: "group-total" }, counts.total ?? `not known yet (its run is going): ${g.recorded} so far`),
        h("dt", {}, "Recorded"), h("dd", { id: "group-recorded" }, g.recorded),
        counts.waiting ? [h("dt", {}, "Waiting"), h("dd", { id: "group-waiting" }, counts.waiting)] : null,
        h("dt", {}, "Running"), h("dd", { id: "group-running" }, counts.running),
        h("dt", {}, "Done"), h("dd", { id: "group-done" }, counts.done),
        h("dt", {}, "Outcomes"), h("dd", { id: "group-outcomes" }, outcomesText(g.outcomes) || "—"),
        h("dt", {}, "Started"), h("dd", {}, when(g.created_at_utc) || "—")),
      (g.errors || []).length ? h("div", { class: "error", id: "group-errors" }, g.errors.map((e) => h("p", {}, e))) : null,
      h("h2", {}, "Scores"),
      table((severalTasks ? ["Task"] : []).concat(["Score", "Runs", "Mean", "Min", "Max"]), spread.map(({ task, key, sp }) => h("tr", { "data-task": task, "data-score": key },
        severalTasks ? h("td", { class: "wrap mono score-task" }, task) : null,
        h("td", { class: "wrap" }, key), h("td", {}, sp.runs),
        h("td", { class: "score-mean" }, scoreNumber(sp.mean)), h("td", { class: "score-min" }, scoreNumber(sp.min)),
        h("td", { class: "score-max" }, scoreNumber(sp.max)))),
      { id: "group-scores", empty: g.complete ? "No run recorded a score." : "No run has recorded a score yet." }),
      h("h2", {}, "Runs"),
      h("p", { class: "list-filter" }, h("label", { for: "group-filter" }, "Runs that are "), filter),
      table(["#", "Run", "Outcome", "Scores", "Took", "Started"].concat(seeded ? ["Seed"] : []), shown.map((r) => {
        const i = r.instance;
        const w = r.workflow;
        const where = i
          ? link(`/instances/${enc(i.instance_id)}`, i.instance_id, { class: "mono instance-link" })
          : link(`/runs/${enc(w.workflow_id)}`, `run ${r.place}`, { "aria-label": `The Run page of run ${r.place} of the group` });
        return h("tr", { "data-run": r.place, "data-instance": i ? i.instance_id : null },
          h("td", {}, r.place),
          h("td", { class: "wrap" }, where, w && w.error ? h("div", { class: "error-text" }, w.error) : null),
          h("td", {}, badge(runWord(r))),
          h("td", { class: "run-scores scores" }, i ? scoresText(i.scores) : "—"),
          h("td", { class: "run-took" }, i ? tookText(i.started_at_utc, i.ended_at_utc) : ""),
          h("td", {}, when((i && (i.started_at_utc || i.created_at_utc)) || (w && w.started_at_utc))),
          seeded ? h("td", { class: "mono small" }, w && w.seed ? seedText(w.seed) : "") : null);
      }), { id: "group-run-list", page: runs, empty: outcome ? `No run of this group is ${outcome}.` : "No run yet." }),
      pager(runs, go, "runs")]
      .filter(Boolean));
  };
  const refresh = keptPage(load, draw, { going: ([g]) => groupGoing(g), every: 1000 });
  show(heading, live, notice, asking, h("p", { class: "mono" }, id), cancelSlot, body);
  try {
    await refresh();
  } catch (e) {
    // A group neither the stores nor this explorer know: said so, in the UI's words. One that may
    // be in a store left out is the page's error, asked for again until the store is read.
    if (e.status !== 404 || String(e.message).includes("it may be in the store left out")) throw e;
    show(h("h1", {}, "Run group"),
      h("div", { class: "warning notice", id: "group-unknown", role: "status" },
        h("p", {}, "Unknown run group ", h("span", { class: "mono" }, id),
          ": no run of it is recorded, and this explorer started none. Each task's page lists its run groups; ",
          link("/tasks", "Tasks"), ".")));
  }
}

// The Task instance page draws itself again while the instance runs.
async function instance(id) {
  const load = async () => {
    const data = await api(`/task-instances/${enc(id)}`);
    const doc = data.instance;
    const taskDoc = await api(`/tasks/${enc(doc.task_id)}?version=${doc.task_version}`).catch((e) => {
      if (e.lost) throw e;
      return null;
    });
    return [data, taskDoc];
  };
  const going = ([data]) => data.summary.outcome === "running";
  await keptPage(load, (answers) => drawInstance(id, answers), { going, every: 1000 })();
}

function drawInstance(id, [data, taskDoc]) {
  const doc = data.instance;
  const metadata = (doc.context && doc.context.metadata) || {};
  const verifications = Object.entries(metadata.verifications || {});
  const artifactIds = [];
  for (const step of (taskDoc && taskDoc.steps) || []) {
    if (step.artifact_id) artifactIds.push(step.artifact_id);
  }
  show(h("h1", {}, "Task instance ", badge(data.summary.outcome)),
    warningsNotice(data),
    h("p", { class: "mono" }, id),
    h("dl", {},
      h("dt", {}, "Task"), h("dd", {}, link(`/tasks/${enc(doc.task_id)}`, `${doc.task_id} v${doc.task_version}`, { id: "instance-task" })),
      h("dt", {}, "Status"), h("dd", {}, doc.status),
      h("dt", {}, "Scores"), h("dd", { id: "instance-scores" }, scoresText(data.summary.scores)),
      h("dt", {}, "Started"), h("dd", { id: "instance-started" }, when(doc.started_at_utc || doc.created_at_utc)),
      endFacts(doc),
      h("dt", {}, "Run group"), h("dd", {}, metadata.run_group_id
        ? link(`/run-groups/${enc(metadata.run_group_id)}`, metadata.run_group_id, { class: "mono", id: "instance-group" }) : ""),
      data.workflow ? [h("dt", {}, "Started here"), h("dd", {}, link(`/runs/${enc(data.workflow.workflow_id)}`, "the run's page"))] : null,
      doc.error ? [h("dt", {}, "Error"), h("dd", { class: "error-text" }, doc.error)] : null,
      data.summary.warning ? [h("dt", {}, "Warning"), h("dd", { class: "error-text", id: "instance-warning" }, data.summary.warning)] : null),
    progressBar(data.progress, doc.task_id),
    h("h2", {}, "Steps"), stepsTable(data.progress, doc),
    verifications.length ? h("h2", {}, "Verifications") : null,
    ...verifications.map(([vid, v]) => h("section", { class: "card", "data-verification": vid },
      h("h3", {}, vid, " ", h("span", { class: "muted" }, `score ${v.score}`)),
      // An unnamed criterion is numbered from 1, by its index when it has one, else by its place.
      table(["Criterion", "Result", "Score", "Why"], (v.results || []).map((r, place) => h("tr", {},
        h("td", { class: "criterion" }, r.criterion ?? `#${(Number.isInteger(r.criterion_index) ? r.criterion_index : place) + 1}`),
        h("td", {}, badge(criterionWord(r))),
        h("td", {}, r.score), h("td", { class: "why" }, whyText(r.justification))))))),
    artifactIds.length ? [h("h2", {}, "Artifacts it used"),
      h("ul", {}, artifactIds.map((a) => h("li", {}, link(`/artifacts/${enc(a)}`, a, { class: "mono artifact-link" }))))] : null,
    h("details", { id: "instance-document" }, h("summary", {}, "The instance document"), json(doc)));
}

// How an instance error a later run recorded ends: that run marked it failed, its own run having
// stopped without recording its end.
const MARKED_BY_A_LATER_RUN = "a later run marked it failed";

// When an instance ended, as its page says it: its end; for one a later run marked failed, that its
// end is not known and when it was marked; nothing more for one still going.
function endFacts(doc) {
  if (doc.ended_at_utc) {
    return [h("dt", {}, doc.status === "completed" ? "Completed" : "Ended"), h("dd", { id: "instance-ended" }, when(doc.ended_at_utc))];
  }
  if (typeof doc.error === "string" && doc.error.endsWith(MARKED_BY_A_LATER_RUN)) {
    const marked = doc.completed_at_utc;
    return [h("dt", {}, "Ended"), h("dd", { id: "instance-ended" }, "not known: its run stopped without recording its end"),
      h("dt", {}, "Marked failed"), h("dd", { id: "instance-marked-failed" }, marked ? [when(marked), " (by a later run)"] : "by a later run")];
  }
  const ended = doc.completed_at_utc;
  return ended ? [h("dt", {}, doc.status === "completed" ? "Completed" : "Ended"), h("dd", { id: "instance-ended" }, when(ended))]
    : [h("dt", {}, "Ended"), h("dd", { id: "instance-ended" }, "—")];
}

// A derived artifact's id: its base's, `__` (core's DERIVED_SEPARATOR) and 16 hex digits (one per
// file of the base that a run loaded).
const DERIVED_ID = /^(.+)__[0-9a-f]{16}$/;

// The artifacts of a page, each derived one folded under its base when the base is on the page (the
// list is sorted by id, so it follows it); one whose base is not stays a row of its own.
function foldDerived(items) {
  const groups = [];
  const byId = new Map();
  for (const a of items) {
    const base = DERIVED_ID.exec(String(a.id));
    const group = base && byId.get(base[1]);
    if (group) {
      group.derived.push(a);
      continue;
    }
    const own = { artifact: a, derived: [] };
    groups.push(own);
    byId.set(String(a.id), own);
  }
  return groups;
}

async function artifacts() {
  const per = perPage(50);
  let offset = offsetFrom("page", per);
  let filter = queryValue("id").trim();
  const body = h("div");
  const notice = noticeSlot();
  const load = () => Promise.all([
    api(`/artifacts?limit=${per}&offset=${offset}&sort_by=id&descending=false${filter ? `&id=${enc(filter)}` : ""}`),
  ]);
  const failed = (e) => body.replaceChildren(errorBox(e));
  // The bases whose file artifacts are shown (kept while the page redraws).
  const unfolded = new Set();
  const row = (a, attrs, toggle) => h("tr", Object.assign({ "data-artifact": a.id }, attrs || {}),
    h("td", {}, link(`/artifacts/${enc(a.id)}`, a.id, { class: "mono" }), toggle ? [" ", toggle] : null),
    h("td", {}, a.type || ""), h("td", {}, `v${a.version}`),
    h("td", {}, (a.files || []).length), h("td", {}, when(a.created_at_utc)));
  const rows = (items) => foldDerived(items).flatMap(({ artifact, derived }) => {
    if (!derived.length) return [row(artifact)];
    const open = unfolded.has(artifact.id);
    const n = derived.length;
    // Its name and text stay as it turns (aria-expanded says which way), so a redraw keeps its focus.
    const toggle = h("button", { class: "small fold-derived", "aria-expanded": open ? "true" : "false",
      "data-fold": artifact.id, "aria-label": `The ${n} file artifact${n === 1 ? "" : "s"} of ${artifact.id}`,
      onclick: () => {
        if (unfolded.has(artifact.id)) unfolded.delete(artifact.id);
        else unfolded.add(artifact.id);
        // Drawn again from the answer shown (a refresh draws nothing when the answer is unchanged).
        if (shownAnswers) draw(shownAnswers);
      } }, `${n} file artifact${n === 1 ? "" : "s"}`);
    return [row(artifact, {}, toggle), ...(open ? derived.map((d) => row(d, { class: "derived-artifact", "data-derived-of": artifact.id })) : [])];
  });
  let shownAnswers = null;
  const draw = (answers) => {
    shownAnswers = answers;
    const [page] = answers;
    notice.update(page);
    replaceKeeping(body, [
      table(["Artifact", "Type", "Version", "Files", "Written"], rows(page.items),
      { id: "artifacts", page, empty: filter ? "No artifact id holds that text." : null }),
      pager(page, turnPage("page", per, (o) => { offset = o; refresh().catch(failed); }), "artifacts"),
    ].filter(Boolean));
  };
  const refresh = keptPage(load, draw);
  const input = filterBox("Filter artifacts by id", filter, (value) => {
    filter = value;
    offset = 0;
    setQuery({ id: value, page: null }, false);
    refresh().catch(failed);
  });
  show(h("h1", {}, "Artifacts"), notice, queryNoteSlot(), input, body);
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
  let viewing = 0;
  const view = async (file) => {
    const mine = ++viewing;
    preview.replaceChildren(h("h2", {}, file.path), h("p", { class: "muted" }, "Loading…"));
    let meta;
    try {
      meta = await api(`/objects/metadata?object_url=${enc(file.object_url)}`);
    } catch (e) {
      if (mine === viewing) preview.replaceChildren(h("h2", {}, file.path), errorBox(e));
      return;
    }
    if (mine !== viewing) return;
    // The explorer's metadata says whether it serves the file to be shown here; the page never
    // decides that on its own.
    if (!(meta && meta.shown_inline === true)) {
      const size = meta && typeof meta.size_bytes === "number" ? [", ", sizeOf(meta.size_bytes)] : [];
      preview.replaceChildren(h("h2", {}, file.path),
        h("p", { class: "muted", id: "no-preview" },
          "This file cannot be shown here (", (meta && meta.content_type) || "unknown type", ...size, "). ",
          link(objectUrl(file.object_url, true), "Download it", { "aria-label": `Download ${file.path} (it cannot be shown here)`, id: "no-preview-download" }),
          "."));
      return;
    }
    preview.replaceChildren(h("h2", {}, file.path),
      // Scripts run, as the object's own sandbox CSP lets them (a stored HTML replay's player), in
      // an opaque origin: no allow-same-origin, so they reach neither the explorer nor its API.
      h("iframe", { src: objectUrl(file.object_url), sandbox: "allow-scripts", title: file.path, class: "preview" }));
  };
  show(h("h1", {}, doc.name || id, " ", h("span", { class: "muted" }, `v${doc.version} · ${doc.type}`)),
    warningsNotice(versions),
    h("p", { class: "mono" }, id),
    h("h2", {}, "Files"),
    table(["File", "Size", "SHA-256", hidden("View or download")], (doc.files || []).map((f) => h("tr", { "data-file": f.path },
      h("td", { class: "wrap" }, f.path), h("td", { class: "file-size" }, sizeOf(f.size)), h("td", { class: "mono small" }, (f.sha256 || "").slice(0, 16)),
      h("td", { class: "actions" },
        h("button", { "data-view-file": f.path, "aria-label": `View ${f.path}`, onclick: () => view(f) }, "View"), " ",
        link(objectUrl(f.object_url, true), "Download", { "aria-label": `Download ${f.path}` }), " ",
        link(objectUrl(f.object_url), "Open", { target: "_blank", rel: "noopener", "aria-label": `Open ${f.path} in a new tab` }))))),
    preview,
    h("h2", {}, "Versions"),
    table(["Version", "Written"], versions.items.map((v) => h("tr", {},
      h("td", {}, link(`/artifacts/${enc(id)}?version=${v.version}`, `v${v.version}`)), h("td", {}, when(v.created_at_utc))))),
    cutNote(versions, "versions"),
    h("details", { id: "artifact-document" }, h("summary", {}, "The artifact document"), json(doc)));
}

function contributionRows(plugin) {
  return (plugin.contributions || []).map((c) => h("tr", { "data-contribution": `${c.group}:${c.name}` },
    h("td", {}, c.group), h("td", {}, c.name), h("td", {}, badge(c.status)),
    h("td", {}, c.code || ""), h("td", { class: "reason" }, c.reason || "")));
}

async function plugins() {
  const [data, explorer] = await Promise.all([api("/plugin-report"), api("/explorer-plugins")]);
  const rows = data.report.plugins || [];
  // Explorer plugins the report lists that the server did not load as it started: not served until
  // agent-env up starts again.
  const added = explorer.added_since_start || [];
  const addedRows = added.map((p) => h("tr", { "data-explorer-plugin": p.name, "data-added-since-start": "" },
    h("td", {}, p.name), h("td", {}, p.package || ""), h("td", {}, "—"),
    h("td", {}, `Not served: ${explorer.note || "restart agent-env up to serve it"}.`)));
  show(h("h1", {}, "Plugins"),
    h("p", { class: "muted" }, "The plugin report, as agent-env plugin list gives it: what each package contributes and whether it took effect."),
    ...(data.warnings || []).map((w) => h("p", { class: "warning" }, w)),
    ...rows.map((p) => h("section", { class: "card", "data-plugin": p.name },
      h("h2", {}, link(`/plugins/${enc(p.name)}`, p.name), " ", h("span", { class: "muted" }, p.version)),
      table(["Group", "Name", "Status", "Code", "Reason"], contributionRows(p)))),
    h("h2", {}, "Explorer plugins"),
    added.length ? h("p", { class: "warning notice", id: "explorer-plugins-added", role: "status" },
      `Explorer plugins are ${explorer.note}: ${added.map((p) => `${p.name} (${p.package})`).join(", ")} ${added.length === 1 ? "is" : "are"} not served yet.`) : null,
    table(["Page", "Package", "Routes", "Problems"], [...explorerPluginRows(explorer.plugins || []), ...addedRows], { id: "explorer-plugins" }),
    h("details", { id: "plugin-report-text" }, h("summary", {}, "As text"), h("pre", { id: "plugin-text" }, data.text)));
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
    data.process ? processFacts(data.process) : h("p", { class: "muted" }, "Not started (nothing it contributes needed a process)."));
}

// A plugin's process (`agent-env plugin show`'s diagnosis) as a list of its fields, each in words: its
// command line, times as the pages show them, durations, yes or no, its stderr's tail folded as text.
function processFacts(process) {
  if (typeof process !== "object" || process === null || Array.isArray(process)) return json(process);
  const labels = { argv: "command line", spawned_at_ms: "started at", spawn_us: "took to start",
    initialize_us: "took to answer initialize", noise_lines: "non-protocol lines on stdout",
    noise_samples: "the first of them", stopped_by_host: "stopped by agent-env", pid: "process id" };
  const value = (key, v) => {
    if (v === null || v === undefined || v === "" || (Array.isArray(v) && !v.length)) return "—";
    if (key === "argv" && Array.isArray(v)) return h("code", {}, v.join(" "));
    if (key.endsWith("_ms") && typeof v === "number") return when(new Date(v).toISOString());
    if (key.endsWith("_us") && typeof v === "number") return duration(v / 1e6);
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (key === "stderr_tail") return h("details", { "data-key": "stderr-tail" }, h("summary", {}, "its stderr's end"), h("pre", {}, v));
    if (key === "failure" && typeof v === "object") return `${v.message}${v.code ? ` [${v.code}]` : ""}`;
    if (Array.isArray(v)) return h("ul", {}, v.map((x) => h("li", {}, typeof x === "string" ? x : JSON.stringify(x))));
    if (typeof v === "object") return h("code", {}, JSON.stringify(v));
    return String(v);
  };
  return h("dl", { id: "plugin-process" }, Object.entries(process).map(([k, v]) =>
    [h("dt", {}, labels[k] || k.replace(/_/g, " ")), h("dd", { "data-field": k }, value(k, v))]));
}

async function config() {
  const data = await api("/config");
  // A configured store the explorer leaves out now (it can't be used, or stopped answering), in the
  // words the other pages' notice uses: the settings below may be fine while the store is not.
  show(h("h1", {}, "Config"),
    warningsNotice({ warnings: data.stores_left_out }),
    configCheck(data.check),
    h("p", { class: "muted" }, "What agent-env config show prints; secrets are masked."),
    h("pre", { id: "config-text" }, data.text));
}

// What agent-env config check finds (short of reaching hosted stores or starting plugins): its
// problems, then its warnings, above the settings they are about; nothing when it finds none.
function configCheck(check) {
  if (!check) return null;
  const problems = (check.problems || []).map((p) => h("li", {}, `${p.message} [${p.code}]`));
  const warnings = (check.warnings || []).map((w) => h("li", {}, w));
  return h("div", { id: "config-check" },
    problems.length ? h("div", { class: "error", role: "alert" },
      h("p", {}, `agent-env config check finds ${problems.length} problem${problems.length === 1 ? "" : "s"}:`),
      h("ul", {}, ...problems)) : null,
    warnings.length ? h("div", { class: "warning notice", role: "status" },
      h("p", {}, "Warnings:"), h("ul", {}, ...warnings)) : null);
}

// Whether a Task page's error is that no version of the task is stored while a bundle names it: a
// bundle's task that has not run here yet.
async function notStoredYet(error, id) {
  if (error.status !== 404 || String(error.message).includes("it may be in the store left out")) return false;
  try {
    const page = await api("/bundles?limit=500");
    return page.items.some((b) => (b.tasks || []).some((t) => t.id === id));
  } catch (_) {
    return false;
  }
}

// A bundle's task that has not run yet: its page exists once a run stores it.
function notRunYet(id) {
  return h("div", { class: "warning notice", id: "task-not-run", role: "status" },
    h("p", {}, "Task ", h("span", { class: "mono" }, id), " has not run yet: a task's page shows what its runs stored. Run it from ",
      link("/bundles", "Bundles"), "."));
}

// The pages about one thing, by the first part of their address.
const ONE_THING = ["tasks", "runs", "run-groups", "instances", "artifacts", "plugins"];

// Why nothing is served at this address: an id with a '/' left as it is (`/tasks/team/hello`) is
// told how the address writes it, with a link to the page it meant.
function notFoundText() {
  const match = /^\/([^/]+)\/(.+)$/.exec(location.pathname);
  if (match && ONE_THING.includes(match[1]) && match[2].includes("/")) {
    let id = match[2];
    try { id = decodeURIComponent(id); } catch (_) { /* shown as it is */ }
    const meant = `/${match[1]}/${enc(id)}`;
    return h("p", { id: "not-found-id" }, "Nothing is served at this address. An id in a page's address is one part of it, each '/' in it written %2F: the page of ",
      h("code", {}, id), " is ", link(meant, meant, { class: "mono", id: "encoded-link" }), ".");
  }
  return h("p", {}, "Nothing is served at this address. ", link("/", "Home"));
}

const views = { home, bundles, tasks, task, run, "run-group": runGroup, instance, artifacts, artifact, plugins, plugin, config };

// Draws the page's view (again, for a page restored from the back/forward cache).
async function start() {
  const alive = current();
  queryNotes.clear();
  const view = main.dataset.view;
  const id = main.dataset.id;
  if (!views[view]) {
    show(h("h1", {}, "Not found"), notFoundText());
    return;
  }
  const attempt = async () => {
    if (!alive()) return;
    try {
      await views[view](id);
    } catch (e) {
      if (!alive()) return;
      // The explorer did not answer: the notice says so, and the page is drawn once it does.
      if (e.lost) {
        contact.whenBack(attempt);
        return;
      }
      const notRun = view === "task" && await notStoredYet(e, id);
      if (!alive()) return;
      show(h("h1", {}, document.title.split(" · ")[0]), notRun ? notRunYet(id) : errorBox(e));
      // Not found while a store is left out, it may be in that store; a store that did not answer
      // (503) may answer soon: either is asked for again until it is read.
      const leftOut = e.status === 404 && String(e.message).includes("it may be in the store left out");
      if (leftOut || e.status === 503) setTimeout(attempt, RECHECK_MS);
    }
  };
  await attempt();
}

// Back (or Forward) to a page the browser kept: what it showed is as old as when it was left, and a
// button that started a run is still disabled. Its buttons are enabled again, and it is drawn anew.
window.addEventListener("pageshow", (event) => {
  if (!event.persisted) return;
  generation += 1;
  contact.forget();
  for (const button of document.querySelectorAll("button[data-busy]")) {
    button.disabled = false;
    delete button.dataset.busy;
  }
  start();
});

// Back (or Forward) between the pages of a list, which the page wrote into its address: drawn anew
// from the address.
window.addEventListener("popstate", () => {
  generation += 1;
  start();
});

explorerNav().catch(() => []);
start();
