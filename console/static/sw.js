// The console's service worker: it shows the notifications the page asks
// for (a page alone may not, on Chrome for Android) and those the serve
// pushes when no tab is open (Web Push), and, when one is clicked, brings
// the console's tab forward and opens the Ask there.
self.addEventListener("install", function () { self.skipWaiting(); });
self.addEventListener("activate", function (e) { e.waitUntil(self.clients.claim()); });
self.addEventListener("notificationclick", function (e) {
  e.notification.close();
  var ask = e.notification.data && e.notification.data.ask;
  e.waitUntil(self.clients.matchAll({ type: "window", includeUncontrolled: true }).then(function (tabs) {
    for (var i = 0; i < tabs.length; i++) {
      if (new URL(tabs[i].url).origin === self.location.origin) {
        tabs[i].postMessage({ open: ask });
        return tabs[i].focus();
      }
    }
    return self.clients.openWindow("/#ask-" + ask);
  }));
});
// A push is one new Ask: {title, body, ask}. Its tag is the one a tab's
// own notification of the same Ask uses, so one replaces the other.
self.addEventListener("push", function (e) {
  var d = {};
  try { d = e.data ? e.data.json() : {}; } catch (x) { d = {}; }
  var title = d.title || "askops approvals";
  e.waitUntil(self.registration.showNotification(title, {
    body: d.body || "A request waits for you.",
    tag: d.ask ? "askops-" + d.ask : "askops",
    data: { ask: d.ask || "" }
  }));
});
