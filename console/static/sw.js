// The console's service worker: it only shows the notifications the page
// asks for (a page alone may not, on Chrome for Android) and, when one is
// clicked, brings the console's tab forward and opens the Ask there.
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
