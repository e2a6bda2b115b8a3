// The console's only script: when the server says something changed, fetch
// the re-rendered list and swap it in, keeping any deny reason being typed.
(function () {
  "use strict";
  var status = document.getElementById("status");
  var busy = false, again = false;

  function reasons() {
    var kept = {};
    document.querySelectorAll("form[data-ask] input[name=reason]").forEach(function (i) {
      kept[i.form.dataset.ask] = { value: i.value, focused: document.activeElement === i };
    });
    return kept;
  }

  function restore(kept) {
    document.querySelectorAll("form[data-ask] input[name=reason]").forEach(function (i) {
      var k = kept[i.form.dataset.ask];
      if (!k) return;
      i.value = k.value;
      if (k.focused) i.focus();
    });
  }

  // Times are rendered in UTC; show them in the reader's own zone (a
  // session's start, class clock, as the time of day alone).
  function localTimes() {
    document.querySelectorAll("time[datetime]").forEach(function (t) {
      var d = new Date(t.dateTime);
      if (isNaN(d)) return;
      t.title = t.textContent;
      t.textContent = t.classList.contains("clock") ? d.toLocaleTimeString([], {hour: "2-digit", minute: "2-digit"}) : d.toLocaleString();
    });
  }
  localTimes();

  // "8m14s left" counts down between renders, in the server's wording
  // (Go's duration, to the second).
  function countdowns() {
    var now = Date.now();
    document.querySelectorAll(".left[data-deadline]").forEach(function (el) {
      var s = Math.round((Date.parse(el.dataset.deadline) - now) / 1000);
      if (isNaN(s)) return;
      if (s <= 0) { el.textContent = "now"; return; }
      var h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), r = s % 60;
      el.textContent = (h ? h + "h" + m + "m" : m ? m + "m" : "") + r + "s";
    });
  }
  countdowns();
  setInterval(countdowns, 1000);

  // "Show all" unfolds a long call; which are open survives the list
  // being swapped in again. Keyed by the Ask's id and the code's place.
  var opened = {};
  function foldKey(code) {
    var owner = code.closest("[data-ask], tr[id]");
    var all = owner ? owner.querySelectorAll(".code") : [];
    return (owner ? (owner.dataset.ask || owner.id) : "") + "/" + Array.prototype.indexOf.call(all, code);
  }
  function setOpen(code, open) {
    code.classList.toggle("open", open);
    var b = code.querySelector("button.show-all");
    if (b) {
      b.setAttribute("aria-expanded", open ? "true" : "false");
      b.textContent = open ? "Fold" : b.dataset.label;
    }
  }
  function restoreFolds() {
    document.querySelectorAll(".code.folded").forEach(function (c) { if (opened[foldKey(c)]) setOpen(c, true); });
  }
  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("button.show-all");
    if (!b) return;
    var code = b.closest(".code"), open = !code.classList.contains("open");
    opened[foldKey(code)] = open;
    setOpen(code, open);
  });

  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do {
        again = false;
        var r = await fetch("/live", { credentials: "same-origin", cache: "no-store" });
        if (!r.ok) { status.textContent = "signed out: reload"; status.className = "down"; return; }
        var html = await r.text();
        var kept = reasons();
        document.getElementById("live").outerHTML = html;
        restore(kept);
        restoreFolds();
        localTimes();
        countdowns();
      } while (again);
    } finally { busy = false; }
  }

  var events = new EventSource("/events");
  events.addEventListener("changed", function () {
    status.textContent = "live"; status.className = "";
    refresh();
  });
  events.onerror = function () { status.textContent = "reconnecting…"; status.className = "down"; };
  // A handle for tests that make a page stale by closing its stream.
  window.askopsEvents = events;
})();
