// The editor page of sqlml ui: runs the statements (Run, Ctrl-Enter), shows their progress
// in #progress while they run (a training's rounds and metric) and their result in #result; completes keywords, tables, columns, estimators and attributes as the
// user types (Ctrl-Space asks for every completion at the cursor).
"use strict";

(() => {
  const form = document.getElementById("editor");
  const sql = document.getElementById("sql");
  const runButton = document.getElementById("run");
  const cancelButton = document.getElementById("cancel");
  const result = document.getElementById("result");
  const menu = document.getElementById("completions");
  let items = [];
  let selected = 0;
  let asked = 0; // the number of the last completion request: older answers are dropped
  let engaged = false; // whether Enter accepts: the menu was asked for, or moved in
  let timer = null;

  let retry = null; // a run the busy database put off, to be tried again
  const progress = document.getElementById("progress");
  const PROGRESS_MS = 500;
  let watching = null; // the timer of the next read of the run's progress

  // Show the open stages of the run going on (GET /editor/progress) until it ends.
  async function watch() {
    const response = await fetch("/editor/progress", { headers: { Accept: "application/json" } }).catch(() => null);
    const answer = response && response.ok ? await response.json().catch(() => null) : null;
    if (watching === null) return; // the run ended meanwhile
    if (answer) {
      progress.textContent = answer.progress.join("\n");
      progress.hidden = answer.progress.length === 0;
    }
    watching = setTimeout(watch, PROGRESS_MS);
  }

  async function run() {
    clearTimeout(retry);
    hideMenu();
    runButton.disabled = true;
    cancelButton.hidden = false;
    result.setAttribute("aria-busy", "true");
    watching = setTimeout(watch, PROGRESS_MS);
    try {
      const response = await fetch("/editor/run", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ sql: sql.value }),
      });
      const answer = await response.json().catch(() => null);
      if (response.status === 503 && answer && answer.busy) {
        // The database is busy (another process has it open) and nothing ran: try again.
        const text = sql.value;
        showError(`${answer.error}: trying again in ${answer.retry} s`);
        retry = setTimeout(() => { if (sql.value === text) run(); }, answer.retry * 1000);
      } else if (answer && typeof answer.html === "string") {
        result.innerHTML = answer.html;
        pointAtError();
      } else {
        showError(answer && answer.error ? answer.error : `the server answered ${response.status}`);
      }
    } catch (error) {
      showError(`the server cannot be reached (${error.message})`);
    } finally {
      clearTimeout(watching);
      watching = null;
      progress.hidden = true;
      runButton.disabled = false;
      cancelButton.hidden = true;
      result.removeAttribute("aria-busy");
    }
  }

  // Select the character the first error is at (its line and column, counted from 1).
  function pointAtError() {
    const error = document.getElementById("error");
    if (!error || !error.dataset.line) return;
    const lines = sql.value.split("\n");
    const line = Math.min(Number(error.dataset.line), lines.length);
    let offset = Number(error.dataset.column) - 1;
    for (let i = 0; i < line - 1; i++) offset += lines[i].length + 1;
    sql.focus();
    sql.setSelectionRange(offset, Math.min(offset + 1, sql.value.length));
  }

  function showError(message) {
    const p = document.createElement("p");
    p.id = "error";
    p.className = "error";
    p.textContent = message;
    result.replaceChildren(p);
  }

  // Ask for the completions at the cursor; an answer is shown only if the text and cursor are
  // still those it was asked for. ``typing``: asked while typing (only where a name is
  // expected, and never the word already typed in full), else by Ctrl-Space.
  async function complete(typing) {
    const number = ++asked;
    const text = sql.value;
    const cursor = sql.selectionStart;
    const params = new URLSearchParams({
      text, cursor: String(cursor), typing: typing ? "1" : "0",
    });
    const response = await fetch(`/editor/complete?${params}`).catch(() => null);
    if (!response || !response.ok || number !== asked) return;
    const found = await response.json();
    if (number !== asked || sql.value !== text || sql.selectionStart !== cursor) return;
    const typed = (item) => text.slice(cursor - item.replace, cursor) === item.text;
    items = typing && found.length === 1 && typed(found[0]) ? [] : found;
    selected = 0;
    engaged = !typing;
    if (items.length === 0) hideMenu();
    else showMenu();
  }

  function showMenu() {
    menu.replaceChildren(
      ...items.map((item, index) => {
        const li = document.createElement("li");
        li.setAttribute("role", "option");
        li.setAttribute("aria-selected", String(index === selected));
        li.dataset.index = String(index);
        const text = document.createElement("span");
        text.className = "text";
        text.textContent = item.text;
        const meta = document.createElement("span");
        meta.className = "meta";
        meta.textContent = item.meta;
        li.append(text, meta);
        return li;
      }),
    );
    const { top, left } = caret();
    menu.style.top = `${top}px`;
    menu.style.left = `${left}px`;
    menu.hidden = false;
    menu.children[selected].scrollIntoView({ block: "nearest" });
  }

  function hideMenu() {
    menu.hidden = true;
    items = [];
  }

  function accept(index) {
    const item = items[index];
    const end = sql.selectionStart;
    const start = end - item.replace;
    sql.setRangeText(item.text, start, end, "end");
    hideMenu();
    sql.focus();
  }

  // Where the caret is, below its line, relative to the textarea's box: measured on a copy of
  // the text before it in a hidden element styled as the textarea.
  function caret() {
    const style = getComputedStyle(sql);
    const mirror = document.createElement("div");
    for (const name of ["font", "padding", "border", "boxSizing", "width", "lineHeight", "tabSize"]) {
      mirror.style[name] = style[name];
    }
    Object.assign(mirror.style, {
      position: "absolute", visibility: "hidden", whiteSpace: "pre-wrap", overflowWrap: "break-word",
    });
    mirror.textContent = sql.value.slice(0, sql.selectionStart);
    const mark = document.createElement("span");
    mark.textContent = "\u200b";
    mirror.append(mark);
    document.body.append(mirror);
    const top = mark.offsetTop + mark.offsetHeight - sql.scrollTop + 2;
    const left = Math.min(mark.offsetLeft, sql.clientWidth - 200);
    mirror.remove();
    return { top: sql.offsetTop + top, left: sql.offsetLeft + Math.max(left, 0) };
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run();
  });

  cancelButton.addEventListener("click", () => {
    fetch("/editor/cancel", { method: "POST" });
  });

  sql.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      run();
    } else if (event.key === " " && event.ctrlKey) {
      event.preventDefault();
      complete(false);
    } else if (!menu.hidden) {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        selected = (selected + (event.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
        engaged = true;
        showMenu();
      } else if (event.key === "Tab" || (event.key === "Enter" && engaged && !event.shiftKey)) {
        event.preventDefault();
        accept(selected);
      } else if (event.key === "Escape" || event.key === "Enter") {
        hideMenu();
      }
    }
  });

  sql.addEventListener("input", (event) => {
    clearTimeout(timer);
    asked++; // an answer on its way is for the text before this change
    hideMenu();
    if (event.inputType && !event.inputType.startsWith("insert")) return;
    timer = setTimeout(() => complete(true), 150);
  });

  sql.addEventListener("blur", () => setTimeout(hideMenu, 150));

  menu.addEventListener("mousedown", (event) => {
    const li = event.target.closest("li");
    if (li) {
      event.preventDefault();
      accept(Number(li.dataset.index));
    }
  });
})();
