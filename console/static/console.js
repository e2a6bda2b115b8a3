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

  // The number waiting leads the tab's title, so a tab among many says
  // it. An Ask this tab has not seen before (not those already listed
  // when it opened) rings, when the reader turned the sound on, and
  // raises a notification, when they turned those on.
  var seen = null;
  function waiting() {
    var live = document.getElementById("live");
    var n = live ? parseInt(live.dataset.waiting, 10) || 0 : 0;
    document.title = (n ? "(" + n + ") " : "") + "askops approvals";
    var fresh = [], first = seen === null;
    seen = seen || {};
    document.querySelectorAll("section.ask[data-ask]").forEach(function (s) {
      if (!seen[s.dataset.ask] && !first) fresh.push(s);
      seen[s.dataset.ask] = true;
    });
    if (fresh.length && setting("sound")) beep();
    fresh.forEach(announce);
  }

  function setting(name) { try { return localStorage.getItem("askops." + name) === "on"; } catch (e) { return false; } }
  function remember(name, on) { try { localStorage.setItem("askops." + name, on ? "on" : "off"); } catch (e) {} }

  var audio = null;
  function beep() {
    try {
      audio = audio || new (window.AudioContext || window.webkitAudioContext)();
      audio.resume();
      var o = audio.createOscillator(), g = audio.createGain(), t = audio.currentTime;
      o.frequency.value = 880;
      g.gain.setValueAtTime(0.2, t);
      g.gain.exponentialRampToValueAtTime(0.001, t + 0.35);
      o.connect(g); g.connect(audio.destination);
      o.start(t); o.stop(t + 0.35);
    } catch (e) { /* no audio here: the title and the notification still tell */ }
  }

  // A browser lets a page make sound only after the reader touched it:
  // the first tap or key after a reload readies the tone.
  function readyAudio() {
    if (!setting("sound")) return;
    try {
      audio = audio || new (window.AudioContext || window.webkitAudioContext)();
      audio.resume();
    } catch (e) { /* no audio here */ }
  }
  document.addEventListener("pointerdown", readyAudio, { passive: true });
  document.addEventListener("keydown", readyAudio);

  // Notifications need a secure context (HTTPS, or this machine's own
  // address); Chrome on Android shows them only through a service worker,
  // which also brings the tab forward when one is clicked.
  var canNotify = "Notification" in window && window.isSecureContext;
  var worker = null;
  function startWorker() {
    if (worker || !("serviceWorker" in navigator)) return Promise.resolve(worker);
    return navigator.serviceWorker.register("/sw.js").then(function () { return navigator.serviceWorker.ready; })
      .then(function (reg) { worker = reg; return reg; }, function () { return null; });
  }
  function announce(section) {
    if (!canNotify || !setting("notify") || Notification.permission !== "granted") return;
    var id = section.dataset.ask;
    // What it does first, as on the card: the effect lines, one after another.
    var head = section.querySelector("h3"), lines = [];
    section.querySelectorAll(".effects li, p.runs").forEach(function (l) { lines.push(l.textContent.replace(/\s+/g, " ").trim()); });
    var title = "askops: " + (head ? head.textContent.trim() : "a request") + " waits for you";
    var body = lines.join(" · ").slice(0, 240);
    var opts = { body: body, tag: "askops-" + id, data: { ask: id } };
    if (worker) { worker.showNotification(title, opts); return; }
    function fromPage() {
      try {
        var n = new Notification(title, opts);
        n.onclick = function () { window.focus(); openAsk(id); n.close(); };
      } catch (e) { startWorker().then(function (reg) { if (reg) reg.showNotification(title, opts); }); }
    }
    // The worker may be running before startWorker's promise has handed
    // it over (an Ask arriving right after "Notify me"): ask the browser,
    // so the notification is the worker's (it outlives the tab, and its
    // click brings the tab forward) whenever there is one.
    if (!("serviceWorker" in navigator)) { fromPage(); return; }
    navigator.serviceWorker.getRegistration().then(function (reg) {
      if (reg && reg.active) { worker = worker || reg; reg.showNotification(title, opts); } else { fromPage(); }
    }, fromPage);
  }
  // openAsk brings an Ask's card into view and marks it.
  function openAsk(id) {
    var el = id && document.getElementById("ask-" + id);
    if (!el) return;
    if (location.hash !== "#ask-" + id) history.replaceState(null, "", "#ask-" + id);
    document.querySelectorAll("section.ask.opened").forEach(function (s) { s.classList.remove("opened"); });
    el.classList.add("opened");
    el.scrollIntoView({ block: "start" });
  }
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.addEventListener("message", function (e) { if (e.data && e.data.open) { window.focus(); openAsk(e.data.open); } });
  }

  var notifyBox = document.getElementById("notify"), soundBox = document.getElementById("sound"), note = document.getElementById("notify-note");

  // Web Push (when the serve has it on): "Notify me" also subscribes this
  // device with the serve's key and hands the subscription to the serve,
  // so a new Ask reaches it with no tab open. The permission is asked on
  // the reader's click only.
  var alerts = document.getElementById("alerts");
  var pushOn = !!(alerts && alerts.dataset.push === "on" && "PushManager" in window);
  function csrf() { var i = document.querySelector("input[name=csrf]"); return i ? i.value : ""; }
  function postForm(path, fields) {
    var body = new URLSearchParams(fields);
    body.set("csrf", csrf());
    return fetch(path, { method: "POST", credentials: "same-origin", body: body });
  }
  function fromB64(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    var raw = atob(s), out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  }
  function toB64(buf) {
    var b = new Uint8Array(buf), s = "";
    for (var i = 0; i < b.length; i++) s += String.fromCharCode(b[i]);
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function subscribePush(reg) {
    if (!pushOn || !reg) return Promise.resolve();
    return fetch("/push/key", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { if (!r.ok) throw new Error("GET /push/key: " + r.status); return r.json(); })
      .then(function (k) {
        return reg.pushManager.getSubscription().then(function (old) {
          // One made with another key (the serve's changed) is of no use.
          var key = old && old.options && old.options.applicationServerKey;
          if (old && key && toB64(key) !== k.public_key) return old.unsubscribe().then(function () { return null; });
          return old;
        }).then(function (old) {
          return old || reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: fromB64(k.public_key) });
        });
      })
      .then(function (sub) {
        var j = sub.toJSON();
        return postForm("/push/subscribe", { endpoint: j.endpoint, p256dh: j.keys.p256dh, auth: j.keys.auth });
      })
      .then(function (r) {
        if (!r.ok) throw new Error("POST /push/subscribe: " + r.status);
        note.textContent = "(also with no tab open)";
      })
      .catch(function (e) {
        note.textContent = "(while a tab is open: this browser's push service is out of reach)";
        window.askopsPushError = String(e);
      });
  }
  function unsubscribePush() {
    if (!pushOn || !("serviceWorker" in navigator)) return;
    navigator.serviceWorker.getRegistration().then(function (reg) {
      return reg && reg.pushManager.getSubscription();
    }).then(function (sub) {
      if (!sub) return;
      postForm("/push/unsubscribe", { endpoint: sub.endpoint });
      return sub.unsubscribe();
    }).catch(function () { /* nothing kept: the serve forgets it at its push service's word */ });
  }
  if (soundBox) {
    soundBox.checked = setting("sound");
    soundBox.addEventListener("change", function () { remember("sound", soundBox.checked); if (soundBox.checked) beep(); });
  }
  if (notifyBox) {
    if (!canNotify) {
      notifyBox.disabled = true;
      note.textContent = "(notifications need HTTPS or this machine's own address)";
    } else {
      notifyBox.checked = setting("notify") && Notification.permission === "granted";
      if (notifyBox.checked) startWorker().then(subscribePush);
      notifyBox.addEventListener("change", function () {
        remember("notify", notifyBox.checked);
        note.textContent = "";
        if (!notifyBox.checked) { unsubscribePush(); return; }
        Notification.requestPermission().then(function (p) {
          if (p === "granted") { startWorker().then(subscribePush); return; }
          notifyBox.checked = false;
          remember("notify", false);
          note.textContent = "(the browser blocks notifications from this page)";
        });
      });
    }
  }
  waiting();
  if (location.hash.indexOf("#ask-") === 0) openAsk(location.hash.slice(5));

  // A fetch that fails (the serve restarting, a dropped connection, a
  // 5xx) is tried again: the event that asked for it comes only once, and
  // a page left stale would not show (or announce) an Ask that waits.
  // Only a 401 means the session is gone.
  var retry = null;
  function retryLater(why) {
    status.textContent = "reconnecting… (" + why + ")"; status.className = "down";
    if (!retry) retry = setTimeout(function () { retry = null; refresh(); }, 2000);
  }
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do {
        again = false;
        var r, html;
        try {
          r = await fetch("/live", { credentials: "same-origin", cache: "no-store" });
          if (r.status === 401) { status.textContent = "signed out: reload"; status.className = "down"; return; }
          if (!r.ok) { retryLater("the console answered " + r.status); return; }
          html = await r.text();
        } catch (e) {
          retryLater("the console is out of reach");
          return;
        }
        if (events.readyState === EventSource.OPEN) { status.textContent = "live"; status.className = ""; }
        var kept = reasons();
        document.getElementById("live").outerHTML = html;
        restore(kept);
        restoreFolds();
        waiting();
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
