// Follows a run live: polls its status endpoint every two seconds and updates the page in place,
// until the run is done, failed or cancelled.
(function () {
  "use strict";
  const card = document.getElementById("run-status-card");
  const initial = document.getElementById("run-status-data");
  if (!card || !initial) return;
  const url = card.dataset.statusUrl;
  const el = (id) => document.getElementById(id);
  const POLL_MS = 2000;

  function render(run) {
    const status = el("run-status");
    status.textContent = run.status_label;
    status.className = "status status-" + run.status.toLowerCase();
    el("run-stage").textContent = run.stage_detail || "";
    el("run-queue").textContent = run.queue_position ? "· position " + run.queue_position + " in the queue" : "";
    el("run-progress").value = run.progress;
    el("run-percent").textContent = Math.round(run.progress) + "%";
    const message = el("run-message");
    message.hidden = !run.message;
    message.classList.toggle("failed", Boolean(run.failure_category));
    message.textContent = (run.failure_category ? run.failure_category_label + ": " : "") + run.message;
    const log = el("run-log");
    if (log.textContent !== run.log_tail) {
      const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
      log.textContent = run.log_tail;
      if (atBottom) log.scrollTop = log.scrollHeight;
    }
    const stages = el("run-stages").tBodies[0];
    stages.replaceChildren(...Object.entries(run.stage_timestamps).map(([stage, when]) => {
      const row = document.createElement("tr");
      for (const text of [stage, String(when).slice(0, 19)]) {
        const cell = document.createElement("td");
        cell.textContent = text;
        row.appendChild(cell);
      }
      return row;
    }));
    el("run-attempts").textContent = run.attempts;
    el("run-finished").hidden = run.status !== "DONE";
    const cancel = el("cancel-form");
    if (cancel && run.is_terminal) cancel.hidden = true;
    card.dataset.status = run.status;
  }

  async function poll() {
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" }, cache: "no-store" });
      if (response.ok) {
        const run = await response.json();
        render(run);
        if (run.is_terminal) return;
      }
    } catch (error) {
      // The server may be restarting; the next poll tries again.
    }
    window.setTimeout(poll, POLL_MS);
  }

  const run = JSON.parse(initial.textContent);
  render(run);
  el("run-log").scrollTop = el("run-log").scrollHeight;
  if (!run.is_terminal) window.setTimeout(poll, POLL_MS);
})();
