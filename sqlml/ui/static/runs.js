// The run page: the step panel (a node's statement, progress, log, error and attempts), live
// states (polling the run's state while it goes on, and the open step's details and log),
// finding a step by name, zooming the DAG or showing its steps as a list, and the resume
// and stop buttons. A run that failed opens on its (first) failed step.
"use strict";
(function () {
  const header = document.getElementById("run");
  if (!header) return;
  const runId = header.dataset.run;
  const base = "/runs/" + encodeURIComponent(runId);
  const ENDED = new Set(["succeeded", "failed", "cancelled", "lost"]);
  const POLL_MS = 1000;
  const $ = (id) => document.getElementById(id);
  const nodes = new Map();
  for (const node of document.querySelectorAll("#dag g.node")) nodes.set(node.dataset.step, node);
  const rows = new Map(); // the list's rows by step, once it has been shown
  let openStep = null;
  let stopping = false;

  function setState(element, state) {
    element.dataset.state = state;
    element.textContent = state;
  }

  async function json(url, options) {
    const response = await fetch(url, Object.assign({ headers: { Accept: "application/json" } }, options));
    const body = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) throw new Error(body.error + (body.hint ? " (hint: " + body.hint + ")" : ""));
    return body;
  }

  async function showStep(name) {
    const node = nodes.get(name);
    if (!node) return;
    if (openStep !== name) {
      for (const other of document.querySelectorAll("#dag .selected, #step-list .selected")) other.classList.remove("selected");
      node.classList.add("selected");
      if (rows.has(name)) rows.get(name).classList.add("selected");
    }
    openStep = name;
    const stepUrl = base + "/steps/" + encodeURIComponent(name);
    const [details, log] = await Promise.all([
      json(stepUrl),
      fetch(stepUrl + "/log").then((response) => response.text()),
    ]);
    if (openStep !== name) return;
    $("step").hidden = false;
    $("step-name").textContent = details.name;
    setState($("step-state"), details.state);
    $("step-times").textContent = details.started
      ? "started " + details.started + (details.duration ? ", took " + details.duration : "")
      : "did not start";
    const progress = $("step-progress");
    progress.hidden = !(details.progress && details.progress.length);
    progress.textContent = (details.progress || []).join("\n");
    $("step-attempts").textContent = details.attempts ? "attempts: " + details.attempts : "";
    const retried = details.failed_attempts.length > 1 || details.state === "succeeded";
    $("step-failed-attempts").replaceChildren(
      ...(retried ? details.failed_attempts : []).map((failed) => {
        const item = document.createElement("li");
        item.value = failed.attempt;
        item.textContent = failed.at + " attempt " + failed.attempt + " failed: " + failed.error;
        return item;
      }),
    );
    const error = $("step-error");
    error.hidden = !details.error;
    error.textContent = details.error || "";
    if (details.hint) {
      const hint = document.createElement("span");
      hint.className = "hint";
      hint.textContent = "hint: " + details.hint;
      error.append(document.createElement("br"), hint);
    }
    $("step-model").hidden = !details.model;
    if (details.model) {
      $("model-link").href = details.model.url;
      $("model-link").textContent = "model " + details.model.name + " version " + details.model.version;
    }
    const statement = $("step-statement");
    statement.textContent = details.statement || "(" + (details.kind || "step") + ": no statement)";
    if (details.line) statement.dataset.line = details.line;
    else delete statement.dataset.line;
    $("step-where").textContent = details.line ? "line " + details.line + ", column " + details.column : "";
    $("step-log").textContent = log;
    history.replaceState(null, "", "#step=" + encodeURIComponent(name));
  }

  // Find a step by name: the one named so, else the first whose name starts with the text and
  // a dash (s417 finds s417-train), else the first whose name holds it.
  function find(text) {
    const wanted = text.trim().toLowerCase();
    if (!wanted) return null;
    const names = [...nodes.keys()];
    const lower = (name) => name.toLowerCase();
    return (
      names.find((name) => lower(name) === wanted) ||
      names.find((name) => lower(name).startsWith(wanted + "-")) ||
      names.find((name) => lower(name).includes(wanted)) ||
      null
    );
  }

  $("step-find").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("step-search").value;
    const name = find(text);
    $("step-found").textContent = name ? "" : "no step is named like " + JSON.stringify(text.trim());
    if (!name) return;
    const shown = $("step-list").hidden ? nodes.get(name) : rows.get(name);
    shown.scrollIntoView({ block: "center", inline: "center" });
    showStep(name);
  });

  // Zoom: the drawing's size, its viewBox unchanged; "fit" makes it as wide as its frame.
  const dag = $("dag");
  const drawn = { width: Number(dag.getAttribute("width")), height: Number(dag.getAttribute("height")) };
  let zoom = 1;
  function zoomTo(factor) {
    zoom = Math.min(4, Math.max(0.05, factor));
    dag.setAttribute("width", String(drawn.width * zoom));
    dag.setAttribute("height", String(drawn.height * zoom));
    dag.dataset.zoom = zoom.toFixed(3);
  }
  $("zoom-in").addEventListener("click", () => zoomTo(zoom * 1.25));
  $("zoom-out").addEventListener("click", () => zoomTo(zoom / 1.25));
  $("zoom-fit").addEventListener("click", () => zoomTo(($("dag-frame").clientWidth - 2) / drawn.width));

  // The steps as a table (name, state, the steps each waits for), made when first shown.
  function list() {
    for (const [name, node] of nodes) {
      const row = document.createElement("tr");
      row.dataset.step = name;
      const link = document.createElement("a");
      link.href = "#step=" + encodeURIComponent(name);
      link.textContent = name;
      const state = document.createElement("span");
      state.className = "state";
      setState(state, node.dataset.state);
      const cells = [link, state, (node.dataset.after || "").split(" ").join(", ")].map((content) => {
        const cell = document.createElement("td");
        cell.append(content);
        return cell;
      });
      row.append(...cells);
      if (name === openStep) row.classList.add("selected");
      rows.set(name, row);
    }
    $("step-list").tBodies[0].append(...rows.values());
  }

  $("show-list").addEventListener("click", () => {
    if (rows.size === 0) list();
    const listed = $("step-list").hidden;
    $("step-list").hidden = !listed;
    dag.style.display = listed ? "none" : "";
    $("show-list").setAttribute("aria-pressed", String(listed));
    $("show-list").textContent = listed ? "DAG" : "List";
    for (const button of document.querySelectorAll(".zoom button")) button.disabled = listed;
  });
  $("step-list").addEventListener("click", (event) => {
    const row = event.target.closest("tr[data-step]");
    if (!row) return;
    event.preventDefault();
    showStep(row.dataset.step);
  });

  document.getElementById("dag").addEventListener("click", (event) => {
    const node = event.target.closest("g.node");
    if (node) showStep(node.dataset.step);
  });
  document.getElementById("dag").addEventListener("keydown", (event) => {
    const node = event.target.closest("g.node");
    if (node && (event.key === "Enter" || event.key === " ")) showStep(node.dataset.step);
  });

  function applyState(run) {
    setState($("run-state"), run.state);
    $("run-duration").textContent = run.duration;
    if ($("run-ended")) {
      const heard = run.state === "lost" ? "last heard of at " : "ended ";
      $("run-ended").textContent = run.ended ? ", " + heard + run.ended : "";
    }
    if (stopping && ENDED.has(run.state)) {
      $("action-note").textContent = run.state === "cancelled" ? "stopped" : "it " + run.state + " before it stopped";
      stopping = false;
    }
    $("resume").hidden = !run.resumable;
    $("stop").hidden = !run.stoppable;
    for (const [name, [state, title]] of Object.entries(run.steps)) {
      const node = nodes.get(name);
      if (!node) continue;
      const changed = node.dataset.state !== state;
      if (changed) node.dataset.state = state; // only what changed: no restyle of every node
      const row = rows.get(name);
      if (changed && row) setState(row.querySelector(".state"), state);
      const hover = node.querySelector("title");
      if (hover.textContent !== title) hover.textContent = title;
      if (name === openStep && (changed || state === "running")) showStep(name);
    }
  }

  async function poll() {
    try {
      const run = await json(base + "/state");
      applyState(run);
      if (ENDED.has(run.state)) return;
    } catch (error) {
      $("action-error").textContent = "live updates paused: " + error.message;
    }
    setTimeout(poll, POLL_MS);
  }

  async function act(button, action) {
    $("action-error").textContent = "";
    button.disabled = true;
    try {
      return await json(base + "/" + action, { method: "POST" });
    } catch (error) {
      $("action-error").textContent = error.message;
      return null;
    } finally {
      button.disabled = false;
    }
  }

  $("resume").addEventListener("click", async () => {
    const started = await act($("resume"), "resume");
    if (started) window.location.assign(started.url);
  });
  $("stop").addEventListener("click", async () => {
    const asked = "Stop run " + runId + "? Its running statements stop and commit nothing; it can be resumed.";
    if (!window.confirm(asked)) return;
    stopping = true; // before the answer: a poll may see the run end first
    $("action-note").textContent = "stopping…";
    if (!(await act($("stop"), "stop"))) {
      stopping = false;
      $("action-note").textContent = "";
    }
  });

  if (!ENDED.has($("run-state").dataset.state)) setTimeout(poll, POLL_MS);
  const opened = /^#step=(.+)$/.exec(window.location.hash);
  const failed = document.querySelector('#dag g.node[data-state="failed"]');
  if (opened) showStep(decodeURIComponent(opened[1]));
  else if (failed) showStep(failed.dataset.step);
})();
