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

  // The same words as the page's first render (leaderboard_tags.duration_words): "45 s", "3 min", "1 h 5 min".
  function words(seconds) {
    seconds = Math.max(0, Math.round(seconds));
    if (seconds < 60) return seconds + " s";
    const minutes = Math.round(seconds / 60);
    if (minutes < 60) return minutes + " min";
    return Math.floor(minutes / 60) + " h " + (minutes % 60) + " min";
  }

  function render(run) {
    const status = el("run-status");
    status.textContent = run.status_label;
    status.className = "status status-" + run.status.toLowerCase();
    el("run-stage").textContent = run.stage_detail || "";
    el("run-queue").textContent = run.queue_position ? "· position " + run.queue_position + " in the queue" : "";
    el("run-progress").value = run.progress;
    el("run-percent").textContent = Math.round(run.progress) + "%";
    el("run-elapsed").textContent = run.elapsed_seconds == null ? "" : words(run.elapsed_seconds) + " since it started";
    el("run-estimate").textContent = run.stage_remaining_seconds == null
      ? "" : "· about " + words(run.stage_remaining_seconds) + " left in this stage, at its pace so far";
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
