// The run page: the step panel (a node's statement, log, error and attempts), live states
// (polling the run's state while it goes on), and the resume and stop buttons.
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
  let openStep = null;

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
    for (const other of document.querySelectorAll("#dag g.node.selected")) other.classList.remove("selected");
    node.classList.add("selected");
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
    $("resume").hidden = !run.resumable;
    $("stop").hidden = !run.stoppable;
    for (const [name, [state, title]] of Object.entries(run.steps)) {
      const node = nodes.get(name);
      if (!node) continue;
      const changed = node.dataset.state !== state;
      if (changed) node.dataset.state = state; // only what changed: no restyle of every node
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
    if (await act($("stop"), "stop")) $("action-note").textContent = "stopping…";
  });

  if (!ENDED.has($("run-state").dataset.state)) setTimeout(poll, POLL_MS);
  const opened = /^#step=(.+)$/.exec(window.location.hash);
  if (opened) showStep(decodeURIComponent(opened[1]));
})();
