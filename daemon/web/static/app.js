// jupcron status page: asks the JSON twins every few seconds and updates the page in
// place. Values only ever go in as text (textContent, data-* attributes, an <img> src
// the server made): nothing from the API is parsed as HTML.
"use strict";

(() => {
  const body = document.body;
  const refreshMs = Math.max(1, Number(body.dataset.refresh) || 5) * 1000;
  const offset = Math.max(0, Number(body.dataset.offset) || 0);
  const limit = Math.max(1, Number(body.dataset.limit) || 100);
  const STATUS = /^[a-z_]+$/;

  function fill(root, text) {
    for (const el of root.querySelectorAll("[data-k]")) {
      const value = text[el.dataset.k];
      el.textContent = value === undefined || value === null ? "" : String(value);
    }
  }

  function setStatus(el, status) {
    if (el) el.dataset.status = STATUS.test(status || "") ? status : "none";
  }

  async function getJSON(url) {
    const answer = await fetch(url, {
      credentials: "same-origin",
      cache: "no-store",
      headers: { Accept: "application/json" },
    });
    if (answer.status === 401) {
      window.location.assign("/"); // the sign-in form
      throw new Error("signed out");
    }
    if (!answer.ok) throw new Error(`${url}: HTTP ${answer.status}`);
    return answer.json();
  }

  // Keyed update: reuse the element of each key, clone the template for a new one,
  // keep the server's order, drop the ones that went away.
  function sync(container, templateId, items, keyOf, attr, update) {
    const existing = new Map();
    for (const el of container.children) existing.set(el.dataset[attr], el);
    const template = document.getElementById(templateId);
    let previous = null;
    for (const item of items) {
      const key = String(keyOf(item));
      let el = existing.get(key);
      if (el) {
        existing.delete(key);
      } else {
        el = template.content.firstElementChild.cloneNode(true);
        el.dataset[attr] = key;
      }
      update(el, item);
      const wanted = previous ? previous.nextElementSibling : container.firstElementChild;
      if (wanted !== el) container.insertBefore(el, wanted);
      previous = el;
    }
    for (const el of existing.values()) el.remove();
  }

  function showNode(el, node) {
    fill(el, node.text);
    el.dataset.role = !node.running ? "stale" : STATUS.test(node.role) ? node.role : "none";
    if (node.this) el.dataset.this = "yes";
    else delete el.dataset.this;
  }

  function showStatus(status) {
    fill(document.getElementById("facts"), status.text);
    const role = document.getElementById("role");
    role.textContent = status.text.role;
    role.dataset.role = STATUS.test(status.role || "") ? status.role : "none";
    document.getElementById("badge-dry").hidden = !status.dry_run;
    document.getElementById("badge-kill").hidden = !status.kill_switch;
    document.getElementById("badge-paused").hidden = !status.pauses.some((p) => p.all);
    document.getElementById("badge-degraded").hidden = !status.degraded;
    document.getElementById("badge-files").hidden = !status.plan_files || status.plan_files.in_sync;
    document.getElementById("updated").textContent = status.text.now;
    sync(document.getElementById("node-rows"), "node-row", status.daemons,
      (n) => n.node, "node", showNode);
    document.getElementById("pauses").hidden = status.pauses.length === 0;
    sync(document.getElementById("pause-rows"), "pause-row", status.pauses,
      (p) => (p.all ? "*" : p.plan), "scope", (el, p) => fill(el, p.text));
    const doubts = document.getElementById("doubts");
    doubts.hidden = status.in_doubt.length === 0;
    document.getElementById("doubt-help").textContent = status.in_doubt_help || "";
    sync(document.getElementById("doubt-rows"), "doubt-row", status.in_doubt,
      (r) => r.run_id, "run", (el, r) => fill(el, r.text));
    document.getElementById("runway").hidden = status.runway.length === 0;
    sync(document.getElementById("runway-rows"), "runway-row", status.runway,
      (w) => w.text.key, "runway", (el, w) => {
        fill(el, w.text);
        if (w.low) el.dataset.low = "yes";
        else delete el.dataset.low;
      });
  }

  function showPlan(el, plan) {
    fill(el, plan.text);
    setStatus(el.querySelector(".pill"), plan.last_status || "none");
    el.querySelector(".paused").hidden = !plan.paused;
    const rel = el.querySelector("[data-rel]");
    rel.dataset.at = plan.next_fires.length ? plan.next_fires[0] : "";
    const img = el.querySelector("img.chart");
    const chart = typeof plan.chart === "string" && plan.chart.startsWith("/charts/") ? plan.chart : null;
    if (chart && img.getAttribute("src") !== chart) img.setAttribute("src", chart);
    img.hidden = !chart;
    el.querySelector(".nofill").hidden = Boolean(chart);
  }

  function showPlans(plans) {
    document.getElementById("plan-range").textContent = plans.text.range;
    document.getElementById("no-plans").hidden = plans.plans.length > 0;
    sync(document.getElementById("plan-cards"), "plan-card", plans.plans,
      (p) => p.name, "plan", showPlan);
  }

  function showRuns(runs) {
    sync(document.getElementById("run-rows"), "run-row", runs.runs, (r) => r.run_id, "run",
      (el, r) => {
        fill(el, r.text);
        setStatus(el.querySelector(".pill"), r.status);
      });
  }

  function relative(ms) {
    const s = Math.round(Math.abs(ms) / 1000);
    const amount = s < 90 ? `${s} s` : s < 5400 ? `${Math.round(s / 60)} min`
      : s < 129600 ? `${Math.round(s / 3600)} h` : `${Math.round(s / 86400)} d`;
    return ms >= 0 ? `(in ${amount})` : "(due now)";
  }

  function tickClocks() {
    const now = Date.now();
    for (const el of document.querySelectorAll("[data-rel]")) {
      const at = Date.parse(el.dataset.at || "");
      el.textContent = Number.isNaN(at) ? "" : relative(at - now);
    }
  }

  function live(ok) {
    document.getElementById("live").dataset.live = ok ? "yes" : "no";
  }

  async function refresh() {
    try {
      const [status, plans, runs] = await Promise.all([
        getJSON("/api/status"),
        getJSON(`/api/plans?offset=${offset}&limit=${limit}`),
        getJSON("/api/runs"),
      ]);
      showStatus(status);
      showPlans(plans);
      showRuns(runs);
      tickClocks();
      live(true);
    } catch (problem) {
      live(false); // shown on the page; the next turn tries again
    } finally {
      window.setTimeout(refresh, refreshMs);
    }
  }

  tickClocks();
  window.setInterval(tickClocks, 1000);
  window.setTimeout(refresh, refreshMs);
})();
